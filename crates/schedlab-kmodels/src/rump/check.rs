//! The exact check of a rump scheduler, after every operation: every thread inside the kernel
//! holds exactly one virtual CPU, and no virtual CPU is held by two. [`Occupancy`] records each
//! CPU's holder with a compare-and-swap on entry and on exit, so a second holder is caught the
//! moment it enters, whichever threads run when; [`checked_syscall`] wraps one system call in it.
use std::sync::atomic::{AtomicU32, Ordering};

use super::{Lwp, VirtualKernel, NO_LWP};

/// A broken promise of the scheduler, with the lwps and the CPU involved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Violation {
    #[error("vCPU {vcpu} was given to lwp {second} while lwp {first} held it")]
    HeldTwice {
        vcpu: usize,
        first: u32,
        second: u32,
    },
    #[error("lwp {lwp} left vCPU {vcpu}, which the record shows {}", holder_text(*.holder))]
    NotHolder { vcpu: usize, lwp: u32, holder: u32 },
    #[error("lwp {lwp} entered while it held vCPU {vcpu} already")]
    AlreadyInside { lwp: u32, vcpu: usize },
    #[error("lwp {lwp} entered and was told vCPU {vcpu}, but holds {}", held_text(*.held))]
    NotGiven {
        lwp: u32,
        vcpu: usize,
        held: Option<usize>,
    },
    #[error("vCPU {vcpu} is outside the kernel's {vcpus}, given to lwp {lwp}")]
    OutOfRange { lwp: u32, vcpu: usize, vcpus: usize },
    #[error("lwp {lwp} still holds vCPU {vcpu} after leaving")]
    StillInside { lwp: u32, vcpu: usize },
    #[error(
        "lwp {lwp} was alone on vCPU {vcpu} by the record, yet its system call saw another holder"
    )]
    BodyShared { lwp: u32, vcpu: usize },
}

fn holder_text(holder: u32) -> String {
    match holder {
        NO_LWP => "free".to_string(),
        lwp => format!("held by lwp {lwp}"),
    }
}

fn held_text(held: Option<usize>) -> String {
    match held {
        Some(v) => format!("vCPU {v}"),
        None => "none".to_string(),
    }
}

/// Who holds each CPU, by the checker's own record.
#[derive(Debug)]
pub struct Occupancy {
    holders: Box<[AtomicU32]>,
}

impl Occupancy {
    pub fn new(vcpus: usize) -> Self {
        Occupancy {
            holders: (0..vcpus).map(|_| AtomicU32::new(NO_LWP)).collect(),
        }
    }

    /// `lwp` took `vcpu`: it must have been free.
    pub fn enter(&self, lwp: u32, vcpu: usize) -> Result<(), Violation> {
        self.holder(lwp, vcpu)?
            .compare_exchange(NO_LWP, lwp, Ordering::AcqRel, Ordering::Acquire)
            .map(|_| ())
            .map_err(|first| Violation::HeldTwice {
                vcpu,
                first,
                second: lwp,
            })
    }

    /// `lwp` is about to give back `vcpu`: the record must show it as the holder.
    pub fn leave(&self, lwp: u32, vcpu: usize) -> Result<(), Violation> {
        self.holder(lwp, vcpu)?
            .compare_exchange(lwp, NO_LWP, Ordering::AcqRel, Ordering::Acquire)
            .map(|_| ())
            .map_err(|holder| Violation::NotHolder { vcpu, lwp, holder })
    }

    /// The record of `vcpu`, which `lwp` names: a vCPU the kernel does not have is a violation.
    fn holder(&self, lwp: u32, vcpu: usize) -> Result<&AtomicU32, Violation> {
        self.holders.get(vcpu).ok_or(Violation::OutOfRange {
            lwp,
            vcpu,
            vcpus: self.holders.len(),
        })
    }

    /// CPUs held by the record.
    pub fn held(&self) -> usize {
        self.holders
            .iter()
            .filter(|h| h.load(Ordering::SeqCst) != NO_LWP)
            .count()
    }
}

/// One system call under the checker: the lwp holds nothing before, exactly the CPU it was given
/// while inside (free until then, by the record), and nothing after. A failed check still gives
/// the CPU back, so that the other threads of a checked run can finish.
pub fn checked_syscall<K: VirtualKernel + ?Sized>(
    kernel: &K,
    lwp: &mut Lwp,
    occupancy: &Occupancy,
) -> Result<(), Violation> {
    if let Some(vcpu) = lwp.cpu() {
        return Err(Violation::AlreadyInside {
            lwp: lwp.id(),
            vcpu,
        });
    }
    let vcpu = kernel.schedule(lwp);
    let inside = check_inside(kernel, lwp, vcpu, occupancy);
    kernel.unschedule(lwp);
    inside?;
    match lwp.cpu() {
        Some(vcpu) => Err(Violation::StillInside {
            lwp: lwp.id(),
            vcpu,
        }),
        None => Ok(()),
    }
}

