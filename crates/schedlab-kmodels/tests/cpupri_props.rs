//! Property tests for the cpupri model: `find` against the plain reference
//! on random states, the two layouts against each other, and a short
//! multi-threaded run where every owner's search is checked exactly.

use proptest::prelude::*;
use schedlab_kmodels::cpupri::{
    check_find_answer, partition_blocks, partition_interleaved, reference_find, CpuMask, CpuOwner,
    CpuPri, Cpupri, Layout, NumaTopology, CPUPRI_NR_PRIORITIES,
};
use schedlab_kmodels::rng::SplitMix64;

/// Deterministic per-(seed, cpu) bits for building allowed masks.
fn mix(seed: u64, cpu: u32) -> u64 {
    let mut z = seed ^ u64::from(cpu).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Allowed sets of varying density; density 4 means every CPU.
fn allowed_mask(nr_cpus: u32, seed: u64, density: u8) -> CpuMask {
    CpuMask::from_cpus((0..nr_cpus).filter(|&c| mix(seed, c) % 4 < u64::from(density))).unwrap()
}

/// Levels drawn mostly from a few values so several CPUs share a level.
fn level() -> impl Strategy<Value = Option<CpuPri>> {
    prop_oneof![
        1 => Just(None),
        4 => prop::sample::select(vec![0u8, 1, 2, 50, 98, 99, 100]).prop_map(CpuPri::new),
        2 => (0u8..CPUPRI_NR_PRIORITIES as u8).prop_map(CpuPri::new),
    ]
}

fn topology() -> impl Strategy<Value = NumaTopology> {
    (1u32..=300)
        .prop_flat_map(|nr| (Just(nr), 1u32..=nr.min(8)))
        .prop_map(|(nr, nodes)| NumaTopology::new(nr, nodes).unwrap())
}

proptest! {
    #[test]
    fn find_matches_reference_and_layouts_agree(
        topo in topology(),
        sets in prop::collection::vec((any::<u32>(), level()), 0..400),
        queries in prop::collection::vec((0u8..CPUPRI_NR_PRIORITIES as u8, any::<u64>(), 0u8..=4, any::<u32>()), 1..40),
    ) {
        let shared = Cpupri::new(topo, Layout::Shared);
        let per_node = Cpupri::new(topo, Layout::PerNode);
        for (cpu, pri) in sets {
            let cpu = cpu % topo.nr_cpus();
            shared.set(cpu, pri).unwrap();
            per_node.set(cpu, pri).unwrap();
        }
        prop_assert_eq!(shared.check_quiescent(), Ok(()));
        prop_assert_eq!(per_node.check_quiescent(), Ok(()));
        let state = shared.cpu_to_pri_snapshot();
        prop_assert_eq!(&state, &per_node.cpu_to_pri_snapshot());
        for (task_level, seed, density, start_node) in queries {
            let task_pri = CpuPri::new(task_level).unwrap();
            let allowed = allowed_mask(topo.nr_cpus(), seed, density);
            let expected = reference_find(&state, task_pri, &allowed);
            let (mut out_shared, mut out_node) = (CpuMask::new(), CpuMask::new());
            let got_shared = shared.find(task_pri, &allowed, &mut out_shared);
            let got_node = per_node.find_from_node(start_node, task_pri, &allowed, &mut out_node);
            prop_assert_eq!(
                check_find_answer(expected.as_ref(), &allowed, got_shared, &out_shared),
                Ok(())
            );
            prop_assert_eq!(
                check_find_answer(expected.as_ref(), &allowed, got_node, &out_node),
                Ok(())
            );
            prop_assert_eq!(got_shared, got_node);
            prop_assert_eq!(&out_shared, &out_node);
        }
    }
}

fn random_level(rng: &mut SplitMix64) -> Option<CpuPri> {
    match rng.below(8) {
        0 => None,
        1..=3 => CpuPri::new([0, 1, 50, 99][rng.below(4) as usize]),
        _ => CpuPri::new(rng.below(CPUPRI_NR_PRIORITIES as u64) as u8),
    }
}

/// Every owner changes only its own CPUs and checks every search it makes
/// over them; after the threads finish the whole map must be consistent and
/// agree with the reference.
fn contended_run(layout: Layout, owners: Vec<CpuMask>, topo: NumaTopology) {
    const ITERATIONS: u32 = 3000;
    let map = Cpupri::new(topo, layout);
    std::thread::scope(|scope| {
        for (t, cpus) in owners.into_iter().enumerate() {
            let map = &map;
            scope.spawn(move || {
                let mut owner = CpuOwner::new(map, cpus).unwrap();
                let own: Vec<u32> = owner.cpus().iter().collect();
                let mut rng = SplitMix64(0x1234_5678 + t as u64 * 7919);
                let mut out = CpuMask::new();
                let all = CpuMask::first_n(topo.nr_cpus());
                for i in 0..ITERATIONS {
                    let cpu = own[rng.below(own.len() as u64) as usize];
                    owner.set(map, cpu, random_level(&mut rng)).unwrap();
                    let task_pri =
                        CpuPri::new(rng.below(CPUPRI_NR_PRIORITIES as u64) as u8).unwrap();
                    let allowed = if i % 3 == 0 {
                        all.clone()
                    } else {
                        allowed_mask(topo.nr_cpus(), rng.next_u64(), 2)
                    };
                    let start_node = topo.node_of(cpu).unwrap();
                    if let Err(mismatch) =
                        owner.check_find(map, start_node, task_pri, &allowed, &mut out)
                    {
                        panic!("thread {t} iteration {i} ({layout:?}): {mismatch}");
                    }
                }
            });
        }
    });
    map.check_quiescent().unwrap();
    let state = map.cpu_to_pri_snapshot();
    let all = CpuMask::first_n(topo.nr_cpus());
    let mut out = CpuMask::new();
    for level in 0..CPUPRI_NR_PRIORITIES as u8 {
        let task_pri = CpuPri::new(level).unwrap();
        let got = map.find(task_pri, &all, &mut out);
        let expected = reference_find(&state, task_pri, &all);
        check_find_answer(expected.as_ref(), &all, got, &out).unwrap();
    }
}

#[test]
fn owned_cpu_searches_agree_with_reference_under_contention() {
    let topo = NumaTopology::new(130, 3).unwrap();
    for layout in [Layout::Shared, Layout::PerNode] {
        contended_run(layout, partition_interleaved(130, 4), topo);
        contended_run(layout, partition_blocks(130, 4), topo);
    }
}
