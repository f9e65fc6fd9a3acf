//! Operation streams for the cpudl heap: the exact cpudl-bench driver
//! ([`CpudlBenchOps`]), a structural analysis of its op mix
//! ([`CpudlBenchMixAnalysis`]), a seeded realistic mix ([`RealisticOps`]), and
//! counting what a stream really does to the heap ([`count_op_mix`]).

use std::fmt;

use crate::rng::SplitMix64;

/// One heap operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Insert `cpu` with deadline `dl`, or re-key it if present.
    Set {
        /// Target CPU.
        cpu: u32,
        /// New deadline.
        dl: u64,
    },
    /// Remove `cpu` if present.
    Clear {
        /// Target CPU.
        cpu: u32,
    },
}

impl Op {
    /// The CPU the operation targets.
    #[must_use]
    pub const fn cpu(&self) -> u32 {
        match *self {
            Op::Set { cpu, .. } | Op::Clear { cpu } => cpu,
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::Set { cpu, dl } => write!(f, "set(cpu {cpu}, dl {dl})"),
            Op::Clear { cpu } => write!(f, "clear(cpu {cpu})"),
        }
    }
}

/// Initial LCG state in `cpudl_bench.c`.
pub const CPUDL_BENCH_SEED: u64 = 123_456_789;
/// Width of the deadline range in `cpudl_bench.c`.
pub const CPUDL_BENCH_DL_RANGE: u64 = 0x7fff_ffff;
/// Lowest deadline `cpudl_bench.c` generates: half the range below `2^63`, so
/// the deadlines straddle `2^63` on purpose.
pub const CPUDL_BENCH_DL_BASE: u64 = (1 << 63) - CPUDL_BENCH_DL_RANGE / 2;
const LCG_MULTIPLIER: u64 = 1_103_515_245;
const LCG_INCREMENT: u64 = 7917;

/// `(r & 5) != 5` is the driver's test for "set"; it reads bits 0 and 2 only.
const fn bench_is_set(r: u64) -> bool {
    r & 5 != 5
}

const fn lcg_step(r: u64) -> u64 {
    r.wrapping_mul(LCG_MULTIPLIER).wrapping_add(LCG_INCREMENT)
}

/// The operation sequence of cpudl-bench's `cpudl_bench.c`, bit for bit: op
/// `i` targets CPU `i % num_cpus` with deadline
/// `CPUDL_BENCH_DL_BASE + r % CPUDL_BENCH_DL_RANGE`; it is a set when
/// `(r & 5) != 5` and a clear otherwise; then `r = r * 1103515245 + 7917`
/// (mod `2^64`), starting from `r = 123456789`.
///
/// With `num_cpus == 0` the sequence is empty (the C driver would divide by
/// zero).
#[derive(Clone, Debug)]
pub struct CpudlBenchOps {
    num_cpus: u32,
    remaining: u64,
    next_index: u64,
    r: u64,
}

impl CpudlBenchOps {
    /// The first `num_ops` operations for `num_cpus` CPUs.
    #[must_use]
    pub fn new(num_cpus: u32, num_ops: u64) -> Self {
        Self {
            num_cpus,
            remaining: if num_cpus == 0 { 0 } else { num_ops },
            next_index: 0,
            r: CPUDL_BENCH_SEED,
        }
    }

    /// What the first `num_ops` operations do to a heap of `num_cpus` CPUs;
    /// see [`count_op_mix`].
    #[must_use]
    pub fn op_mix(num_cpus: u32, num_ops: u64) -> OpMix {
        count_op_mix(Self::new(num_cpus, num_ops), num_cpus)
    }
}

impl Iterator for CpudlBenchOps {
    type Item = Op;

    fn next(&mut self) -> Option<Op> {
        if self.remaining == 0 {
            return None;
        }
        let cpu = (self.next_index % u64::from(self.num_cpus)) as u32;
        let dl = CPUDL_BENCH_DL_BASE + self.r % CPUDL_BENCH_DL_RANGE;
        let op = if bench_is_set(self.r) {
            Op::Set { cpu, dl }
        } else {
            Op::Clear { cpu }
        };
        self.r = lcg_step(self.r);
        self.next_index += 1;
        self.remaining -= 1;
        Some(op)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match usize::try_from(self.remaining) {
            Ok(n) => (n, Some(n)),
            Err(_) => (usize::MAX, None),
        }
    }
}

