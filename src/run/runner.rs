//! The runner: one run of a suite's selected cases on each target runtime, judged once, with
//! expectations and snapshots applied, into the RunResult. Reporters (the terminal, the files)
//! see it only through [`Event`]s, in the order things happen; the CLI and `cargo test` are two
//! callers of this one path.

use super::expectations::{Expect, Expectations, Outcome};
use super::result::{fnv1a, Rules, RunResult, RuntimeRun, Summary};
use super::{Annotations, CaseResult, Verdict};
use crate::case::{Case, SuiteInfo};
use crate::snapshot::{self, Drift};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One implementation to run a suite's cases on, as its suite drives it (a runtime behind a shim,
/// a harness started per scenario, a core behind its control shim …). Built by the suite
/// (`suites::Suite::target`); the runner asks nothing else of it.
pub trait Target: Send + Sync {
    /// The spec as the user wrote it: `inproc:reference`, `stdio:CMD`, `exec:CMD` …
    fn spec(&self) -> &str;
    /// What it says it is (`{runtime: {name, version}, protocol, …}`), asked once before any
    /// case; an error is the target unreachable.
    fn describe(&self) -> Result<Value, String>;
    /// How many cases it takes at once when `asked` are wanted.
    fn jobs(&self, asked: usize) -> usize {
        asked
    }
    /// Run and judge one case.
    fn run_case(&self, case: &Case) -> CaseResult;
    /// Whether `case` plays alone in the process, no case of any run beside it (core-api's
    /// frames of tens of MiB: docs/security.md, "Memory"); every other case shares its turn.
    fn alone(&self, _case: &Case) -> bool {
        false
    }
}

/// What to do with snapshots.
#[derive(Debug, Clone)]
pub enum Snapshots {
    Off,
    /// Compare with `DIR/<runtime>/<suite>/`: a changed snapshot fails the run and leaves a
    /// `.snap.new`; a missing one is written and reported `new` (under [`Runner::ci`], it fails
    /// the run and is left as a `.snap.new` instead).
    Check(PathBuf),
    /// Write new and changed snapshots under `DIR` instead of failing.
    Accept(PathBuf),
}

/// What happened, for reporters: of which suite, when (since the run started), and what.
pub struct Event<'a> {
    /// The suite it happened in; `None` for the run's own events (`RunStarted`, `RunFinished`).
    pub suite: Option<&'a str>,
    /// Since the run started.
    pub elapsed: Duration,
    pub kind: EventKind<'a>,
}

