//! The binary data an iteration keeps beside its measurements (serialized latency histograms):
//! made by the workloads, stored with the run's records, and so in a module of its own that
//! depends on neither.
use serde::{Deserialize, Serialize};

/// A named binary blob of an iteration, with the encoding that reads it back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attachment {
    pub name: String,
    /// How `data` is encoded, e.g. `hdrhistogram-v2-deflate`.
    pub encoding: String,
    #[serde(skip)]
    pub data: Vec<u8>,
}
