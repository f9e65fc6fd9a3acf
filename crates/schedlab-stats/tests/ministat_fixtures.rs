//! Our ministat reproduction against the real ministat's printed output
//! (`fixtures/gen_ministat.py`): vitals rows and the difference block must
//! match byte for byte.

mod common;

use common::{cases, nums, parse};
use schedlab_stats::ministat::{format_g, ministat_difference, ministat_vitals};

#[test]
fn output_matches_ministat_byte_for_byte() {
    let root = parse(include_str!("fixtures/ministat.json"));
    let all = cases(&root, "cases");
    assert!(all.len() >= 60);
    for case in all {
        let level = case["confidence_pct"].as_str().unwrap();
        let ctx = format!("{} at {level}%", case["name"]);
        let confidence = level.parse::<f64>().unwrap() / 100.0;
        let reference = nums(&case["reference"]);
        let compared = nums(&case["compared"]);

        let vitals_ref = ministat_vitals(&reference).unwrap();
        assert_eq!(
            vitals_ref.to_ministat_line('x'),
            case["vitals_reference"]["line"].as_str().unwrap(),
            "{ctx}"
        );
        let vitals_cmp = ministat_vitals(&compared).unwrap();
        assert_eq!(
            vitals_cmp.to_ministat_line('+'),
            case["vitals_compared"]["line"].as_str().unwrap(),
            "{ctx}"
        );

        let difference = ministat_difference(&reference, &compared, confidence).unwrap();
        let expected = &case["difference"];
        assert_eq!(
            difference.significant,
            expected["significant"].as_bool().unwrap(),
            "{ctx}"
        );
        assert_eq!(
            difference.to_ministat_text(),
            expected["text"].as_str().unwrap(),
            "{ctx}"
        );
        if difference.significant {
            for (ours, key) in [
                (difference.diff, "diff"),
                (difference.half_width, "half_width"),
                (difference.rel_diff_pct.unwrap(), "rel_diff_pct"),
                (difference.rel_half_width_pct.unwrap(), "rel_half_width_pct"),
                (difference.pooled_s, "pooled_s"),
            ] {
                assert_eq!(
                    format_g(ours, 6),
                    expected[key].as_str().unwrap(),
                    "{ctx} {key}"
                );
            }
        }
    }
}

#[test]
fn reference_tools_example() {
    // reference-tools.md §5: ministat hb_proc.txt hb_thr.txt
    let proc = [1.843, 1.975, 1.991, 2.038, 2.046];
    let thr = [2.354, 2.378, 2.420, 2.462, 2.834];
    let d = ministat_difference(&proc, &thr, 0.95).unwrap();
    assert_eq!(
        d.to_ministat_text(),
        "Difference at 95.0% confidence\n\t0.511 +/- 0.219788\n\t25.8263% +/- 11.1082%\n\t(Student's t, pooled s = 0.1507)\n"
    );
}
