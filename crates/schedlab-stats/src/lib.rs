//! Pure statistics for schedlab (no I/O).
