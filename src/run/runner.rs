//! The runner: one run of a suite's selected cases on each target runtime, judged once, with
//! expectations and snapshots applied, into the RunResult. Reporters (the terminal, the files)
//! see it only through [`Event`]s, in the order things happen; the CLI and `cargo test` are two
//! callers of this one path.

use super::expectations::{Expect, Expectations, Outcome};
use super::result::{fnv1a, RunResult, RuntimeRun, Summary};
use super::{par_each, run_all, Annotations, CaseResult, RunEnv, Verdict};
use crate::adapter::Connector;
use crate::case::matcher::Claims;
use crate::case::{Case, Suite};
use crate::snapshot::{self, Drift};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

/// One implementation to run the cases on: its spec as the user wrote it, and how to drive it.
pub struct Target {
    pub spec: String,
    pub drive: Drive,
}

/// How a suite drives what it certifies.
pub enum Drive {
    /// A runtime behind a shim: a connector makes a fresh adapter per case.
    Shim(Connector),
    /// A harness started per scenario under the launch contract (docs/harness-api.md).
    Harness(crate::suites::harness_api::Harness),
    /// A core behind its control shim (docs/core-protocol.md): hcpspec plays the harness.
    Core(crate::suites::core_api::Connector),
    /// An adapter behind its host shim (docs/host-protocol.md), linked with recording fakes.
    Host(crate::suites::host::Connector),
}

impl Target {
    pub fn shim(spec: &str, connect: Connector) -> Target {
        Target {
            spec: spec.to_string(),
            drive: Drive::Shim(connect),
        }
    }

    /// The target `spec` names for a suite, by what the suite drives. A bad spec is a usage
    /// error naming it.
    pub fn for_suite(
        suite: &Suite,
        spec: &str,
        opts: &crate::adapter::Options,
    ) -> Result<Target, String> {
        if suite.drives == crate::suites::core_api::DRIVES {
            let c = crate::suites::core_api::connector(spec, opts)?;
            return Ok(Target {
                spec: spec.to_string(),
                drive: Drive::Core(c),
            });
        }
        if suite.drives == crate::suites::host::DRIVES {
            let c = crate::suites::host::connector(spec, opts)?;
            return Ok(Target {
                spec: spec.to_string(),
                drive: Drive::Host(c),
            });
        }
        if suite.drives == crate::suites::harness_api::DRIVES {
            let h = crate::suites::harness_api::Harness::parse(spec)?;
            return Ok(Target {
                spec: spec.to_string(),
                drive: Drive::Harness(h),
            });
        }
        crate::adapter::connector_with(spec, opts).map(|c| Target::shim(spec, c))
    }
}

/// What to do with snapshots.
#[derive(Debug, Clone)]
pub enum Snapshots {
    Off,
    /// Compare with `DIR/<runtime>/<suite>/`; drift fails the run and leaves a `.snap.new`.
    Check(PathBuf),
    /// Write new and changed snapshots under `DIR` instead of failing.
    Accept(PathBuf),
}

/// What happened, for reporters. Cases finish in any order (they run in parallel); everything
/// else comes in run order.
pub enum Event<'a> {
    RuntimeStarted {
        spec: &'a str,
        info: &'a Value,
        cases: usize,
    },
    CaseFinished {
        spec: &'a str,
        result: &'a CaseResult,
    },
    Drifted {
        spec: &'a str,
        result: &'a CaseResult,
        drift: &'a Drift,
        written: &'a Path,
    },
    RuntimeFinished {
        spec: &'a str,
        run: &'a RuntimeRun,
        cases: &'a [Case],
    },
    ParityDiffered {
        difference: &'a crate::run::parity::Difference,
    },
}

