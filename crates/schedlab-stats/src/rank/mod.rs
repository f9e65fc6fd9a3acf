//! The rank test benchstat reports: the Mann–Whitney U test, with p-values
//! as benchstat computes them (go-moremath's `MannWhitneyUTest`), including
//! when it uses the exact null distribution (up to 50 values per sample
//! without ties, up to 25 with ties) and when the normal approximation.

mod mann_whitney;
mod null_distribution;
mod ranking;

pub use mann_whitney::{mann_whitney_u, MannWhitney, RankMethod};
