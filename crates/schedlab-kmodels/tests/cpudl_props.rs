//! Property and regression tests for the cpudl heap variants: invariants,
//! Bugfix/Fast equivalence (and exactly where it ends), the original
//! wraparound bug, and the cpudl-bench op-mix figures.

use proptest::prelude::*;
use schedlab_kmodels::cpudl::{
    fast_moves_past_equal_ancestor, run_checked, run_lockstep, Bugfix, CheckedRunError,
    CpuDeadlineHeap, CpudlBenchMixAnalysis, CpudlBenchOps, Fast, HeapSnapshot, InvariantViolation,
    LockstepError, Op, OpMix, Orig, RealisticOps,
};

const HALF: u64 = 1 << 63;

/// Deadlines are `base + offset` with offsets below `2^62`, so every sequence
/// lives in a window where the modular comparison is a total order (the
/// kernel's assumption). Unrestricted `u64` deadlines break the invariants of
/// every variant, because `dl_time_before` is not transitive over the whole
/// ring.
fn window_base() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(HALF - (1 << 20)),
        Just(0u64.wrapping_sub(1 << 20)),
        Just(0u64),
        any::<u64>(),
    ]
}

/// Raw op material: (cpu, is_clear, offset seed).
fn raw_ops(max_len: usize) -> impl Strategy<Value = Vec<(u32, bool, u64)>> {
    prop::collection::vec(
        (any::<u32>(), prop::bool::weighted(0.3), any::<u64>()),
        0..max_len,
    )
}

/// Ops with pairwise distinct deadlines: the step index fills the low 8 bits.
fn distinct_deadline_case() -> impl Strategy<Value = (u32, u64, Vec<Op>)> {
    (
        1u32..=64,
        window_base(),
        prop_oneof![Just(1u64 << 13), 1u64..(1 << 54)],
        raw_ops(256),
    )
        .prop_map(|(num_cpus, base, spread, raw)| {
            let ops = raw
                .into_iter()
                .enumerate()
                .map(|(step, (cpu, is_clear, seed))| {
                    let cpu = cpu % num_cpus;
                    if is_clear {
                        Op::Clear { cpu }
                    } else {
                        let offset = (seed % spread) * 256 + step as u64;
                        Op::Set {
                            cpu,
                            dl: base.wrapping_add(offset),
                        }
                    }
                })
                .collect();
            (num_cpus, base, ops)
        })
}

/// Ops whose deadlines come from a handful of values, so ties are common.
fn tied_deadline_case() -> impl Strategy<Value = (u32, u64, Vec<Op>)> {
    (
        1u32..=64,
        window_base(),
        1u64..=8,
        prop_oneof![Just(1u64), 1u64..(1 << 59)],
        raw_ops(200),
    )
        .prop_map(|(num_cpus, base, distinct_values, scale, raw)| {
            let ops = raw
                .into_iter()
                .map(|(cpu, is_clear, seed)| {
                    let cpu = cpu % num_cpus;
                    if is_clear {
                        Op::Clear { cpu }
                    } else {
                        let offset = (seed % distinct_values) * scale;
                        Op::Set {
                            cpu,
                            dl: base.wrapping_add(offset),
                        }
                    }
                })
                .collect();
            (num_cpus, base, ops)
        })
}

/// The latest live deadline, ordering by offset from the window base.
fn latest_deadline(snapshot: &HeapSnapshot, base: u64) -> Option<u64> {
    snapshot
        .slots
        .iter()
        .map(|s| s.dl)
        .max_by_key(|dl| dl.wrapping_sub(base))
}

/// Replays `ops` on Bugfix and Fast side by side. While their states are
/// equal, checks that [`fast_moves_past_equal_ancestor`] predicts exactly
/// whether the next step splits them. Throughout, both must keep their
/// invariants, hold the same deadline for every CPU, and have a root holding
/// the latest deadline. Returns the step of the first divergence.
fn replay_bugfix_and_fast(
    num_cpus: u32,
    base: u64,
    ops: &[Op],
) -> Result<Option<usize>, TestCaseError> {
    let mut bugfix = Bugfix::new(num_cpus);
    let mut fast = Fast::new(num_cpus);
    let mut first_divergence = None;
    for (step, &op) in ops.iter().enumerate() {
        let before = bugfix.snapshot();
        let predicted = fast_moves_past_equal_ancestor(&before, op);
        bugfix.apply(op).unwrap();
        fast.apply(op).unwrap();
        let (after_bugfix, after_fast) = (bugfix.snapshot(), fast.snapshot());
        if let Err(v) = bugfix.check_invariants() {
            return Err(TestCaseError::fail(format!("bugfix step {step} {op}: {v}")));
        }
        if let Err(v) = fast.check_invariants() {
            return Err(TestCaseError::fail(format!("fast step {step} {op}: {v}")));
        }
        prop_assert_eq!(
            after_bugfix.deadlines_by_cpu(),
            after_fast.deadlines_by_cpu()
        );
        let latest = latest_deadline(&after_bugfix, base);
        prop_assert_eq!(bugfix.maximum().map(|m| m.1), latest);
        prop_assert_eq!(fast.maximum().map(|m| m.1), latest);
        if first_divergence.is_none() {
            let diverged = after_bugfix != after_fast;
            prop_assert_eq!(
                predicted,
                diverged,
                "step {} ({}): predicted {} but diverged={}\n{}",
                step,
                op,
                predicted,
                diverged,
                after_bugfix.side_by_side("bugfix", &after_fast, "fast")
            );
            if diverged {
                first_divergence = Some(step);
            }
        }
    }
    Ok(first_divergence)
}