/// Anything that watches a run: the terminal table and progress bar, a JSON stream …
pub trait Reporter: Send {
    fn event(&mut self, event: &Event<'_>);
}

/// A reporter that watches nothing (`cargo test`, benches).
pub struct Quiet;

impl Reporter for Quiet {
    fn event(&mut self, _: &Event<'_>) {}
}

/// Why a run could not finish.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("runtime {spec} unreachable: {message}")]
    Unreachable { spec: String, message: String },
    #[error("{0}")]
    Snapshot(String),
}

pub struct Runner<'a> {
    pub suite: &'a Suite,
    pub cases: &'a [Case],
    pub env: &'a RunEnv,
    pub expectations: &'a Expectations,
    pub snapshots: Snapshots,
    pub jobs: usize,
}

impl Runner<'_> {
    /// Run every case on every target. The result is keyed by case name, never by position.
    pub fn run(
        &self,
        targets: &[Target],
        reporter: &mut dyn Reporter,
    ) -> Result<RunResult, RunError> {
        let mut runs = Vec::new();
        for t in targets {
            runs.push(self.run_target(t, reporter)?);
        }
        let parity = super::parity::parity(&runs);
        for d in &parity {
            reporter.event(&Event::ParityDiffered { difference: d });
        }
        Ok(RunResult {
            schema: super::result::SCHEMA.into(),
            hcpspec_version: env!("CARGO_PKG_VERSION").into(),
            suite: self.suite.name.clone(),
            sections: self.suite.sections.clone(),
            cases_hash: fnv1a(
                self.cases
                    .iter()
                    .map(|c| std::fs::read(&c.file).unwrap_or_default()),
            ),
            runtimes: runs,
            parity,
        })
    }

    fn run_target(&self, t: &Target, reporter: &mut dyn Reporter) -> Result<RuntimeRun, RunError> {
        let spec = t.spec.as_str();
        let info = match &t.drive {
            Drive::Shim(connect) => connect()
                .and_then(|mut a| {
                    a.call("initialize", json!({ "protocol": crate::shim::PROTOCOL }))
                        .map_err(|e| e.to_string())
                })
                .map_err(|e| RunError::Unreachable {
                    spec: spec.into(),
                    message: snapshot::contain_text(&e),
                })?,
            Drive::Harness(_) => crate::suites::harness_api::info(spec),
            Drive::Core(connect) => describe(spec, connect, "core.describe", "core")?,
            Drive::Host(connect) => describe(spec, connect, "host.describe", "adapter")?,
        };
        let claims = Claims::from_initialize(&info);
        // The runtime's name, version and features, as reports keep them.
        let info = snapshot::contain(&info);
        let run_name = info
            .pointer("/runtime/name")
            .and_then(Value::as_str)
            .unwrap_or(spec)
            .to_string();
        let skipped = |c: &Case| {
            self.expectations
                .lookup(&c.name())
                .is_some_and(|e| e.expect == Expect::Skip)
        };
        let to_run: Vec<Case> = self.cases.iter().filter(|c| !skipped(c)).cloned().collect();
        reporter.event(&Event::RuntimeStarted {
            spec,
            info: &info,
            cases: to_run.len(),
        });
        let start = Instant::now();
        let shared = Mutex::new(&mut *reporter);
        let done = |r: &CaseResult| {
            let mut rep = shared.lock().unwrap_or_else(|p| p.into_inner());
            rep.event(&Event::CaseFinished { spec, result: r });
        };
        // One HTTP shim of a core or a host adapter holds one case's state at a time.
        let jobs = match &t.drive {
            Drive::Core(_) | Drive::Host(_) if spec.starts_with("http://") => 1,
            _ => self.jobs,
        };
        let ran = match &t.drive {
            Drive::Shim(connect) => run_all(&to_run, self.env, &claims, jobs, connect, &done),
            Drive::Harness(h) => par_each(
                &to_run,
                jobs,
                &|c| crate::suites::harness_api::run_case(c, h),
                &done,
            ),
            Drive::Core(connect) => par_each(
                &to_run,
                jobs,
                &|c| crate::suites::core_api::run_case(c, connect),
                &done,
            ),
            Drive::Host(connect) => par_each(
                &to_run,
                jobs,
                &|c| crate::suites::host::run_case(c, connect),
                &done,
            ),
        };
        let mut by_name: std::collections::BTreeMap<String, CaseResult> =
            ran.into_iter().map(|r| (r.name.clone(), r)).collect();
        let mut results = Vec::new();
        for c in self.cases {
            let entry = self.expectations.lookup(&c.name()).cloned();
            let mut r = match by_name.remove(&c.name()) {
                Some(r) => r,
                None => skipped_result(c, entry.as_ref()),
            };
            r.annotations.outcome = Some(Outcome::of(&r, entry.as_ref()));
            r.annotations.expectation = entry;
            if let Some((drift, written)) = self.snapshot(&run_name, c, &r)? {
                reporter.event(&Event::Drifted {
                    spec,
                    result: &r,
                    drift: &drift,
                    written: &written,
                });
                r.annotations.drift = Some(drift);
            }
            results.push(r);
        }
        let mut summary = Summary::of(&results);
        summary.micros = start.elapsed().as_micros() as u64;
        let run = RuntimeRun {
            runtime: spec.to_string(),
            info,
            summary,
            cases: results,
        };
        reporter.event(&Event::RuntimeFinished {
            spec,
            run: &run,
            cases: self.cases,
        });
        Ok(run)
    }

    /// Drift of one case's observations from its snapshot, or none (also when accepting).
    fn snapshot(
        &self,
        runtime: &str,
        case: &Case,
        r: &CaseResult,
    ) -> Result<Option<(Drift, PathBuf)>, RunError> {
        let (root, accept) = match &self.snapshots {
            Snapshots::Off => return Ok(None),
            Snapshots::Check(root) => (root, false),
            Snapshots::Accept(root) => (root, true),
        };
        if matches!(r.verdict, Verdict::Skip { .. }) {
            return Ok(None);
        }
        let key = snapshot::Key {
            suite: &case.suite,
            id: &case.id,
            name: &r.name,
            source: &case.file,
        };
        let drift = snapshot::check(root, runtime, &key, &r.observations, accept)
            .map_err(RunError::Snapshot)?;
        Ok(drift.filter(|_| !accept))
    }
}

