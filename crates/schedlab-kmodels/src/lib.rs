//! User-space models of kernel scheduler data structures.
