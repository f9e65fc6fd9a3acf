//! The ministat style: for each case and metric, every side as one ministat dataset — the legend,
//! the ASCII distribution plot, N/Min/Max/Median/Avg/Stddev, and for each candidate "Difference at
//! 95.0% confidence … (Student's t, pooled s = …)" or "No difference proven …", the same digits
//! FreeBSD ministat prints — followed by schedlab's own verdict on that row. The datasets are the
//! row's units (one value per run, boot or A/B round), never the iterations of one run.
use schedlab_analysis::model::{Comparison, MinistatFigures, Row};
use schedlab_analysis::units::Design;
use schedlab_stats::ministat::MinistatVitals;

use super::block::{Block, Document};
use super::footer;
use super::phrases::{ministat_no_test, row_mark, row_note, verdict_name, SIGN};
use crate::wrap::{wrap, WIDTH};

/// ministat's dataset symbols; plot cells holding several datasets OR their indices together.
const SYMBOLS: [char; 8] = [' ', 'x', '+', '*', '%', '#', '@', 'O'];
/// ministat's width when its output is not a terminal.
pub const DEFAULT_WIDTH: usize = 74;

const VITALS_HEAD: &str =
    "    N           Min           Max        Median           Avg        Stddev";

/// What of ministat's report to print: its switches `-A` (no plot), `-n` (statistics only),
/// `-q` (no legend or header), `-s` (a bar line per dataset) and `-w` (plot width).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// The ASCII-art plot (off with `-A` and `-n`).
    pub plot: bool,
    /// Each candidate's difference, schedlab's verdict and the statistics footer (off with `-n`).
    pub differences: bool,
    /// The dataset legend, the block heading and the statistics header (off with `-q`).
    pub legend: bool,
    /// Each dataset's mean ± sd, median and mean bar on its own line (`-s`).
    pub separate_bars: bool,
    /// Plot width in characters between the borders (`-w`).
    pub width: usize,
}

impl Default for Layout {
    fn default() -> Self {
        Layout {
            plot: true,
            differences: true,
            legend: true,
            separate_bars: false,
            width: DEFAULT_WIDTH,
        }
    }
}

/// Where a dataset's bar goes: its mean ± sd (`|___|`), median (`M`) and mean (`A`), from the
/// model's vitals; a lone value is its own median and mean, with no bar.
#[derive(Debug, Clone, Copy)]
struct BarMarks {
    spread: Option<(f64, f64)>,
    median: f64,
    avg: f64,
}

fn bar_marks(sorted: &[f64], vitals: Option<MinistatVitals>) -> BarMarks {
    match vitals {
        Some(v) => BarMarks {
            spread: Some((v.avg - v.stddev, v.avg + v.stddev)),
            median: v.median,
            avg: v.avg,
        },
        None => BarMarks {
            spread: None,
            median: sorted[sorted.len() / 2],
            avg: sorted[sorted.len() / 2],
        },
    }
}

/// The plot ministat draws for `datasets` (each sorted ascending, none empty) with their vitals
/// (as the model computed them; `None` for a dataset too small to have them), as lines without
/// newlines. Implemented from ministat's description: the x range covers every dataset's min,
/// max and mean ± one standard deviation; points stack upwards in their column; one bar line
/// shows each dataset's mean ± sd (`|___|`), median (`M`) and mean (`A`).
pub fn plot(datasets: &[Vec<f64>], vitals: &[Option<MinistatVitals>], width: usize) -> Vec<String> {
    plot_bars(datasets, vitals, width, false)
}