/// What a stream of operations really does, given that a set of an absent
/// CPU inserts it and a clear of an absent CPU does nothing.
///
/// The presence of each CPU is simulated from the intended semantics, which
/// every correct variant follows; [`super::Orig`] can deviate once its heap
/// is broken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct OpMix {
    /// Sets of an absent CPU.
    pub inserts: u64,
    /// Sets of a present CPU (key changes).
    pub updates: u64,
    /// Clears of a present CPU (real removals).
    pub deletes: u64,
    /// Clears of an absent CPU.
    pub noop_clears: u64,
    /// Operations naming a CPU `>= num_cpus` (a heap rejects them).
    pub out_of_range: u64,
}

impl OpMix {
    /// All operations counted.
    #[must_use]
    pub const fn total(&self) -> u64 {
        self.inserts + self.updates + self.deletes + self.noop_clears + self.out_of_range
    }
}

impl fmt::Display for OpMix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} inserts, {} updates, {} real deletes, {} no-op clears",
            self.inserts, self.updates, self.deletes, self.noop_clears
        )?;
        if self.out_of_range > 0 {
            write!(f, ", {} out-of-range", self.out_of_range)?;
        }
        Ok(())
    }
}

/// Classify every operation of `ops` for a heap of `num_cpus` CPUs.
pub fn count_op_mix(ops: impl IntoIterator<Item = Op>, num_cpus: u32) -> OpMix {
    let mut present = vec![false; num_cpus as usize];
    let mut mix = OpMix::default();
    for op in ops {
        let Some(slot) = present.get_mut(op.cpu() as usize) else {
            mix.out_of_range += 1;
            continue;
        };
        match (op, *slot) {
            (Op::Set { .. }, false) => mix.inserts += 1,
            (Op::Set { .. }, true) => mix.updates += 1,
            (Op::Clear { .. }, true) => mix.deletes += 1,
            (Op::Clear { .. }, false) => mix.noop_clears += 1,
        }
        *slot = matches!(op, Op::Set { .. });
    }
    mix
}

/// Why the cpudl-bench mix rarely deletes, derived from the LCG rather than
/// asserted.
///
/// The set/clear test reads bits 0 and 2 of `r`, and an LCG modulo `2^64`
/// reduced modulo 8 is itself an LCG modulo 8; so the kind of op `i` depends
/// only on `i` modulo that small LCG's period. CPU `c` of `n` receives the ops
/// with `i ≡ c (mod n)`, which hit exactly the residues `≡ c (mod gcd(n,
/// period))`. If every such residue class is all-set or all-clear, every CPU
/// only ever gets sets (one insert, then updates) or only clears (no-ops).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpudlBenchMixAnalysis {
    /// Period of the op-kind pattern in the op index.
    pub period: u32,
    /// Residues `i mod period` whose op is a clear.
    pub clear_residues: Vec<u32>,
    /// Smallest divisor `m` of `period` such that the kind is constant on
    /// every class modulo `m`; a mix with `num_cpus` a multiple of `m` never
    /// really deletes.
    pub uniform_modulus: u32,
}

impl CpudlBenchMixAnalysis {
    /// Derive the pattern by running the LCG modulo 8.
    #[must_use]
    pub fn compute() -> Self {
        const LOW_BITS: u64 = 8;
        let start = CPUDL_BENCH_SEED % LOW_BITS;
        let mut kinds_is_set = Vec::new();
        let mut state = start;
        // The multiplier is odd, so the map is a bijection on residues mod 8
        // and the orbit returns to its start within 8 steps.
        loop {
            kinds_is_set.push(bench_is_set(state));
            state = lcg_step(state) % LOW_BITS;
            if state == start {
                break;
            }
        }
        let period = kinds_is_set.len() as u32;
        let clear_residues = (0..period).filter(|&i| !kinds_is_set[i as usize]).collect();
        let uniform_modulus = (1..=period)
            .filter(|&d| period.is_multiple_of(d))
            .find(|&d| {
                (0..period).all(|i| kinds_is_set[i as usize] == kinds_is_set[(i % d) as usize])
            })
            .unwrap_or(period);
        Self {
            period,
            clear_residues,
            uniform_modulus,
        }
    }

    /// `true` when, for any number of operations, no clear of the mix ever
    /// removes a CPU that is present. The converse holds given enough
    /// operations (at least `2 * period` per CPU).
    #[must_use]
    pub fn never_really_deletes(&self, num_cpus: u32) -> bool {
        num_cpus.is_multiple_of(self.uniform_modulus)
    }