proptest! {
    #[test]
    fn bugfix_and_fast_are_lockstep_equivalent_on_distinct_deadlines(
        (num_cpus, base, ops) in distinct_deadline_case()
    ) {
        prop_assert_eq!(replay_bugfix_and_fast(num_cpus, base, &ops)?, None);
        let steps = run_lockstep(&mut Bugfix::new(num_cpus), &mut Fast::new(num_cpus), ops.clone());
        prop_assert_eq!(steps, Ok(ops.len()));
    }

    #[test]
    fn with_ties_bugfix_and_fast_split_exactly_where_predicted(
        (num_cpus, base, ops) in tied_deadline_case()
    ) {
        replay_bugfix_and_fast(num_cpus, base, &ops)?;
    }

    #[test]
    fn realistic_streams_keep_invariants_and_split_only_where_predicted(
        num_cpus in 1u32..=64,
        seed in any::<u64>(),
        start in prop_oneof![Just(HALF - 1_000_000), Just(u64::MAX - 1_000_000), any::<u64>()],
        granularity in prop_oneof![Just(1u64), Just(1_000u64), Just(1_000_000u64)],
    ) {
        let ops: Vec<Op> = RealisticOps::new(num_cpus, seed)
            .with_start_clock(start)
            .with_deadline_granularity(granularity)
            .take(400)
            .collect();
        // Rounding to the granularity can put a deadline slightly before the
        // start clock, so order from a little earlier.
        replay_bugfix_and_fast(num_cpus, start.wrapping_sub(1 << 40), &ops)?;
    }

    #[test]
    fn orig_matches_bugfix_until_an_insert_at_or_above_two_to_the_63(
        (num_cpus, _base, ops) in distinct_deadline_case()
    ) {
        match run_lockstep(&mut Orig::new(num_cpus), &mut Bugfix::new(num_cpus), ops.clone()) {
            Ok(steps) => prop_assert_eq!(steps, ops.len()),
            Err(LockstepError::Diverged(d)) => {
                let inserted_high = matches!(d.op, Op::Set { cpu, dl }
                    if dl >= HALF && d.before_a.idx[cpu as usize].is_none());
                prop_assert!(inserted_high, "unexpected divergence:\n{}", d);
            }
            Err(other) => prop_assert!(false, "{}", other),
        }
    }

    #[test]
    fn orig_is_correct_below_two_to_the_63(
        num_cpus in 1u32..=64,
        raw in raw_ops(200),
    ) {
        let ops: Vec<Op> = raw
            .into_iter()
            .map(|(cpu, is_clear, seed)| {
                let cpu = cpu % num_cpus;
                if is_clear { Op::Clear { cpu } } else { Op::Set { cpu, dl: seed % HALF } }
            })
            .collect();
        prop_assert_eq!(run_checked(&mut Orig::new(num_cpus), ops.clone()), Ok(ops.len()));
        prop_assert_eq!(
            run_lockstep(&mut Orig::new(num_cpus), &mut Bugfix::new(num_cpus), ops.clone()),
            Ok(ops.len())
        );
    }
}

#[test]
fn orig_breaks_heap_order_on_a_known_sequence() {
    let ops = [
        Op::Set { cpu: 0, dl: HALF },
        Op::Set {
            cpu: 1,
            dl: HALF - 5,
        },
        Op::Set {
            cpu: 2,
            dl: HALF + 10,
        },
    ];
    let err = run_checked(&mut Orig::new(3), ops).unwrap_err();
    let CheckedRunError::Violation {
        step, violation, ..
    } = err
    else {
        panic!("expected a violation, got {err}")
    };
    assert_eq!(step, 2);
    assert_eq!(
        violation,
        InvariantViolation::HeapOrder {
            parent_slot: 0,
            parent_cpu: 0,
            parent_dl: HALF,
            child_slot: 2,
            child_cpu: 2,
            child_dl: HALF + 10,
        }
    );
    assert_eq!(run_checked(&mut Bugfix::new(3), ops), Ok(3));
    assert_eq!(run_checked(&mut Fast::new(3), ops), Ok(3));

    let LockstepError::Diverged(d) =
        run_lockstep(&mut Orig::new(3), &mut Bugfix::new(3), ops).unwrap_err()
    else {
        panic!("expected a divergence")
    };
    assert_eq!(d.step, 2);
    assert_eq!(d.after_a.slots[0].cpu, 0);
    assert_eq!(d.after_b.slots[0].cpu, 2);
}

