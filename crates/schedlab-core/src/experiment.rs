//! Interleaved A/B experiments — `schedlab ab` within one boot, `schedlab campaign` across boots —
//! and the one order their visits follow.
use crate::record::Arm;

/// Where visit `slot` (0-based, counting every visit of either arm) of an interleaved experiment
/// falls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbbaSlot {
    /// A B, B A, A B, …: a drift that is slow next to one round weighs on both arms alike.
    pub arm: Arm,
    /// The pair of visits, one per arm, that are compared with each other.
    pub round: u32,
}

impl AbbaSlot {
    pub fn of(slot: u32) -> Self {
        let round = slot / 2;
        let first_in_round = slot.is_multiple_of(2);
        let a_first = round.is_multiple_of(2);
        let arm = if first_in_round == a_first {
            Arm::A
        } else {
            Arm::B
        };
        AbbaSlot { arm, round }
    }
}

/// The label of one arm's runs, so `compare NAME-a NAME-b` reads an experiment's two arms.
pub fn arm_label(name: &str, arm: Arm) -> String {
    format!("{name}-{}", arm.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visits_follow_abba_in_rounds_of_two() {
        let slots: Vec<(Arm, u32)> = (0..8).map(AbbaSlot::of).map(|s| (s.arm, s.round)).collect();
        assert_eq!(
            slots,
            [
                (Arm::A, 0),
                (Arm::B, 0),
                (Arm::B, 1),
                (Arm::A, 1),
                (Arm::A, 2),
                (Arm::B, 2),
                (Arm::B, 3),
                (Arm::A, 3)
            ]
        );
    }

    #[test]
    fn every_round_has_one_visit_of_each_arm() {
        for round in 0..100 {
            let arms = [AbbaSlot::of(2 * round), AbbaSlot::of(2 * round + 1)];
            assert!(arms.iter().all(|s| s.round == round));
            assert_ne!(arms[0].arm, arms[1].arm, "round {round}");
        }
    }
}