    /// Residues `i mod period` that CPU `cpu` of `num_cpus` receives, given
    /// enough operations.
    #[must_use]
    pub fn residues_seen_by(&self, num_cpus: u32, cpu: u32) -> Vec<u32> {
        if num_cpus == 0 {
            return Vec::new();
        }
        let g = gcd(num_cpus, self.period);
        (0..self.period).filter(|r| r % g == cpu % g).collect()
    }
}

const fn gcd(mut a: u32, mut b: u32) -> u32 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl fmt::Display for CpudlBenchMixAnalysis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let residues: Vec<String> = self.clear_residues.iter().map(u32::to_string).collect();
        write!(
            f,
            "the cpudl-bench op kind repeats every {p} ops: op i is a clear iff i mod {p} is in \
             {{{r}}}; CPU c of n receives ops i = c (mod n), i.e. residues = c (mod gcd(n, {p})); \
             with CPU counts that are multiples of {m} this mix never really deletes (every CPU \
             gets only sets or only clears)",
            p = self.period,
            r = residues.join(", "),
            m = self.uniform_modulus,
        )
    }
}

/// Default starting clock of [`RealisticOps`]: 5 ms before `2^63`, so the
/// deadlines cross `2^63` (where the original code's comparison with its
/// placeholder 0 flips) within the first few hundred operations.
pub const REALISTIC_DEFAULT_START_CLOCK: u64 = (1 << 63) - 5_000_000;
/// Largest clock advance between two operations, in ns.
const MAX_TICK_NS: u64 = 50_000;
/// Relative deadlines (deadline minus clock) are drawn from this range, in ns.
const RELATIVE_DEADLINE_NS: std::ops::RangeInclusive<u64> = 100_000..=100_000_000;
/// Percent chance that an idle CPU gets a -dl task (otherwise a no-op clear,
/// as when a runqueue goes offline without -dl tasks).
const IDLE_TO_BUSY_PERCENT: u64 = 85;
/// Percent chance that a busy CPU's earliest deadline changes (otherwise it
/// runs out of -dl work and leaves the heap).
const BUSY_UPDATE_PERCENT: u64 = 55;

/// A seeded stream that exercises every heap path: CPUs become busy
/// (insert), switch to another task (update), and go idle (real delete),
/// with a few no-op clears. Deadlines are `clock + relative deadline`, the
/// clock only moves forward (wrapping), so live deadlines stay within about
/// `100 ms + elapsed clock` of each other — far inside the half-ring window
/// the heap needs.
///
/// The stream is infinite (use `take`); with `num_cpus == 0` it is empty.
#[derive(Clone, Debug)]
pub struct RealisticOps {
    rng: SplitMix64,
    clock: u64,
    deadlines: Vec<Option<u64>>,
    granularity: u64,
}

impl RealisticOps {
    /// Stream for CPUs `0..num_cpus`; equal seeds give equal streams.
    #[must_use]
    pub fn new(num_cpus: u32, seed: u64) -> Self {
        Self {
            rng: SplitMix64(seed),
            clock: REALISTIC_DEFAULT_START_CLOCK,
            deadlines: vec![None; num_cpus as usize],
            granularity: 1,
        }
    }

    /// Start the clock elsewhere, e.g. just below `u64::MAX` to cross the
    /// ring's zero.
    #[must_use]
    pub fn with_start_clock(mut self, clock: u64) -> Self {
        self.clock = clock;
        self
    }

    /// Round deadlines down to multiples of `granularity` ns (0 acts as 1).
    /// Coarse granularity models periodic tasks released on the same tick,
    /// which produces equal deadlines — the inputs on which [`super::Fast`]
    /// and [`super::Bugfix`] lay the heap out differently.
    #[must_use]
    pub fn with_deadline_granularity(mut self, granularity: u64) -> Self {
        self.granularity = granularity.max(1);
        self
    }

    /// The clock of the last generated operation.
    #[must_use]
    pub fn clock(&self) -> u64 {
        self.clock
    }

    fn new_deadline(&mut self) -> u64 {
        let span = RELATIVE_DEADLINE_NS.end() - RELATIVE_DEADLINE_NS.start() + 1;
        let relative = RELATIVE_DEADLINE_NS.start() + self.rng.below(span);
        let dl = self.clock.wrapping_add(relative);
        dl - dl % self.granularity
    }
}

impl Iterator for RealisticOps {
    type Item = Op;

