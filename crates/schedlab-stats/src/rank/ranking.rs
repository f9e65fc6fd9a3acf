//! Average ranks with tie bookkeeping for the Mann–Whitney U test.

/// Ranks of `values` (1-based, ties get the average of the ranks they span)
/// and the size of every group of tied values. Values must be finite.
pub(crate) struct Ranking {
    pub ranks: Vec<f64>,
    pub tie_group_sizes: Vec<usize>,
}

impl Ranking {
    pub(crate) fn new(values: &[f64]) -> Self {
        let mut order: Vec<usize> = (0..values.len()).collect();
        order.sort_unstable_by(|&i, &j| values[i].total_cmp(&values[j]));
        let mut ranks = vec![0.0; values.len()];
        let mut tie_group_sizes = Vec::new();
        let mut start = 0;
        while start < order.len() {
            let mut end = start + 1;
            // `==` rather than total order so that -0.0 and 0.0 tie.
            while end < order.len() && values[order[end]] == values[order[start]] {
                end += 1;
            }
            let average_rank = (start + 1 + end) as f64 / 2.0;
            for &index in &order[start..end] {
                ranks[index] = average_rank;
            }
            tie_group_sizes.push(end - start);
            start = end;
        }
        Ranking {
            ranks,
            tie_group_sizes,
        }
    }

    pub(crate) fn has_ties(&self) -> bool {
        self.tie_group_sizes.iter().any(|&t| t > 1)
    }

    /// `sum(t³ - t)` over tie groups, the term every tie correction uses.
    pub(crate) fn tie_term(&self) -> f64 {
        self.tie_group_sizes
            .iter()
            .map(|&t| {
                let t = t as f64;
                t * t * t - t
            })
            .sum()
    }
}