#[test]
fn orig_diverges_from_bugfix_at_step_2_of_the_bench_mix() {
    for num_cpus in [2, 4, 8, 32, 256] {
        let LockstepError::Diverged(d) = run_lockstep(
            &mut Orig::new(num_cpus),
            &mut Bugfix::new(num_cpus),
            CpudlBenchOps::new(num_cpus, 100_000),
        )
        .unwrap_err() else {
            panic!("expected a divergence at {num_cpus} CPUs")
        };
        assert_eq!(d.step, 2, "{d}");
    }
    // One CPU: a single-node heap has no order to break.
    assert_eq!(
        run_lockstep(
            &mut Orig::new(1),
            &mut Bugfix::new(1),
            CpudlBenchOps::new(1, 100_000)
        ),
        Ok(100_000)
    );
}

#[test]
fn bugfix_and_fast_agree_on_the_bench_mix() {
    for num_cpus in [1, 2, 3, 4, 8, 16, 32, 64, 256] {
        assert_eq!(
            run_checked(
                &mut Fast::new(num_cpus),
                CpudlBenchOps::new(num_cpus, 20_000)
            ),
            Ok(20_000)
        );
        assert_eq!(
            run_lockstep(
                &mut Bugfix::new(num_cpus),
                &mut Fast::new(num_cpus),
                CpudlBenchOps::new(num_cpus, 20_000)
            ),
            Ok(20_000)
        );
    }
}

#[test]
fn bench_mix_figures_for_100k_ops() {
    let mix = |inserts, updates, deletes, noop_clears| OpMix {
        inserts,
        updates,
        deletes,
        noop_clears,
        out_of_range: 0,
    };
    let expected = [
        (1, mix(25_000, 50_000, 24_999, 1)),
        (2, mix(12_501, 62_499, 12_500, 12_500)),
        (4, mix(25_002, 49_998, 24_999, 1)),
        (8, mix(6, 74_994, 0, 25_000)),
        (16, mix(12, 74_988, 0, 25_000)),
        (32, mix(24, 74_976, 0, 25_000)),
        (64, mix(48, 74_952, 0, 25_000)),
        (256, mix(192, 74_808, 0, 25_000)),
    ];
    let analysis = CpudlBenchMixAnalysis::compute();
    for (num_cpus, want) in expected {
        let got = CpudlBenchOps::op_mix(num_cpus, 100_000);
        assert_eq!(got, want, "num_cpus={num_cpus}");
        assert_eq!(got.total(), 100_000);
        assert_eq!(analysis.never_really_deletes(num_cpus), got.deletes == 0);
    }
}

#[test]
fn maximum_is_the_latest_deadline_across_the_wrap() {
    let mut heap = Fast::new(4);
    heap.set(0, u64::MAX - 10).unwrap();
    heap.set(1, 5).unwrap(); // 16 ns after u64::MAX - 10 on the wrapping clock
    heap.set(2, u64::MAX).unwrap();
    assert_eq!(heap.maximum(), Some((1, 5)));
    heap.clear(1).unwrap();
    assert_eq!(heap.maximum(), Some((2, u64::MAX)));
}

/// The three smallest inputs (found by search) on which Fast and Bugfix lay
/// the heap out differently, one per operation kind. In each, the moving key
/// climbs past strictly earlier ancestors and then meets an equal one: Fast
/// passes it, Bugfix stops below it.
#[test]
fn minimal_tie_examples_for_insert_update_and_delete() {
    let set = |cpu, dl| Op::Set { cpu, dl };
    let insert = vec![set(1, 2), set(3, 2)];
    let update = vec![set(2, 0), set(3, 3), set(0, 1), set(1, 2), set(2, 3)];
    let delete = vec![
        set(1, 1),
        set(5, 0),
        set(2, 2),
        set(3, 3),
        set(1, 3),
        set(6, 1),
        set(0, 0),
        set(2, 2),
        set(0, 3),
        Op::Clear { cpu: 6 },
    ];
    for (ops, num_cpus) in [(insert, 4), (update, 4), (delete, 7)] {
        let last = ops.len() - 1;
        let mut bugfix = Bugfix::new(num_cpus);
        for &op in &ops[..last] {
            bugfix.apply(op).unwrap();
        }
        assert!(fast_moves_past_equal_ancestor(
            &bugfix.snapshot(),
            ops[last]
        ));
        let LockstepError::Diverged(d) = run_lockstep(
            &mut Bugfix::new(num_cpus),
            &mut Fast::new(num_cpus),
            ops.clone(),
        )
        .unwrap_err() else {
            panic!("expected a divergence")
        };
        assert_eq!(d.step, last, "{d}");
        assert_eq!(d.after_a.deadlines_by_cpu(), d.after_b.deadlines_by_cpu());
        assert_eq!(d.after_a.slots[0].dl, d.after_b.slots[0].dl);
    }
}
