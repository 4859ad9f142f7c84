//! The World of a Harness API core: its runs, journal, artifacts and gates, and the reference
//! core's mutants and variants. It is the model both suites are built on: the harness-api suite,
//! where hcpspec plays core to the harness under test, and the core-api suite's reference core.
//! It imports neither suite.

pub mod artifacts;
pub mod core;
pub mod gates;
pub mod knobs;
pub mod scenario;
pub mod tools;
#[allow(clippy::module_inception)]
pub mod world;
