//! The inner loop of the wakeup workload's request math, written as the machine code schbench's
//! C compiles to, because the same operations in another order cost measurably more or less.
//!
//! schbench's naive multiply (gcc 12 -O2, x86_64) keeps the running sum of one product cell in a
//! register and stores it back to the cell at every step (its three matrices come from one
//! pointer, so C must assume they alias). Rust loops doing exactly the same loads, multiplies and
//! stores ran 13–19 % faster than that loop on an AMD EPYC guest, in one process on the same
//! matrices (docs/fidelity.md, "Request mode's matrix multiply"): LLVM schedules and unrolls them
//! differently. This file's x86_64 loop is gcc's instruction for instruction, and took 0.99–1.01
//! of it in the same test. Elsewhere it is the equivalent Rust loop, not measured against
//! schbench.

/// Sets `cell` to the dot product of `row` with column `column` of the row-major `n`×`n`
/// matrix `matrix` (wrapping u64 arithmetic), storing the partial sum into `cell` after every
/// step as schbench's compiled loop does.
///
/// Panics if `row` does not hold `n` words, `matrix` not `n`×`n`, or `column` is not below `n`:
/// the assembly reads exactly those words, so the bounds are checked here, once per cell.
#[inline]
pub fn dot_column_storing(row: &[u64], matrix: &[u64], n: usize, column: usize, cell: &mut u64) {
    assert!(n > 0 && row.len() == n && matrix.len() == n * n && column < n);
    *cell = 0;
    dot_column_loop(row, matrix, n, column, cell);
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn dot_column_loop(row: &[u64], matrix: &[u64], n: usize, column: usize, cell: &mut u64) {
    let cell: *mut u64 = cell;
    let row_start = row.as_ptr();
    // SAFETY: the assertion in `dot_column_storing` bounds every address: `row_start` steps
    // through the n words of `row` and stops at its end; the column pointer starts at
    // matrix[column] and steps by one row (n words) n times, ending at matrix[(n-1)*n + column],
    // inside `matrix`; the only store is to `cell`, a `&mut u64` that aliases neither slice. No
    // stack is used and the flags are declared clobbered (the default without preserves_flags).
    unsafe {
        let row_end = row_start.add(n);
        let column_start = matrix.as_ptr().add(column);
        std::arch::asm!(
            "xor {sum:e}, {sum:e}",
            ".p2align 4",
            "2:",
            "mov {product}, qword ptr [{a}]",
            "imul {product}, qword ptr [{b}]",
            "add {a}, 8",
            "add {b}, {stride}",
            "add {sum}, {product}",
            "mov qword ptr [{cell}], {sum}",
            "cmp {a}, {end}",
            "jne 2b",
            a = inout(reg) row_start => _,
            b = inout(reg) column_start => _,
            stride = in(reg) n * 8,
            end = in(reg) row_end,
            cell = in(reg) cell,
            sum = out(reg) _,
            product = out(reg) _,
            options(nostack),
        );
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn dot_column_loop(row: &[u64], matrix: &[u64], n: usize, column: usize, cell: &mut u64) {
    portable_dot_column_loop(row, matrix, n, column, cell);
}

/// The same loop in plain Rust: what other architectures run, and what the tests hold the
/// assembly to.
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(always)]
fn portable_dot_column_loop(row: &[u64], matrix: &[u64], n: usize, column: usize, cell: &mut u64) {
    let mut sum = 0u64;
    for (a, matrix_row) in row.iter().zip(matrix.chunks_exact(n)) {
        sum = sum.wrapping_add(a.wrapping_mul(matrix_row[column]));
        *std::hint::black_box(&mut *cell) = sum;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn computes_each_cell_of_a_product() {
        // [1 2 3; 4 5 6; 7 8 9] squared, cell by cell.
        let m = [1u64, 2, 3, 4, 5, 6, 7, 8, 9];
        let expected = [30u64, 36, 42, 66, 81, 96, 102, 126, 150];
        for i in 0..3 {
            for j in 0..3 {
                let mut cell = 12345;
                dot_column_storing(&m[i * 3..i * 3 + 3], &m, 3, j, &mut cell);
                assert_eq!(cell, expected[i * 3 + j], "cell ({i}, {j})");
            }
        }
    }

    #[test]
    fn wraps_like_u64_arithmetic_and_handles_one_by_one() {
        let mut cell = 7;
        dot_column_storing(&[u64::MAX], &[3], 1, 0, &mut cell);
        assert_eq!(cell, u64::MAX.wrapping_mul(3));
        let big = [u64::MAX, 2, 5, u64::MAX];
        dot_column_storing(&big[..2], &big, 2, 1, &mut cell);
        assert_eq!(
            cell,
            u64::MAX
                .wrapping_mul(2)
                .wrapping_add(2u64.wrapping_mul(u64::MAX))
        );
    }

    #[test]
    fn agrees_with_the_portable_loop_on_pseudo_random_matrices() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for n in [1usize, 2, 5, 17, 104] {
            let row: Vec<u64> = (0..n).map(|_| next()).collect();
            let matrix: Vec<u64> = (0..n * n).map(|_| next()).collect();
            for column in [0, n / 2, n - 1] {
                let (mut fast, mut plain) = (0, 0);
                dot_column_storing(&row, &matrix, n, column, &mut fast);
                portable_dot_column_loop(&row, &matrix, n, column, &mut plain);
                assert_eq!(fast, plain, "n {n}, column {column}");
            }
        }
    }

    #[test]
    #[should_panic]
    fn refuses_a_column_outside_the_matrix() {
        let mut cell = 0;
        dot_column_storing(&[1, 2], &[1, 2, 3, 4], 2, 2, &mut cell);
    }

    #[test]
    #[should_panic]
    fn refuses_a_row_of_the_wrong_length() {
        let mut cell = 0;
        dot_column_storing(&[1, 2, 3], &[1, 2, 3, 4], 2, 0, &mut cell);
    }
}
