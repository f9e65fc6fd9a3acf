//! `schedlab campaign`: a per-boot kernel A/B campaign. `start` records the plan (two kernel
//! releases, an even number of boots in ABBA order, what to run on each boot) in the database;
//! `next`, run once after each boot (e.g. from a boot-time unit), runs this boot's slot if the
//! running kernel is the one the slot expects, and says which kernel to boot next. State lives in
//! the database, so the campaign resumes after every reboot; schedlab never reboots a machine
//! unless `next --reboot-cmd` tells it how. A `--vm` campaign boots its kernels in QEMU guests
//! instead: `run` boots every remaining slot in turn ([`crate::vm`]), each failed boot recorded
//! with the console's tail, and the same slots, labels and pairs come out of it.
//!
//! By concern: [`start`] plans a campaign ([`guests`] reads a `--vm` campaign's guests from its
//! flags), [`next`] runs a reboot campaign's slot on this boot, [`run`] boots a `--vm`
//! campaign's slots in guests, and [`status`] tells how far a campaign got; what they share (the
//! stored plan and progress, a slot's plan and its record) is in [`state`].
mod guests;
mod next;
mod run;
mod start;
mod state;
mod status;

use std::process::ExitCode;

use crate::cli::{CampaignAction, CampaignArgs};
use crate::failure::Failure;

pub fn campaign(args: &CampaignArgs) -> Result<ExitCode, Failure> {
    match &args.action {
        CampaignAction::Start(a) => start::start(a),
        CampaignAction::Next(a) => next::next(a),
        CampaignAction::Run(a) => run::run(a),
        CampaignAction::Status(a) => status::status(a),
    }
}
