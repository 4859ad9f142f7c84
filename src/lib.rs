//! hcpspec: the conformance test harness and protocol fuzzer for HCP agent runtimes.

pub mod adapter;
pub mod pack;
pub mod runtime;
pub mod schema;
pub mod shim;
pub mod case;
pub mod run;
pub mod exit;
pub mod report;