/// What happened. Cases finish in any order (they run in parallel); everything else comes in
/// run order, and a run's suites one after another (`run::session`).
pub enum EventKind<'a> {
    /// The run begins with these suites, in the order they are told.
    RunStarted {
        suites: &'a [&'a SuiteInfo],
    },
    RuntimeStarted {
        spec: &'a str,
        info: &'a Value,
        cases: usize,
    },
    CaseStarted {
        spec: &'a str,
        name: &'a str,
    },
    /// A case still running after [`Runner::slow`], and again every as long after (nextest's
    /// SLOW).
    CaseSlow {
        spec: &'a str,
        name: &'a str,
        elapsed: Duration,
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
    /// Cases whose observations differed between transports of one runtime until its declared
    /// redactions made them equal: the parity check saw none of it (a note, never a failure).
    ParityHidden {
        hidden: &'a crate::run::parity::Hidden,
    },
    /// A suite's whole result, once every runtime ran it.
    SuiteFinished {
        result: &'a RunResult,
    },
    /// The run is over: what it counted.
    RunFinished {
        stats: &'a super::result::RunStats,
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

/// A suite's event, owned: what a suite run beside others keeps until the suites before it
/// are told, so the terminal reads as if the suites ran one after another.
pub(crate) struct Recorded {
    elapsed: Duration,
    kind: Kept,
}

enum Kept {
    RuntimeStarted(String, Value, usize),
    CaseStarted(String, String),
    CaseSlow(String, String, Duration),
    CaseFinished(String, CaseResult),
    Drifted(String, CaseResult, Drift, PathBuf),
    RuntimeFinished(String, RuntimeRun),
    ParityDiffered(crate::run::parity::Difference),
    ParityHidden(crate::run::parity::Hidden),
}

impl Recorded {
    /// A suite's event kept; the run's own events and `SuiteFinished` are not a suite's to keep.
    pub(crate) fn of(e: &Event<'_>) -> Option<Recorded> {
        let kind = match e.kind {
            EventKind::RuntimeStarted { spec, info, cases } => {
                Kept::RuntimeStarted(spec.into(), info.clone(), cases)
            }
            EventKind::CaseStarted { spec, name } => Kept::CaseStarted(spec.into(), name.into()),
            EventKind::CaseSlow {
                spec,
                name,
                elapsed,
            } => Kept::CaseSlow(spec.into(), name.into(), elapsed),
            EventKind::CaseFinished { spec, result } => {
                Kept::CaseFinished(spec.into(), result.clone())
            }
            EventKind::Drifted {
                spec,
                result,
                drift,
                written,
            } => Kept::Drifted(spec.into(), result.clone(), drift.clone(), written.into()),
            EventKind::RuntimeFinished { spec, run, .. } => {
                Kept::RuntimeFinished(spec.into(), run.clone())
            }
            EventKind::ParityDiffered { difference } => Kept::ParityDiffered(difference.clone()),
            EventKind::ParityHidden { hidden } => Kept::ParityHidden(hidden.clone()),
            EventKind::RunStarted { .. }
            | EventKind::SuiteFinished { .. }
            | EventKind::RunFinished { .. } => return None,
        };
        Some(Recorded {
            elapsed: e.elapsed,
            kind,
        })
    }

    /// Tell `to` this event of `suite`, whose cases are `cases` (what `RuntimeFinished`
    /// carries).
    pub(crate) fn tell(&self, to: &mut dyn Reporter, suite: &str, cases: &[Case]) {
        let kind = match &self.kind {
            Kept::RuntimeStarted(spec, info, cases) => EventKind::RuntimeStarted {
                spec,
                info,
                cases: *cases,
            },
            Kept::CaseStarted(spec, name) => EventKind::CaseStarted { spec, name },
            Kept::CaseSlow(spec, name, elapsed) => EventKind::CaseSlow {
                spec,
                name,
                elapsed: *elapsed,
            },
            Kept::CaseFinished(spec, result) => EventKind::CaseFinished { spec, result },
            Kept::Drifted(spec, result, drift, written) => EventKind::Drifted {
                spec,
                result,
                drift,
                written,
            },
            Kept::RuntimeFinished(spec, run) => EventKind::RuntimeFinished { spec, run, cases },
            Kept::ParityDiffered(difference) => EventKind::ParityDiffered { difference },
            Kept::ParityHidden(hidden) => EventKind::ParityHidden { hidden },
        };
        to.event(&Event {
            suite: Some(suite),
            elapsed: self.elapsed,
            kind,
        });
    }
}

/// Why a run could not finish.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("runtime {spec} unreachable: {message}")]
    Unreachable { spec: String, message: String },
    #[error("snapshots could not be written: {0}")]
    Snapshot(#[from] snapshot::Unwritten),
    /// The runtime's `initialize` answer declares something hcpspec cannot use (a bad
    /// redaction): bad input.
    #[error("runtime {runtime} ({spec}) declares a bad redaction (docs/shim-protocol.md#redactions): {message}")]
    Declared {
        spec: String,
        runtime: String,
        message: String,
    },
    /// Bad input found once the runtime said who it is (expectations for another runtime).
    #[error(transparent)]
    Input(#[from] crate::error::BadInput),
}

pub struct Runner<'a> {
    pub suite: &'a SuiteInfo,
    pub cases: &'a [Case],
    pub expectations: &'a Expectations,
    pub snapshots: Snapshots,
    pub jobs: usize,
    /// A case still running after this is reported slow.
    pub slow: Duration,
    /// A case still running after this is an `error` verdict, and the run goes on without it
    /// (the implementation's own deadlines come first: this one guards the run itself).
    pub deadline: Duration,
    /// `--strict-expectations`: a stale expectation fails the run.
    pub strict: bool,
    /// `--name`: a label per target spec, for every output and the snapshot folder.
    pub labels: std::collections::BTreeMap<String, String>,
    /// Set (by Ctrl-C) to stop: no case starts after it, the running ones finish, and every
    /// case not run is a `skip` saying why.
    pub interrupt: Option<&'a std::sync::atomic::AtomicBool>,
    /// `--max-fail N`: stop as `interrupt` does once N cases failed the run.
    pub max_fail: Option<usize>,
    /// Whether a case its target says plays alone takes the process's turn by itself
    /// (`run::turn`: a run's peak memory). The self-check's many runners share theirs: there the
    /// turn made every case wait for the slowest one running each time a heavy case asked for
    /// it (the `suites` tests took 280 s, not 147), and `core_api::suite::heavy_turn` still
    /// plays the heavy cases one at a time.
    pub plays_alone: bool,
    /// Cases that failed the run so far, for `max_fail`.
    failed: std::sync::atomic::AtomicUsize,
    /// Under CI (`--ci`, or `CI` set): a missing snapshot fails the run.
    pub ci: bool,
    /// When the run began: every event's `elapsed` counts from it.
    pub started: Instant,
    /// The suite's protocol versions and their requirement sets (its `suite.json`'s `requirements`):
    /// a target stating an older version is judged by its set. Empty: every case scored.
    pub versions: super::versions::Versions,
    /// The version a target that states none (a harness) is written to (`--launch-contract`);
    /// None: the newest.
    pub written_to: Option<String>,
    /// What the suite calls its targets (runtime, core …), for what a not-scored case says.
    pub noun: String,
}

/// When a case is reported slow, by default.
pub const SLOW: Duration = Duration::from_secs(15);
/// How long a case may run at most, by default.
pub const DEADLINE: Duration = Duration::from_secs(300);

impl<'a> Runner<'a> {
    /// A runner of `cases` with no expectations, no snapshots and the default clocks.
    pub fn new(suite: &'a SuiteInfo, cases: &'a [Case], expectations: &'a Expectations) -> Self {
        Runner {
            suite,
            cases,
            expectations,
            snapshots: Snapshots::Off,
            jobs: 1,
            slow: SLOW,
            deadline: DEADLINE,
            strict: false,
            labels: Default::default(),
            interrupt: None,
            max_fail: None,
            plays_alone: true,
            failed: Default::default(),
            ci: false,
            started: Instant::now(),
            versions: Default::default(),
            written_to: None,
            noun: "target".into(),
        }
    }

    /// Run every case on every target. The result is keyed by case name, never by position.
    pub fn run(
        &self,
        targets: &[Arc<dyn Target>],
        reporter: &mut dyn Reporter,
    ) -> Result<RunResult, RunError> {
        let (mut runs, mut raw) = (Vec::new(), Vec::new());
        for t in targets {
            let (run, hashes) = self.run_target(t, reporter)?;
            runs.push(run);
            raw.push(hashes);
        }
        let parity = super::parity::parity(&runs);
        for d in &parity {
            self.tell(reporter, EventKind::ParityDiffered { difference: d });
        }
        for hidden in super::parity::hidden(&runs, &raw, &parity) {
            self.tell(reporter, EventKind::ParityHidden { hidden: &hidden });
        }
        Ok(RunResult {
            schema: super::result::SCHEMA.into(),
            hcpspec_version: env!("CARGO_PKG_VERSION").into(),
            suite: self.suite.name.clone(),
            sections: self.suite.sections.clone(),
            cases_hash: fnv1a(self.cases.iter().map(|c| c.source.as_bytes())),
            runtimes: runs,
            parity,
            strict_expectations: self.strict,
            ci: self.ci,
        })
    }

    fn run_target(
        &self,
        t: &Arc<dyn Target>,
        reporter: &mut dyn Reporter,
    ) -> Result<(RuntimeRun, super::parity::RawObservations), RunError> {
        let spec = t.spec();
        let info = t.describe().map_err(|e| RunError::Unreachable {
            spec: spec.into(),
            message: snapshot::contain_text(&e),
        })?;
        // What the runtime declares random in its observations, applied to every case's.
        let declared = snapshot::Declared::from_initialize(&info);
        // The runtime's name, version and features, as reports keep them.
        let info = snapshot::contain(&info);
        let label = self.labels.get(spec).cloned();
        let run_name = label.clone().unwrap_or_else(|| {
            info.pointer("/runtime/name")
                .and_then(Value::as_str)
                .unwrap_or(spec)
                .to_string()
        });
        self.expectations
            .check_runtime(spec, label.as_deref(), &info)?;
        let declared = declared.map_err(|message| RunError::Declared {
            spec: spec.into(),
            runtime: run_name.clone(),
            message: snapshot::contain_text(&message.0),
        })?;
        let skipped = |c: &Case| {
            self.expectations
                .lookup(&c.name())
                .is_some_and(|e| e.expect == Expect::Skip)
        };
        // Shared with the cases' threads as they are (a case left past its deadline keeps them).
        let to_run: Arc<Vec<Case>> =
            Arc::new(self.cases.iter().filter(|c| !skipped(c)).cloned().collect());
        self.tell(
            reporter,
            EventKind::RuntimeStarted {
                spec,
                info: &info,
                cases: to_run.len(),
            },
        );
        let start = Instant::now();
        let shared = Mutex::new(&mut *reporter);
        let event = |kind: EventKind| {
            let mut rep = shared.lock().unwrap_or_else(|p| p.into_inner());
            self.tell(&mut **rep, kind);
        };
        let version = self.version(&info);
        let ran = self.pool(t, &to_run, spec, version.as_deref(), &event);
        let stopped = self.halted();
        let mut by_name: std::collections::BTreeMap<String, CaseResult> =
            ran.into_iter().map(|r| (r.name.clone(), r)).collect();
        let mut results = Vec::new();
        let mut raw = super::parity::RawObservations::new();
        for c in self.cases {
            let entry = self.expectations.lookup(&c.name()).cloned();
            let mut r = match (by_name.remove(&c.name()), &stopped) {
                (Some(r), _) => r,
                (None, Some(why)) if !skipped(c) => not_run(c, why),
                (None, _) => skipped_result(c, entry.as_ref()),
            };
            // A case not run is a skip, never "not scored" (a panicked case is scored here).
            r.annotations.not_scored = match r.verdict {
                Verdict::Skip { .. } => None,
                _ => self.not_scored(version.as_deref(), &r.name),
            };
            if !declared.is_empty() {
                raw.insert(r.name.clone(), super::parity::raw_hash(&r.observations));
                for o in &mut r.observations {
                    o.value = declared.apply(&o.value);
                }
            }
            r.annotations.outcome = Some(Outcome::of(&r, entry.as_ref()));
            r.annotations.expectation = entry;
            if let Some((drift, written)) = self.snapshot(&run_name, c, &mut r)? {
                self.tell(
                    reporter,
                    EventKind::Drifted {
                        spec,
                        result: &r,
                        drift: &drift,
                        written: &written,
                    },
                );
                r.annotations.drift = Some(drift);
            }
            keep_trace(&mut r, &declared, self.rules());
            results.push(r);
        }
        let mut summary = Summary::of(&results, self.rules());
        summary.micros = start.elapsed().as_micros() as u64;
        let run = RuntimeRun {
            runtime: spec.to_string(),
            label,
            stopped,
            implementation: super::result::Implementation::declared(&info),
            info,
            version,
            summary,
            cases: results,
        };
        self.tell(
            reporter,
            EventKind::RuntimeFinished {
                spec,
                run: &run,
                cases: self.cases,
            },
        );
        Ok((run, raw))
    }

    /// Tell `reporter` what happened in this runner's suite, now.
    fn tell(&self, reporter: &mut dyn Reporter, kind: EventKind<'_>) {
        reporter.event(&Event {
            suite: Some(&self.suite.name),
            elapsed: self.started.elapsed(),
            kind,
        });
    }

    /// The protocol version a target is judged by: the one it states (`protocol` in what it
    /// said of itself) when that is a version of the suite's protocol, else the one it is
    /// written to (`--launch-contract`), else the newest. None for a suite without versions.
    fn version(&self, info: &Value) -> Option<String> {
        let stated = info["protocol"]
            .as_str()
            .filter(|p| self.versions.of_protocol(p));
        stated
            .map(String::from)
            .or_else(|| self.written_to.clone())
            .or_else(|| self.versions.current().map(String::from))
    }

    /// Why a case is not scored for a target judged by `version`, if it is of a later version.
    fn not_scored(&self, version: Option<&str>, case: &str) -> Option<String> {
        let version = version?;
        let since = self.versions.since(version, case)?;
        let noun = &self.noun;
        let verb = match self.written_to.as_deref() == Some(version) {
            true => "is written to",
            false => "states",
        };
        Some(format!("since {since}; the {noun} {verb} {version}"))
    }

    /// Why no more cases start, if the run was stopped.
    fn halted(&self) -> Option<String> {
        use std::sync::atomic::Ordering;
        if self.interrupt.is_some_and(|i| i.load(Ordering::Relaxed)) {
            return Some("the run was interrupted (Ctrl-C)".into());
        }
        let failed = self.failed.load(Ordering::Relaxed);
        match self.max_fail {
            Some(n) if failed >= n => Some(format!("--max-fail {n} reached")),
            _ => None,
        }
    }

    /// Run `cases` on `t`, as many at once as it takes, each on a thread of its own: a panic
    /// is that case's `error` verdict, and a case past [`Runner::deadline`] is left behind as
    /// one. Results in case order.
    fn pool(
        &self,
        t: &Arc<dyn Target>,
        all: &Arc<Vec<Case>>,
        spec: &str,
        version: Option<&str>,
        event: &(dyn Fn(EventKind) + Sync),
    ) -> Vec<CaseResult> {
        use std::sync::atomic::Ordering;
        let cases = &all[..];
        let jobs = t.jobs(self.jobs);
        let halted = || self.halted().is_some();
        super::pool::each(cases, jobs, &halted, &|i, case| {
            let name = case.name();
            // Before the case starts: its clock and the run's guard do not count the wait.
            let turn = super::turn::take(self.plays_alone && t.alone(case));
            // Stopped while it waited for its turn: not started, as the cases after it.
            if halted() {
                return None;
            }
            event(EventKind::CaseStarted { spec, name: &name });
            let mut r = self.one(t, all, i, spec, event);
            // Ctrl-C reaches a shim in the terminal's process group too: a case it broke was
            // interrupted, not judged.
            let interrupted = self.interrupt.is_some_and(|f| f.load(Ordering::Relaxed));
            if interrupted && matches!(r.verdict, Verdict::Error { .. }) {
                r = not_run(case, "the run was interrupted (Ctrl-C) while it ran");
            }
            if !matches!(r.verdict, Verdict::Skip { .. }) {
                r.annotations.not_scored = self.not_scored(version, &name);
            }
            event(EventKind::CaseFinished { spec, result: &r });
            // The one rule for what fails a run (its snapshot is judged later).
            r.annotations.outcome = Some(Outcome::of(&r, self.expectations.lookup(&r.name)));
            if super::result::fails_run(&r, self.rules()) {
                self.failed.fetch_add(1, Ordering::Relaxed);
            }
            // Given back once its failure counts: a case waiting for the turn then sees a halt.
            drop(turn);
            Some(r)
        })
        .into_iter()
        .zip(cases)
        .filter_map(|(r, case)| match r? {
            Ok(r) => r,
            Err(panic) => Some(CaseResult::of(
                case,
                Verdict::Error {
                    message: snapshot::contain_text(&format!(
                        "hcpspec panicked while running the case: {panic}"
                    )),
                },
                vec![],
                vec![],
                Instant::now(),
            )),
        })
        .collect()
    }

    /// One case on a thread of its own, watched for slowness and the deadline.
    fn one(
        &self,
        t: &Arc<dyn Target>,
        cases: &Arc<Vec<Case>>,
        i: usize,
        spec: &str,
        event: &(dyn Fn(EventKind) + Sync),
    ) -> CaseResult {
        use std::sync::mpsc::{channel, RecvTimeoutError};
        let case = &cases[i];
        let started = Instant::now();
        let error = |message: String| {
            CaseResult::of(
                case,
                Verdict::Error {
                    message: snapshot::contain_text(&message),
                },
                vec![],
                vec![],
                started,
            )
        };
        let (tx, rx) = channel();
        let (target, all) = (t.clone(), cases.clone());
        // A passing case's trace is kept only until its snapshot is judged (drift keeps it).
        let passes_need_trace = !matches!(self.snapshots, Snapshots::Off);
        let spawned = std::thread::Builder::new()
            .name(format!("case {i}"))
            .spawn(move || {
                // Every message of the case, kept if it does not pass (`run_target`).
                let trace = crate::trace::begin();
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    target.run_case(&all[i])
                }))
                .map(|mut r| {
                    let wanted = match r.verdict {
                        Verdict::Skip { .. } => false,
                        Verdict::Pass => passes_need_trace,
                        _ => true,
                    };
                    if wanted {
                        r.annotations.trace = trace.finish();
                    }
                    r
                });
                let _ = tx.send(r);
            });
        if let Err(e) = spawned {
            return error(format!("hcpspec could not start the case: {e}"));
        }
        let mut slow_at = self.slow;
        // The guard does not count the time hcpspec held its cases back (its memory budget).
        let held_from = super::held_back::total();
        let guarded = || {
            started
                .elapsed()
                .saturating_sub(super::held_back::total() - held_from)
        };
        loop {
            let wait = slow_at
                .saturating_sub(started.elapsed())
                .min(self.deadline.saturating_sub(guarded()));
            match rx.recv_timeout(wait) {
                Ok(Ok(r)) => return r,
                Ok(Err(panic)) => {
                    let why = super::pool::message(&*panic);
                    return error(format!(
                        "hcpspec panicked while running the case (a defect of hcpspec, not of the implementation): {why}"
                    ));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return error("the case ended without a verdict".into())
                }
                Err(RecvTimeoutError::Timeout) => {
                    let elapsed = started.elapsed();
                    // Slow first: a case past its deadline was slow, however late this thread
                    // woke on a loaded machine.
                    if elapsed >= slow_at {
                        event(EventKind::CaseSlow {
                            spec,
                            name: &case.name(),
                            elapsed,
                        });
                        slow_at = elapsed + self.slow;
                    }
                    if guarded() >= self.deadline {
                        return error(format!(
                            "no verdict within {:.0} s: the case was left running",
                            self.deadline.as_secs_f64()
                        ));
                    }
                }
            }
        }
    }

    /// Drift of one case's observations from its snapshot, or none (also when accepting). A
    /// snapshot refused unread (a link, over `snapshot::MAX_SNAP`) makes the case an error
    /// verdict naming the file.
    fn snapshot(
        &self,
        runtime: &str,
        case: &Case,
        r: &mut CaseResult,
    ) -> Result<Option<(Drift, PathBuf)>, RunError> {
        let (root, policy) = match &self.snapshots {
            Snapshots::Off => return Ok(None),
            Snapshots::Check(root) if self.ci => (root, snapshot::Policy::Ci),
            Snapshots::Check(root) => (root, snapshot::Policy::Check),
            Snapshots::Accept(root) => (root, snapshot::Policy::Accept),
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
        let drift = match snapshot::check(root, runtime, &key, &r.observations, policy) {
            Ok(drift) => drift,
            Err(snapshot::Checked::Unwritten(e)) => return Err(e.into()),
            Err(snapshot::Checked::Refused(e)) => {
                r.verdict = Verdict::Error {
                    message: snapshot::contain_text(&format!("snapshot {e}")),
                };
                let entry = r.annotations.expectation.clone();
                r.annotations.outcome = Some(Outcome::of(r, entry.as_ref()));
                return Ok(None);
            }
        };
        Ok(drift.filter(|_| policy != snapshot::Policy::Accept))
    }

    /// The rules this runner judges by.
    pub fn rules(&self) -> Rules {
        Rules {
            strict: self.strict,
            ci: self.ci,
        }
    }
}

