//! The suites whose vocabulary is code: each folder here is one suite's driver, beside its
//! folder of vectors.

pub mod core_api;
pub mod harness_api;
pub mod hcp;
