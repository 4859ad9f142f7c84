//! Most integration tests, as one test binary: `cargo test` runs its binaries one after another,
//! and one binary lets these run side by side (they mostly wait on child processes, sockets and
//! deadlines) and links once. `cargo test --test it -- cli::` picks one file's tests.
//!
//! Apart, each a binary of its own: what asserts the whole process's peak RSS (`core_caps`,
//! `harness_hostile`), what sets the process's environment (`harness_env`, `snapshots`), and
//! the libtest-mimic harnesses (`suites`, `fuzz_corpus`).

#[path = "../common/mod.rs"]
mod common;

mod action_install;
mod action_log;
mod architecture;
mod bench_transports;
mod citations;
mod cli;
mod clusterfuzzlite;
mod core_api_coverage;
mod core_end_to_end;
mod core_hostile;
mod core_untrusted;
mod coverage;
mod deadlines;
mod diff;
mod docs;
mod echo_suite;
mod fuzz;
mod fuzz_corpus_dir;
mod fuzz_partition;
mod fuzz_unplayable;
mod hints;
mod host;
mod host_caps;
mod host_fakes;
mod hostile;
mod http_client;
mod loading;
mod main_memory;
mod pack_typed;
mod platforms;
mod redaction;
mod release;
mod renderings;
mod report_untrusted;
mod shape;
mod site;
mod snapshot_files;
mod stdio_lines;
mod stdio_orphans;
mod terminal;
mod trace;
mod transports;
mod vectors_untrusted;
mod verify_result;
mod versions;