/// Between entry and exit: the CPU is the one the lwp holds, in range, free by the record until
/// now; the body runs alone on it, and the record is cleared before the CPU is given back (or its
/// next holder would find it taken).
fn check_inside<K: VirtualKernel + ?Sized>(
    kernel: &K,
    lwp: &Lwp,
    vcpu: usize,
    occupancy: &Occupancy,
) -> Result<(), Violation> {
    let id = lwp.id();
    if lwp.cpu() != Some(vcpu) {
        return Err(Violation::NotGiven {
            lwp: id,
            vcpu,
            held: lwp.cpu(),
        });
    }
    if vcpu >= kernel.vcpus() {
        return Err(Violation::OutOfRange {
            lwp: id,
            vcpu,
            vcpus: kernel.vcpus(),
        });
    }
    occupancy.enter(id, vcpu)?;
    let alone = kernel.vcpu(vcpu).run_syscall(id);
    occupancy.leave(id, vcpu)?;
    if alone {
        Ok(())
    } else {
        Err(Violation::BodyShared { lwp: id, vcpu })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rump::{Cached, Freelist};

    fn lwps(n: u32) -> Vec<Lwp> {
        (1..=n).map(|id| Lwp::new(id).unwrap()).collect()
    }

    #[test]
    fn interleaved_entries_of_correct_schedulers_pass() {
        let kernels: [Box<dyn VirtualKernel>; 2] =
            [Box::new(Cached::new(3)), Box::new(Freelist::new(3))];
        for kernel in kernels {
            let occupancy = Occupancy::new(3);
            let mut lwps = lwps(3);
            // All three inside at once, in every order, then one at a time.
            for round in 0..6 {
                let mut inside = Vec::new();
                for i in 0..3 {
                    let lwp = &mut lwps[(i + round) % 3];
                    let v = kernel.schedule(lwp);
                    occupancy.enter(lwp.id(), v).unwrap();
                    inside.push(((i + round) % 3, v));
                }
                assert_eq!(occupancy.held(), 3);
                for (i, v) in inside {
                    occupancy.leave(lwps[i].id(), v).unwrap();
                    kernel.unschedule(&mut lwps[i]);
                }
                for lwp in &mut lwps {
                    checked_syscall(kernel.as_ref(), lwp, &occupancy).unwrap();
                }
            }
            assert_eq!(occupancy.held(), 0);
            kernel.check_quiescent().unwrap();
        }
    }

    #[test]
    fn a_planted_double_assignment_is_caught_at_the_second_entry() {
        // CPU 0 on the list twice: the first two entries both get it.
        let kernel = Freelist::with_free_list(2, &[0, 0]);
        let occupancy = Occupancy::new(2);
        let (mut a, mut b) = (Lwp::new(1).unwrap(), Lwp::new(2).unwrap());
        let va = kernel.schedule(&mut a);
        occupancy.enter(a.id(), va).unwrap();
        let vb = kernel.schedule(&mut b);
        assert_eq!((va, vb), (0, 0));
        let caught = occupancy.enter(b.id(), vb).unwrap_err();
        assert_eq!(
            caught,
            Violation::HeldTwice {
                vcpu: 0,
                first: 1,
                second: 2
            }
        );
        assert_eq!(
            caught.to_string(),
            "vCPU 0 was given to lwp 2 while lwp 1 held it"
        );
    }

    #[test]
    fn entering_twice_and_leaving_what_is_not_held_are_caught() {
        let kernel = Cached::new(2);
        let occupancy = Occupancy::new(2);
        let mut a = Lwp::new(1).unwrap();
        let v = kernel.schedule(&mut a);
        let err = checked_syscall(&kernel, &mut a, &occupancy).unwrap_err();
        assert_eq!(err, Violation::AlreadyInside { lwp: 1, vcpu: v });
        let err = occupancy.leave(1, v).unwrap_err();
        assert_eq!(
            err.to_string(),
            "lwp 1 left vCPU 0, which the record shows free"
        );
        assert!(matches!(
            occupancy.enter(1, 7),
            Err(Violation::OutOfRange { vcpus: 2, .. })
        ));
    }
}