impl RunResult {
    /// Does this result fail a run? Unexpected MUST failures, errors and unimplemented MUST
    /// cases, drift, stale expectations under `strict`, transport parity differences.
    pub fn fails(&self, strict: bool) -> bool {
        !self.parity.is_empty()
            || self.runtimes.iter().flat_map(|r| &r.cases).any(|r| {
                r.annotations.drift.is_some()
                    || r.annotations
                        .outcome
                        .is_some_and(|o| o.fails_run(r.level, strict))
            })
    }
}

/// A shim's `describe` answer (`{protocol, WHAT: {name, version}}`) as the runtime info reports
/// keep.
fn describe(
    spec: &str,
    connect: &crate::adapter::Connector,
    method: &str,
    what: &str,
) -> Result<Value, RunError> {
    let d = connect()
        .and_then(|mut a| a.call(method, json!({})).map_err(|e| e.to_string()))
        .map_err(|e| RunError::Unreachable {
            spec: spec.into(),
            message: snapshot::contain_text(&e),
        })?;
    Ok(json!({
        "runtime": { "name": d[what].get("name").cloned().unwrap_or(json!(spec)), "version": d[what]["version"] },
        "protocol": d["protocol"],
    }))
}

/// The result of a case an expectation skips: not run.
fn skipped_result(c: &Case, entry: Option<&super::expectations::Entry>) -> CaseResult {
    CaseResult {
        name: c.name(),
        section: c.section.clone(),
        level: c.level,
        spec: c.spec.clone(),
        verdict: Verdict::Skip {
            reason: format!(
                "expected skip: {}",
                entry.map(|e| e.reason.as_str()).unwrap_or("")
            ),
        },
        observations: vec![],
        unclassified: vec![],
        micros: 0,
        annotations: Annotations::default(),
    }
}
