//! Checking [`Cpupri::find`] answers: a plain scan over a `cpu_to_pri`
//! snapshot ([`reference_find`]), an answer checker, and [`CpuOwner`], the
//! scheme that makes answers checkable while other threads keep writing.
//!
//! # Checking under contention
//!
//! Each worker thread owns a disjoint set of CPUs and is the only one that
//! ever calls `set` for them (like the kernel, where only the holder of a
//! runqueue lock changes that CPU's level). When a thread searches with
//! `allowed` inside its own set, the answer depends only on its own CPUs:
//!
//! - bits: other threads' `set`s change other bits of the shared words with
//!   atomic read-modify-writes, which never disturb this thread's bits, and
//!   per-location coherence guarantees the thread reads its own latest
//!   writes; in the per-node layout the other nodes' bitmaps hold this
//!   thread's bits permanently set;
//! - counts: every other CPU's `set` increments its new level before
//!   decrementing its old one, in program order on one thread, so in the
//!   modification order of a level's count each foreign decrement follows
//!   the matching increment; any value this thread can read is therefore at
//!   least the number of its own CPUs at that level, and a level holding one
//!   of its CPUs is never skipped for a zero count. A level holding none of
//!   its CPUs yields an empty intersection whatever the count says.
//!
//! So the answer must equal [`reference_find`] over the thread's private
//! record of its own CPUs' levels, exactly, at every search.

use super::{CpuMask, CpuPri, Cpupri, CpupriError, MAX_CPUS};

/// The correct result of a search, from [`reference_find`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReferenceAnswer {
    /// The lowest level below the task's that holds an allowed CPU.
    pub level: CpuPri,
    /// Every CPU at that level, allowed or not.
    pub cpus_at_level: CpuMask,
}

impl ReferenceAnswer {
    /// The CPUs `find` may return and must report in `out_lowest`:
    /// `cpus_at_level ∩ allowed`.
    #[must_use]
    pub fn acceptable(&self, allowed: &CpuMask) -> CpuMask {
        self.cpus_at_level.and(allowed)
    }
}

/// Plain scan: the lowest level `< task_pri` at which some allowed CPU sits
/// (`cpu_to_pri[cpu]`, `None` = INVALID and never eligible), with all CPUs at
/// that level. CPUs at or beyond [`MAX_CPUS`] are ignored.
#[must_use]
pub fn reference_find(
    cpu_to_pri: &[Option<CpuPri>],
    task_pri: CpuPri,
    allowed: &CpuMask,
) -> Option<ReferenceAnswer> {
    let cpus = cpu_to_pri.iter().take(MAX_CPUS as usize).enumerate();
    let level = cpus
        .clone()
        .filter(|&(cpu, _)| allowed.contains(cpu as u32))
        .filter_map(|(_, pri)| *pri)
        .filter(|pri| *pri < task_pri)
        .min()?;
    let cpus_at_level = CpuMask::from_cpus(
        cpus.filter(|&(_, pri)| *pri == Some(level))
            .map(|(cpu, _)| cpu as u32),
    )
    .unwrap_or_default();
    Some(ReferenceAnswer {
        level,
        cpus_at_level,
    })
}

/// A `find` result that disagrees with the reference.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "find returned {got:?} with out_lowest {got_lowest}, but the reference expects {} \
     with acceptable CPUs {expected_lowest}",
    match expected_level { Some(level) => level.to_string(), None => "no CPU".to_owned() }
)]
pub struct FindMismatch {
    /// The reference level (`None`: no CPU qualifies).
    pub expected_level: Option<CpuPri>,
    /// The reference's acceptable set (`cpus_at_level ∩ allowed`).
    pub expected_lowest: CpuMask,
    /// What `find` returned.
    pub got: Option<u32>,
    /// What `find` left in `out_lowest`.
    pub got_lowest: CpuMask,
}

/// Check one `find` outcome: with an expected answer, `got` must be one of
/// the acceptable CPUs and `got_lowest` must equal the acceptable set;
/// without one, `got` must be `None` and `got_lowest` empty.
pub fn check_find_answer(
    expected: Option<&ReferenceAnswer>,
    allowed: &CpuMask,
    got: Option<u32>,
    got_lowest: &CpuMask,
) -> Result<(), Box<FindMismatch>> {
    let expected_lowest = expected.map_or_else(CpuMask::new, |a| a.acceptable(allowed));
    let got_ok = match got {
        Some(cpu) => expected_lowest.contains(cpu),
        None => expected.is_none(),
    };
    if got_ok && *got_lowest == expected_lowest {
        Ok(())
    } else {
        Err(Box::new(FindMismatch {
            expected_level: expected.map(|a| a.level),
            expected_lowest,
            got,
            got_lowest: got_lowest.clone(),
        }))
    }
}

/// One worker's exclusive CPUs and its private record of their levels; see
/// the module docs for why its searches are exactly checkable under
/// contention.
#[derive(Clone, Debug)]
pub struct CpuOwner {
    cpus: CpuMask,
    levels: Vec<Option<CpuPri>>,
}

impl CpuOwner {
    /// Take ownership of `cpus` in `cpupri`, recording their current levels.
    /// The caller guarantees no other thread sets these CPUs from now on.
    pub fn new(cpupri: &Cpupri, cpus: CpuMask) -> Result<Self, CpupriError> {
        let nr_cpus = cpupri.nr_cpus();
        if let Some(cpu) = cpus.iter().find(|&c| c >= nr_cpus) {
            return Err(CpupriError::CpuOutOfRange { cpu, nr_cpus });
        }
        let snapshot = cpupri.cpu_to_pri_snapshot();
        let levels = (0..nr_cpus)
            .map(|c| {
                if cpus.contains(c) {
                    snapshot[c as usize]
                } else {
                    None
                }
            })
            .collect();
        Ok(Self { cpus, levels })
    }

