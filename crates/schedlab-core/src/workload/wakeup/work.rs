//! A request's CPU work, as schbench does it: naive multiplies of N×N u64 matrices sized by the
//! cache footprint (three matrices fill it), under the per-CPU lock unless locking is off.
use std::sync::atomic::AtomicBool;

use super::sync::{lock_this_cpu, unlock, CpuLock};
use crate::sys::{self, ZeroPageWords};

/// schbench's matrix size: N = sqrt(footprint / 3 matrices / 8 bytes), rounded down.
pub fn matrix_size(cache_footprint_kb: u64) -> usize {
    let elements = cache_footprint_kb * 1024 / 3 / 8;
    elements.isqrt() as usize
}

/// The three matrices of one worker, or why they cannot be had. They live in a private
/// anonymous mapping of their own, like schbench's malloc'd buffer (above glibc's mmap
/// threshold): never-written input matrices stay mapped to the kernel's zero page, so only the
/// product matrix really occupies its share of the footprint, exactly as in schbench.
pub fn allocate_matrices(n: usize) -> Result<ZeroPageWords, String> {
    ZeroPageWords::new(3 * n * n).map_err(|e| e.to_string())
}

/// One multiply of m1 × m2 into m3, schbench's naive triple loop. Each product cell is the inner
/// loop of `sys::dot_column_storing`, which stores the cell at every step as schbench's compiled
/// loop does and is, on x86_64, that loop's machine code: a Rust loop of the same operations ran
/// 13–19 % faster than schbench's (docs/fidelity.md).
pub fn multiply(data: &mut [u64], n: usize) {
    let (m1, rest) = data.split_at_mut(n * n);
    let (m2, m3) = rest.split_at_mut(n * n);
    for (row, out) in m1.chunks_exact(n).zip(m3.chunks_exact_mut(n)) {
        for (column, cell) in out.iter_mut().enumerate() {
            sys::dot_column_storing(row, m2, n, column, cell);
        }
    }
}

/// A request's work: `operations` multiplies, under this CPU's lock when `locks` is given. A
/// request still waiting for its lock when `stop` is set is dropped (see [`lock_this_cpu`]).
pub fn do_work(
    data: &mut [u64],
    n: usize,
    operations: u64,
    locks: Option<&[CpuLock]>,
    stop: &AtomicBool,
) {
    let held = match locks {
        Some(locks) => match lock_this_cpu(locks, stop) {
            Some(lock) => Some(lock),
            None => return,
        },
        None => None,
    };
    for _ in 0..operations {
        multiply(data, n);
    }
    if let Some(lock) = held {
        unlock(lock);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix_size_matches_schbench() {
        // schbench: sqrt(256 * 1024 / 3 / 8) = sqrt(10922) = 104.
        assert_eq!(matrix_size(256), 104);
        assert_eq!(matrix_size(1), 6);
    }

    #[test]
    fn multiply_computes_the_product() {
        let n = 2;
        let mut matrices = allocate_matrices(n).unwrap();
        let data = matrices.as_mut_slice();
        assert_eq!(data.len(), 12);
        assert!(data.iter().all(|&x| x == 0));
        data[..8].copy_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
        multiply(data, n);
        assert_eq!(&data[8..], &[19, 22, 43, 50]);
        let locks: Vec<CpuLock> = (0..2).map(|_| CpuLock::new()).collect();
        do_work(data, n, 2, Some(&locks), &AtomicBool::new(false));
        assert_eq!(&data[8..], &[19, 22, 43, 50]);
    }
}
