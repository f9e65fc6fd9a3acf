//! [`CpuMask`]: a fixed-size CPU bitset (up to [`MAX_CPUS`]) for search
//! inputs and outputs. The shared, concurrently updated bitmaps inside
//! [`super::Cpupri`] are separate atomic words; this type is plain data.

use std::fmt;

/// Largest CPU count a [`CpuMask`] (and so a [`super::Cpupri`]) can describe.
pub const MAX_CPUS: u32 = 4096;

const WORD_BITS: u32 = u64::BITS;
pub(crate) const MASK_WORDS: usize = (MAX_CPUS / WORD_BITS) as usize;

/// A CPU id at or beyond [`MAX_CPUS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cpu {cpu} is beyond the {MAX_CPUS}-CPU mask")]
pub struct CpuBeyondMask {
    /// The rejected CPU id.
    pub cpu: u32,
}

/// A set of CPU ids below [`MAX_CPUS`], stored as 64-bit words like the
/// kernel's `cpumask`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct CpuMask {
    words: [u64; MASK_WORDS],
}

impl Default for CpuMask {
    fn default() -> Self {
        Self::new()
    }
}

impl CpuMask {
    /// The empty set.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            words: [0; MASK_WORDS],
        }
    }

    /// CPUs `0..n` (capped at [`MAX_CPUS`]).
    #[must_use]
    pub fn first_n(n: u32) -> Self {
        Self::range(0, n)
    }

    /// CPUs `start..end` (capped at [`MAX_CPUS`]).
    #[must_use]
    pub fn range(start: u32, end: u32) -> Self {
        let mut mask = Self::new();
        for cpu in start..end.min(MAX_CPUS) {
            mask.words[word_of(cpu)] |= bit_of(cpu);
        }
        mask
    }

    /// The set of the given CPUs.
    pub fn from_cpus(cpus: impl IntoIterator<Item = u32>) -> Result<Self, CpuBeyondMask> {
        let mut mask = Self::new();
        for cpu in cpus {
            mask.insert(cpu)?;
        }
        Ok(mask)
    }

    /// Add `cpu`; returns whether it was absent.
    pub fn insert(&mut self, cpu: u32) -> Result<bool, CpuBeyondMask> {
        if cpu >= MAX_CPUS {
            return Err(CpuBeyondMask { cpu });
        }
        let word = &mut self.words[word_of(cpu)];
        let absent = *word & bit_of(cpu) == 0;
        *word |= bit_of(cpu);
        Ok(absent)
    }

    /// Remove `cpu`; returns whether it was present.
    pub fn remove(&mut self, cpu: u32) -> bool {
        if !self.contains(cpu) {
            return false;
        }
        self.words[word_of(cpu)] &= !bit_of(cpu);
        true
    }

    /// Membership test (`false` for ids beyond [`MAX_CPUS`]).
    #[must_use]
    pub fn contains(&self, cpu: u32) -> bool {
        cpu < MAX_CPUS && self.words[word_of(cpu)] & bit_of(cpu) != 0
    }

    /// Remove every CPU.
    pub fn clear(&mut self) {
        self.words = [0; MASK_WORDS];
    }

    /// `true` when no CPU is in the set.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// Number of CPUs in the set.
    #[must_use]
    pub fn count(&self) -> u32 {
        self.words.iter().map(|w| w.count_ones()).sum()
    }

    /// Lowest CPU in the set.
    #[must_use]
    pub fn first(&self) -> Option<u32> {
        self.words
            .iter()
            .enumerate()
            .find(|(_, &w)| w != 0)
            .map(|(i, w)| i as u32 * WORD_BITS + w.trailing_zeros())
    }

    /// CPUs in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &word)| {
            let mut rest = word;
            std::iter::from_fn(move || {
                if rest == 0 {
                    return None;
                }
                let bit = rest.trailing_zeros();
                rest &= rest - 1;
                Some(i as u32 * WORD_BITS + bit)
            })
        })
    }

    /// Intersection.
    #[must_use]
    pub fn and(&self, other: &Self) -> Self {
        let mut out = self.clone();
        for (a, b) in out.words.iter_mut().zip(&other.words) {
            *a &= b;
        }
        out
    }

    /// Union.
    #[must_use]
    pub fn or(&self, other: &Self) -> Self {
        let mut out = self.clone();
        for (a, b) in out.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
        out
    }

    /// `true` when the sets share a CPU.
    #[must_use]
    pub fn intersects(&self, other: &Self) -> bool {
        self.words.iter().zip(&other.words).any(|(a, b)| a & b != 0)
    }

    /// `true` when every CPU of `self` is in `other`.
    #[must_use]
    pub fn is_subset(&self, other: &Self) -> bool {
        self.words
            .iter()
            .zip(&other.words)
            .all(|(a, b)| a & !b == 0)
    }

    /// The raw words, CPU `64 * i + b` at bit `b` of word `i`.
    #[must_use]
    pub fn words(&self) -> &[u64] {
        &self.words
    }

    pub(crate) fn word(&self, index: usize) -> u64 {
        self.words[index]
    }

    pub(crate) fn set_word(&mut self, index: usize, value: u64) {
        self.words[index] = value;
    }
}

#[inline]
pub(crate) const fn word_of(cpu: u32) -> usize {
    (cpu / WORD_BITS) as usize
}

#[inline]
pub(crate) const fn bit_of(cpu: u32) -> u64 {
    1 << (cpu % WORD_BITS)
}

/// Prints ranges, like the kernel's `%*pbl`: `{0-3, 8, 10-11}`.
impl fmt::Debug for CpuMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        let mut cpus = self.iter().peekable();
        let mut first = true;
        while let Some(start) = cpus.next() {
            let mut end = start;
            while cpus.peek() == Some(&(end + 1)) {
                end += 1;
                cpus.next();
            }
            if !first {
                f.write_str(", ")?;
            }
            first = false;
            if start == end {
                write!(f, "{start}")?;
            } else {
                write!(f, "{start}-{end}")?;
            }
        }
        f.write_str("}")
    }
}

impl fmt::Display for CpuMask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_operations() {
        let mut a = CpuMask::from_cpus([0, 1, 2, 3, 64, 200]).unwrap();
        let b = CpuMask::range(2, 70);
        assert_eq!(format!("{a:?}"), "{0-3, 64, 200}");
        assert_eq!(a.and(&b).iter().collect::<Vec<_>>(), vec![2, 3, 64]);
        assert_eq!(a.count(), 6);
        assert_eq!(a.first(), Some(0));
        assert!(a.intersects(&b));
        assert!(a.and(&b).is_subset(&b));
        assert!(!a.is_subset(&b));
        assert_eq!(a.insert(4095), Ok(true));
        assert_eq!(a.insert(4095), Ok(false));
        assert_eq!(a.insert(4096), Err(CpuBeyondMask { cpu: 4096 }));
        assert!(!a.contains(5000));
        assert!(a.remove(0));
        assert!(!a.remove(0));
        assert_eq!(a.first(), Some(1));
        a.clear();
        assert!(a.is_empty());
        assert_eq!(a.first(), None);
        assert_eq!(CpuMask::first_n(5000).count(), MAX_CPUS);
        assert_eq!(CpuMask::range(3, 3), CpuMask::new());
    }
}