    fn next(&mut self) -> Option<Op> {
        let num_cpus = self.deadlines.len() as u64;
        if num_cpus == 0 {
            return None;
        }
        self.clock = self.clock.wrapping_add(self.rng.below(MAX_TICK_NS + 1));
        let cpu_index = self.rng.below(num_cpus) as usize;
        let cpu = cpu_index as u32;
        let roll = self.rng.below(100);
        let becomes_busy = match self.deadlines[cpu_index] {
            None => roll < IDLE_TO_BUSY_PERCENT,
            Some(_) => roll < BUSY_UPDATE_PERCENT,
        };
        if becomes_busy {
            let dl = self.new_deadline();
            self.deadlines[cpu_index] = Some(dl);
            Some(Op::Set { cpu, dl })
        } else {
            self.deadlines[cpu_index] = None;
            Some(Op::Clear { cpu })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_ops_follow_the_c_driver() {
        let ops: Vec<Op> = CpudlBenchOps::new(3, 4).collect();
        let mut r = CPUDL_BENCH_SEED;
        for (i, op) in ops.iter().enumerate() {
            let cpu = (i % 3) as u32;
            let expected = if (r & 5) != 5 {
                Op::Set {
                    cpu,
                    dl: 0x8000_0000_0000_0000 - 0x3fff_ffff + r % 0x7fff_ffff,
                }
            } else {
                Op::Clear { cpu }
            };
            assert_eq!(*op, expected);
            r = r.wrapping_mul(1_103_515_245).wrapping_add(7917);
        }
        assert_eq!(ops.len(), 4);
        assert_eq!(CpudlBenchOps::new(0, 10).count(), 0);
        assert_eq!(CpudlBenchOps::new(4, 10).count(), 10);
    }

    #[test]
    fn bench_mix_at_32_cpus_matches_the_reference_report() {
        let mix = CpudlBenchOps::op_mix(32, 100_000);
        assert_eq!(
            mix,
            OpMix {
                inserts: 24,
                updates: 74_976,
                deletes: 0,
                noop_clears: 25_000,
                out_of_range: 0
            }
        );
    }

    #[test]
    fn analysis_finds_period_8_with_clears_at_0_and_6() {
        let analysis = CpudlBenchMixAnalysis::compute();
        assert_eq!(analysis.period, 8);
        assert_eq!(analysis.clear_residues, vec![0, 6]);
        assert_eq!(analysis.uniform_modulus, 8);
        let text = analysis.to_string();
        assert!(
            text.contains("with CPU counts that are multiples of 8 this mix never really deletes")
        );
        assert_eq!(analysis.residues_seen_by(4, 1), vec![1, 5]);
        assert_eq!(analysis.residues_seen_by(16, 6), vec![6]);
        // The structural claim agrees with simulation, including counts that
        // are not powers of two.
        for n in [1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256] {
            let mix = CpudlBenchOps::op_mix(n, 20_000);
            assert_eq!(
                mix.deletes == 0,
                analysis.never_really_deletes(n),
                "num_cpus={n}: {mix}"
            );
        }
        // The pattern itself, checked directly on the stream.
        for (i, op) in CpudlBenchOps::new(1, 1000).enumerate() {
            let is_clear = matches!(op, Op::Clear { .. });
            assert_eq!(
                is_clear,
                analysis.clear_residues.contains(&((i % 8) as u32))
            );
        }
    }

    #[test]
    fn realistic_ops_are_deterministic_and_cover_all_paths() {
        let a: Vec<Op> = RealisticOps::new(16, 42).take(5000).collect();
        let b: Vec<Op> = RealisticOps::new(16, 42).take(5000).collect();
        let c: Vec<Op> = RealisticOps::new(16, 43).take(5000).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        let mix = count_op_mix(a.iter().copied(), 16);
        assert!(mix.inserts > 100, "{mix}");
        assert!(mix.updates > 100, "{mix}");
        assert!(mix.deletes > 100, "{mix}");
        assert!(mix.noop_clears > 0, "{mix}");
        // Default start crosses 2^63 early.
        let crossed = a.iter().take(1000).any(|op| match op {
            Op::Set { dl, .. } => *dl >= 1 << 63,
            Op::Clear { .. } => false,
        });
        assert!(crossed);
        assert_eq!(RealisticOps::new(0, 1).next(), None);
    }

    #[test]
    fn coarse_granularity_produces_equal_deadlines() {
        let deadlines: Vec<u64> = RealisticOps::new(8, 7)
            .with_deadline_granularity(10_000_000)
            .take(500)
            .filter_map(|op| match op {
                Op::Set { dl, .. } => Some(dl),
                Op::Clear { .. } => None,
            })
            .collect();
        let mut unique = deadlines.clone();
        unique.sort_unstable();
        unique.dedup();
        assert!(unique.len() < deadlines.len() / 2);
        assert!(deadlines.iter().all(|dl| dl % 10_000_000 == 0));
    }
}