/// [`plot`], with each dataset's bar on a line of its own when `separate` (ministat -s).
pub fn plot_bars(
    datasets: &[Vec<f64>],
    vitals: &[Option<MinistatVitals>],
    width: usize,
    separate: bool,
) -> Vec<String> {
    let width = width.max(2);
    let marks: Vec<BarMarks> = datasets
        .iter()
        .enumerate()
        .map(|(i, ds)| bar_marks(ds, vitals.get(i).copied().flatten()))
        .collect();
    let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
    for (ds, mark) in datasets.iter().zip(&marks) {
        let (low, high) = mark.spread.unwrap_or((f64::NAN, f64::NAN));
        for v in [ds[0], ds[ds.len() - 1], low, high] {
            if v.is_nan() {
                continue;
            }
            min = min.min(v);
            max = max.max(v);
        }
    }
    let span = max - min;
    if span.is_nan() || span <= 0.0 || span.is_infinite() {
        return vec!["[no plot, span is zero width]".to_string()];
    }
    let dx = span / (width as f64 - 1.0);
    let x0 = min - 0.5 * dx;
    let column = |v: f64| (((v - x0) / dx) as usize).min(width - 1);

    let mut rows: Vec<Vec<u8>> = vec![vec![0; width]];
    let mut height = 0;
    let mut bars = vec![vec![0u8; width]; if separate { datasets.len() } else { 1 }];
    for (index, ds) in datasets.iter().enumerate() {
        let val = (index + 1) as u8;
        let bar = &mut bars[if separate { index } else { 0 }];
        // The tallest stack of this dataset decides the plot's height, as in ministat.
        let mut tallest = 1;
        let mut run = 0;
        let mut previous = usize::MAX;
        for &v in ds {
            let x = column(v);
            run = if x == previous { run + 1 } else { 1 };
            previous = x;
            tallest = tallest.max(run);
        }
        height = tallest + 1;
        while rows.len() < height {
            rows.push(vec![0; width]);
        }
        previous = usize::MAX;
        run = 0;
        for &v in ds {
            let x = column(v);
            run = if x == previous { run + 1 } else { 1 };
            previous = x;
            rows[run][x] |= val;
        }
        let mark = marks[index];
        if let Some((low, high)) = mark.spread {
            let (low, high) = (column(low), column(high));
            bar[high] = b'|';
            bar[low] = b'|';
            for cell in bar.iter_mut().take(high).skip(low + 1) {
                if *cell == 0 {
                    *cell = b'_';
                }
            }
        }
        bar[column(mark.median)] = b'M';
        bar[column(mark.avg)] = b'A';
    }
    let border = format!("+{}+", "-".repeat(width));
    let mut lines = vec![border.clone()];
    for i in 1..height {
        let row = &rows[height - i];
        let cells: String = row
            .iter()
            .map(|&k| SYMBOLS.get(k as usize).copied().unwrap_or('?'))
            .collect();
        lines.push(format!("|{cells}|"));
    }
    for bar in &bars {
        let bar: String = bar
            .iter()
            .map(|&k| if k == 0 { ' ' } else { k as char })
            .collect();
        lines.push(format!("|{bar}|"));
    }
    lines.push(border);
    lines
}

/// One ministat report as lines: the legend, the plot of each dataset and the vitals and
/// differences the model computed (as much of it as `layout` asks for; `differences` may be
/// empty when it asks for none).
pub fn block_lines(
    names: &[String],
    datasets: &[Vec<f64>],
    vitals: &[Option<MinistatVitals>],
    differences: &[&MinistatFigures],
    layout: Layout,
) -> Vec<String> {
    let mut lines = Vec::new();
    let sorted: Vec<Vec<f64>> = datasets
        .iter()
        .map(|d| {
            let mut d = d.clone();
            d.sort_by(f64::total_cmp);
            d
        })
        .collect();
    if layout.legend {
        for (i, name) in names.iter().enumerate() {
            lines.push(format!(
                "{} {name}",
                SYMBOLS[(i + 1).min(SYMBOLS.len() - 1)]
            ));
        }
    }
    if layout.plot && sorted.iter().all(|d| !d.is_empty()) {
        lines.extend(plot_bars(
            &sorted,
            vitals,
            layout.width,
            layout.separate_bars,
        ));
    }
    if layout.legend {
        lines.push(VITALS_HEAD.to_string());
    }
    for (i, ds) in sorted.iter().enumerate() {
        let symbol = SYMBOLS[(i + 1).min(SYMBOLS.len() - 1)];
        lines.push(match vitals.get(i).copied().flatten() {
            Some(v) => v.to_ministat_line(symbol),
            None if ds.len() < 2 => format!("{symbol} {:>3} (too few to describe)", ds.len()),
            None => format!("{symbol} {:>3} (too large to describe)", ds.len()),
        });
        if i > 0 && layout.differences {
            let Some(figures) = differences.get(i - 1) else {
                continue;
            };
            match (&figures.difference, &figures.no_test) {
                (Some(d), _) => lines.extend(d.to_ministat_text().lines().map(String::from)),
                (None, Some(why)) => lines.extend(crate::wrap::wrap(
                    &format!("no test: {}", ministat_no_test(why)),
                    crate::wrap::WIDTH,
                    2,
                )),
                (None, None) => lines.push("no test".to_string()),
            }
        }
    }
    lines
}

/// The ministat style: every case and metric's report in one preformatted block, each followed
/// by schedlab's verdicts, then the statistics footer.
pub fn document(c: &Comparison) -> Document {
    document_with(c, Layout::default())
}

/// The ministat style with ministat's switches (`schedlab stat -A -n -q -s -w`); the statistics
/// footer goes with the differences (`-n` leaves both out).
pub fn document_with(c: &Comparison, layout: Layout) -> Document {
    Document {
        sections: vec![vec![Block::Preformatted(lines(c, layout))]],
        closing: layout.differences.then(|| footer::block(c)),
    }
}