impl RunResult {
    /// Does this result fail a run (exit 1)? A case that [`fails_run`](super::result::fails_run),
    /// or a transport parity difference: the rule of [`RunStats::fails`](super::result::RunStats::fails).
    pub fn fails(&self) -> bool {
        super::result::RunStats::of(std::slice::from_ref(self), false).fails()
    }
}

/// A case's trace is kept when it did not pass (or it fails the run: its snapshot changed, or
/// is new under CI), with the runtime's declared redactions applied as to its observations.
fn keep_trace(r: &mut CaseResult, declared: &snapshot::Declared, rules: Rules) {
    let passed = super::result::state(r) == super::result::State::Pass
        && !super::result::fails_run(r, rules);
    match &mut r.annotations.trace {
        Some(_) if passed => r.annotations.trace = None,
        Some(t) if !declared.is_empty() => t.contain(&|s| declared.text(s).into_owned()),
        _ => {}
    }
}

/// The result of a case the run stopped before (`why`: Ctrl-C, `--max-fail`): not run.
fn not_run(c: &Case, why: &str) -> CaseResult {
    CaseResult {
        verdict: Verdict::Skip {
            reason: format!("not run: {why}"),
        },
        ..skipped_result(c, None)
    }
}

/// The result of a case an expectation skips: not run.
fn skipped_result(c: &Case, entry: Option<&super::expectations::Entry>) -> CaseResult {
    CaseResult {
        name: c.name(),
        section: c.section.clone(),
        level: c.level,
        spec: c.spec.clone(),
        title: c.title.clone(),
        assumption: c.assumption.clone(),
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