    /// The owned CPUs.
    #[must_use]
    pub fn cpus(&self) -> &CpuMask {
        &self.cpus
    }

    /// The recorded level of an owned CPU.
    #[must_use]
    pub fn level_of(&self, cpu: u32) -> Option<CpuPri> {
        if self.cpus.contains(cpu) {
            self.levels.get(cpu as usize).copied().flatten()
        } else {
            None
        }
    }

    /// Set an owned CPU's level in `cpupri` and in the private record.
    pub fn set(
        &mut self,
        cpupri: &Cpupri,
        cpu: u32,
        pri: Option<CpuPri>,
    ) -> Result<(), CpupriError> {
        if !self.cpus.contains(cpu) {
            return Err(CpupriError::NotOwned { cpu });
        }
        cpupri.set(cpu, pri)?;
        self.levels[cpu as usize] = pri;
        Ok(())
    }

    /// The answer a search restricted to owned CPUs must give.
    #[must_use]
    pub fn expected(&self, task_pri: CpuPri, allowed: &CpuMask) -> Option<ReferenceAnswer> {
        reference_find(&self.levels, task_pri, &allowed.and(&self.cpus))
    }

    /// Search `cpupri` with `allowed ∩ owned CPUs` from `start_node` and
    /// check the result against [`CpuOwner::expected`]; returns the found
    /// CPU.
    pub fn check_find(
        &self,
        cpupri: &Cpupri,
        start_node: u32,
        task_pri: CpuPri,
        allowed: &CpuMask,
        out_lowest: &mut CpuMask,
    ) -> Result<Option<u32>, Box<FindMismatch>> {
        let allowed = allowed.and(&self.cpus);
        let got = cpupri.find_from_node(start_node, task_pri, &allowed, out_lowest);
        let expected = reference_find(&self.levels, task_pri, &allowed);
        check_find_answer(expected.as_ref(), &allowed, got, out_lowest)?;
        Ok(got)
    }
}

/// Split CPUs `0..nr_cpus` into `parts` sets, CPU `c` going to part
/// `c % parts`. Neighbouring CPUs then belong to different owners and share
/// bitmap words, which maximises contention on the same cache lines.
/// Returns no parts when `parts == 0`.
#[must_use]
pub fn partition_interleaved(nr_cpus: u32, parts: u32) -> Vec<CpuMask> {
    let mut out = vec![CpuMask::new(); parts as usize];
    if parts == 0 {
        return out;
    }
    for cpu in 0..nr_cpus.min(MAX_CPUS) {
        // In range by construction.
        let _ = out[(cpu % parts) as usize].insert(cpu);
    }
    out
}

/// Split CPUs `0..nr_cpus` into `parts` contiguous blocks of near-equal size
/// (like the NUMA node blocks). Returns no parts when `parts == 0`.
#[must_use]
pub fn partition_blocks(nr_cpus: u32, parts: u32) -> Vec<CpuMask> {
    let nr = u64::from(nr_cpus.min(MAX_CPUS));
    let parts = u64::from(parts);
    (0..parts)
        .map(|p| CpuMask::range((p * nr / parts) as u32, ((p + 1) * nr / parts) as u32))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpupri::{Layout, NumaTopology};

    #[test]
    fn reference_picks_lowest_allowed_level_and_all_its_cpus() {
        let rt = |p| CpuPri::rt(p);
        let levels = [
            rt(5),
            Some(CpuPri::NORMAL),
            None,
            rt(5),
            Some(CpuPri::NORMAL),
        ];
        let allowed = CpuMask::from_cpus([0, 2, 3]).unwrap();
        let answer = reference_find(&levels, rt(10).unwrap(), &allowed).unwrap();
        assert_eq!(answer.level, rt(5).unwrap());
        assert_eq!(answer.cpus_at_level, CpuMask::from_cpus([0, 3]).unwrap());
        assert_eq!(reference_find(&levels, rt(5).unwrap(), &allowed), None);
        let all = CpuMask::first_n(5);
        let answer = reference_find(&levels, rt(1).unwrap(), &all).unwrap();
        assert_eq!(answer.acceptable(&all), CpuMask::from_cpus([1, 4]).unwrap());
    }

    #[test]
    fn partitions_cover_every_cpu_once() {
        for parts in [partition_interleaved(130, 4), partition_blocks(130, 4)] {
            assert_eq!(parts.len(), 4);
            let union = parts.iter().fold(CpuMask::new(), |acc, p| acc.or(p));
            assert_eq!(union, CpuMask::first_n(130));
            assert_eq!(parts.iter().map(CpuMask::count).sum::<u32>(), 130);
        }
        assert!(partition_interleaved(8, 0).is_empty());
        assert!(partition_blocks(8, 0).is_empty());
    }

    #[test]
    fn owner_rejects_foreign_cpus() {
        let map = Cpupri::new(NumaTopology::new(8, 2).unwrap(), Layout::PerNode);
        let mut owner = CpuOwner::new(&map, CpuMask::from_cpus([1, 2]).unwrap()).unwrap();
        assert_eq!(
            owner.set(&map, 3, None),
            Err(CpupriError::NotOwned { cpu: 3 })
        );
        owner.set(&map, 2, CpuPri::rt(3)).unwrap();
        assert_eq!(owner.level_of(2), CpuPri::rt(3));
        let mut out = CpuMask::new();
        let found = owner
            .check_find(
                &map,
                0,
                CpuPri::rt(4).unwrap(),
                &CpuMask::first_n(8),
                &mut out,
            )
            .unwrap();
        assert_eq!(found, Some(2));
        assert!(CpuOwner::new(&map, CpuMask::from_cpus([9]).unwrap()).is_err());
    }
}