/// One dataset alone (`schedlab stat FILE`), as ministat prints a single file: legend, plot and
/// vitals. There is nothing to compare, so no test, no verdict and no footer.
pub fn dataset_document(
    name: &str,
    values: &[f64],
    vitals: MinistatVitals,
    layout: Layout,
) -> Document {
    let names = [name.to_string()];
    let lines = block_lines(&names, &[values.to_vec()], &[Some(vitals)], &[], layout);
    Document {
        sections: vec![vec![Block::Preformatted(lines)]],
        closing: None,
    }
}

/// The ministat blocks of every case and metric, each followed by schedlab's verdicts.
fn lines(c: &Comparison, layout: Layout) -> Vec<String> {
    let mut lines = Vec::new();
    for (i, rows) in c.rows_by_case_metric().into_iter().enumerate() {
        if i > 0 {
            lines.push(String::new());
        }
        let first = rows[0];
        if layout.legend {
            let heading = format!(
                "{} · {} ({SIGN}; {} is better; {})",
                first.case,
                first.metric,
                first.better.as_str(),
                if first.pairs_by_boot {
                    "one value per boot, the mean of its runs', of each of its two cases"
                } else if first.pairs_within_runs {
                    "one value per run, of each of its two cases"
                } else {
                    unit_phrase(first.design)
                }
            );
            lines.extend(wrap(&heading, WIDTH, 2));
        }
        let mut names = vec![c.base.name.clone()];
        let mut datasets = vec![first.base_side.units.clone()];
        let mut vitals = vec![first.base_side.ministat];
        let mut differences = Vec::new();
        for row in &rows {
            names.push(row.candidate.clone());
            datasets.push(row.candidate_side.units.clone());
            vitals.push(row.candidate_side.ministat);
            differences.push(&row.styles.ministat);
        }
        lines.extend(block_lines(
            &names,
            &datasets,
            &vitals,
            &differences,
            layout,
        ));
        if layout.differences {
            for row in &rows {
                // Not `schedlab: `, which starts every error line: this is a result.
                let verdict = format!("verdict: {} {}", row.candidate, verdict_phrase(row));
                lines.extend(wrap(&verdict, WIDTH, 4));
            }
        }
    }
    lines
}

/// What one value of a dataset is.
fn unit_phrase(design: Design) -> &'static str {
    match design {
        Design::Runs => "one value per run",
        Design::Boots => "one value per boot",
        Design::Pairs => "one value per A/B round",
        Design::Values => "one value per line of each file",
    }
}

/// "regression +25.83% [CI +15.1%, +37.6%] q=0.0010" and the like.
pub fn verdict_phrase(row: &Row) -> String {
    let change = row
        .change_pct
        .map_or("-".to_string(), |p| format!("{p:+.2}%"));
    let ci = row.ci_pct().map_or(String::new(), |(low, high)| {
        format!(" [{low:+.2}%, {high:+.2}%]")
    });
    let q = row.q_value.map_or(String::new(), |q| format!(" q={q:.4}"));
    let note = row
        .note
        .as_ref()
        .map_or(String::new(), |n| format!(" ({})", row_note(n)));
    format!(
        "{} {} {change}{ci}{q}{note}",
        row_mark(row),
        verdict_name(row.verdict)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_stats::ministat::ministat_vitals;

    fn vitals_of(datasets: &[Vec<f64>]) -> Vec<Option<MinistatVitals>> {
        datasets.iter().map(|d| ministat_vitals(d).ok()).collect()
    }

    /// The plot ministat 20150715 drew for these two data files at its default width.
    #[test]
    fn plot_matches_ministat() {
        let x = vec![1.843, 1.975, 1.991, 2.038, 2.046];
        let plus = vec![2.354, 2.378, 2.420, 2.462, 2.834];
        let datasets = [x, plus];
        let lines = plot(&datasets, &vitals_of(&datasets), DEFAULT_WIDTH);
        let expected = [
            "+--------------------------------------------------------------------------+",
            "|x         xx  xx                      ++   +  +                          +|",
            "|    |_____AM____|                |_________M____A_____________|           |",
            "+--------------------------------------------------------------------------+",
        ];
        assert_eq!(lines, expected);
    }

    #[test]
    fn overlapping_datasets_stack_and_merge() {
        let x = vec![1.843, 1.975, 1.991, 2.038, 2.046];
        let plus = vec![2.354, 2.378, 2.420, 2.462, 2.834];
        let datasets = [x.clone(), plus, x];
        let lines = plot(&datasets, &vitals_of(&datasets), 40);
        let expected = [
            "+----------------------------------------+",
            "|        *                               |",
            "|*    ** *           ++ ++              +|",
            "|  |__AM__|        |____M_A_______|      |",
            "+----------------------------------------+",
        ];
        assert_eq!(lines, expected);
    }

    #[test]
    fn zero_span_says_so() {
        let datasets = [vec![1.0, 1.0, 1.0]];
        assert_eq!(
            plot(&datasets, &vitals_of(&datasets), 74),
            vec!["[no plot, span is zero width]"]
        );
    }
}
