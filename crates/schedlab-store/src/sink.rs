//! The runner's sink over a store: each iteration, probe and case failure written the moment it
//! happens.
use schedlab_core::plan::CaseSpec;
use schedlab_core::record::IterationRecord;
use schedlab_core::runner::RunSink;

use crate::store::Store;

/// Adapts a store to the runner's sink for one run.
pub struct StoreSink<'a> {
    pub store: &'a mut dyn Store,
    pub run_id: i64,
}

impl RunSink for StoreSink<'_> {
    fn record_iteration(
        &mut self,
        case_index: usize,
        _case: &CaseSpec,
        iteration: &IterationRecord,
    ) -> std::result::Result<(), String> {
        self.store
            .record_iteration(self.run_id, case_index, iteration)
            .map_err(|e| e.to_string())
    }

    fn record_probe(
        &mut self,
        case_index: usize,
        _case: &CaseSpec,
        probe: &schedlab_core::probe::ProbeRecord,
    ) -> std::result::Result<(), String> {
        self.store
            .record_probe(self.run_id, case_index, probe)
            .map_err(|e| e.to_string())
    }

    fn record_case_failure(
        &mut self,
        case_index: usize,
        _case: &CaseSpec,
        message: &str,
    ) -> std::result::Result<(), String> {
        self.store
            .record_case_failure(self.run_id, case_index, message)
            .map_err(|e| e.to_string())
    }

    fn case_finished(
        &mut self,
        case_index: usize,
        _case: &CaseSpec,
    ) -> std::result::Result<(), String> {
        self.store
            .summarise_case(self.run_id, case_index)
            .map_err(|e| e.to_string())
    }
}
