//! hcpspec: the conformance test harness and protocol fuzzer for HCP agent runtimes.

pub mod adapter;
pub mod case;
pub mod error;
pub mod exit;
pub mod hash;
pub mod input;
pub mod knob;
pub mod mutate;
pub mod pointer;
pub mod report;
pub mod run;
pub mod schema;
pub mod shim;
pub mod snapshot;
pub mod spec;
pub mod suites;
pub mod trace;
pub mod vectors;
