//! The contract's structure-aware generators, drawing from a [`crate::mutate::Source`]: whole
//! fuzz cases (`case`) and edits of pack files (`pack`), shared by `hcpspec fuzz` and the
//! cargo-fuzz targets.

pub mod case;
pub mod pack;
