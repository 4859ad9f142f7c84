//! The RunResult, the one machine-readable record of a run (schema:
//! `vectors/schemas/run-result.schema.json`); every report is a rendering of it.

use crate::case::Level;
use crate::run::expectations::Outcome;
use crate::run::CaseResult;
use crate::snapshot::Drift;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The schema of this record: `vectors/schemas/run-result.schema.json`.
pub const SCHEMA: &str = "https://hcpspec.dev/schemas/run-result.schema.json";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    #[serde(rename = "$schema", default)]
    pub schema: String,
    pub hcpspec_version: String,
    pub suite: String,
    /// The suite's sections, in report order (from `vectors/<suite>/suite.json`).
    #[serde(default)]
    pub sections: Vec<crate::case::Section>,
    /// FNV-1a over the case files run, so two results can tell they ran the same cases.
    pub cases_hash: String,
    pub runtimes: Vec<RuntimeRun>,
    /// Cases one runtime answered differently over two transports (empty when it ran over one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parity: Vec<Difference>,
    /// The run was made with `--strict-expectations`: a stale expectation fails it.
    #[serde(default)]
    pub strict_expectations: bool,
    /// The run was made under CI (`--ci`, or `CI` set as insta reads it): a missing snapshot
    /// fails it (and is left as a `.snap.new`). Outside CI a new snapshot is written and
    /// reported as `new`, never failing the run.
    #[serde(default)]
    pub ci: bool,
}

/// What fails a run besides the verdicts, as the run was made: `--strict-expectations` and CI.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rules {
    /// A stale expectation fails the run.
    pub strict: bool,
    /// A new snapshot (none yet) fails the run.
    pub ci: bool,
}

impl RunResult {
    /// The rules this result was run under.
    pub fn rules(&self) -> Rules {
        Rules {
            strict: self.strict_expectations,
            ci: self.ci,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuntimeRun {
    /// The adapter spec, e.g. `inproc:reference`.
    pub runtime: String,
    /// `--name LABEL`: what every output calls it (and its snapshot and badge folders).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Why the run stopped before all its cases (Ctrl-C, `--max-fail`): those not run are
    /// `skip`s saying so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// What the runtime answered to `initialize`: name, version, features it claims.
    pub info: Value,
    /// The protocol version it was judged by (what it states, or for a harness, which states
    /// none, `--launch-contract`): the cases outside that version's requirement set are not
    /// scored (`run::versions`). Absent for a suite without versions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The implementation's name and version as it declared them (`initialize`'s
    /// `runtime.name` and `runtime.version`, kept as said): absent when it declared none, and in
    /// results written before hcpspec recorded it (read from `info` then, [`Self::declared`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub implementation: Option<Implementation>,
    pub summary: Summary,
    pub cases: Vec<CaseResult>,
}

/// An implementation's name and version, as it declared them to `initialize`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Implementation {
    pub name: String,
    /// Empty when it declared no version.
    #[serde(default)]
    pub version: String,
}

impl Implementation {
    /// What `info` (an `initialize` answer) declares: `runtime.name` and `runtime.version`.
    pub fn declared(info: &Value) -> Option<Implementation> {
        let at = |p: &str| info.pointer(p).and_then(Value::as_str).map(String::from);
        Some(Implementation {
            name: at("/runtime/name")?,
            version: at("/runtime/version").unwrap_or_default(),
        })
    }
}

/// A point in time as RFC 3339 in UTC, to the second (`2026-12-07T04:40:52Z`): when a run
/// started, as `result.json` records it. Only recorded, never judged.
pub fn rfc3339(t: std::time::SystemTime) -> String {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Days since 1970-01-01 to a civil date (Howard Hinnant's `civil_from_days`).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

impl RuntimeRun {
    /// Its `--name`, else the runtime's own name (from `initialize`), else its adapter spec:
    /// the name of its badge and snapshot folders.
    pub fn name(&self) -> String {
        self.label
            .clone()
            .or_else(|| {
                self.info
                    .pointer("/runtime/name")
                    .and_then(Value::as_str)
                    .map(String::from)
            })
            .unwrap_or_else(|| self.runtime.clone())
    }

    /// Its name and version as declared: the recorded ones, else (an older result) `info`'s.
    pub fn declared(&self) -> Option<Implementation> {
        self.implementation
            .clone()
            .or_else(|| Implementation::declared(&self.info))
    }

    /// What the renderings head it with: its `--name`, else its adapter spec.
    pub fn shown(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.runtime)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub pass: usize,
    pub fail: usize,
    pub expected_fail: usize,
    pub stale: usize,
    pub skip: usize,
    pub unimplemented: usize,
    pub error: usize,
    /// PROFILE cases the runtime decides otherwise than hcpspec's profile: reported apart,
    /// never failing a run (and not in `fail`, `unimplemented` or `error`).
    #[serde(default)]
    pub profile: usize,
    /// Cases of a later protocol version than the target states: run and reported, never
    /// failing a run (and not in `fail`, `unimplemented` or `error`, whatever their verdict).
    #[serde(default)]
    pub not_scored: usize,
    /// Class and rule checks the runtime's own maps could not classify.
    #[serde(default)]
    pub unclassified: usize,
    /// Cases that make the run exit 1 ([`fails_run`]): unexpected MUST failures, errors and
    /// unimplemented cases, changed snapshots, new ones under CI, stale expectations under
    /// `--strict-expectations`.
    pub must_fail: usize,
    /// Cases whose observations changed from their snapshot (always fails the run).
    pub drift: usize,
    /// Cases that had no snapshot yet (fails the run only under CI).
    #[serde(default)]
    pub new: usize,
    pub micros: u64,
}

impl RunResult {
    /// Contain everything the result holds, as a live run contains what it keeps: every text
    /// redacted and cut (`snapshot::contain_text`), the runtime's `initialize` answer and every
    /// observation through `snapshot::contain`, verdicts through `run::contain_verdict`. For a
    /// result read from a file (`hcpspec report`), which may have been edited by hand.
    /// Containing twice is containing once, so a live run's result comes out unchanged.
    pub fn contain(&mut self) {
        use crate::snapshot::{contain, contain_text};
        let text = |s: &mut String| *s = contain_text(s);
        text(&mut self.schema);
        text(&mut self.hcpspec_version);
        text(&mut self.suite);
        text(&mut self.cases_hash);
        for s in &mut self.sections {
            text(&mut s.id);
            text(&mut s.title);
        }
        for run in &mut self.runtimes {
            text(&mut run.runtime);
            if let Some(v) = &mut run.version {
                text(v);
            }
            run.info = contain(&run.info);
            if let Some(i) = &mut run.implementation {
                text(&mut i.name);
                text(&mut i.version);
            }
            for c in &mut run.cases {
                text(&mut c.name);
                text(&mut c.section);
                text(&mut c.spec);
                text(&mut c.title);
                if let Some(a) = &mut c.assumption {
                    text(a);
                }
                crate::run::contain_verdict(&mut c.verdict);
                for o in &mut c.observations {
                    text(&mut o.action);
                    o.value = contain(&o.value);
                }
                c.unclassified.iter_mut().for_each(text);
                if let Some(e) = &mut c.annotations.expectation {
                    text(&mut e.case);
                    text(&mut e.reason);
                    if let Some(i) = &mut e.issue {
                        text(i);
                    }
                }
                if let Some(why) = &mut c.annotations.not_scored {
                    text(why);
                }
                if let Some(t) = &mut c.annotations.trace {
                    t.contain(&|s| s.to_string());
                }
                if let Some(crate::snapshot::Drift::Changed { diff }) = &mut c.annotations.drift {
                    *diff = crate::snapshot::contain_long(diff);
                }
            }
        }
        for d in &mut self.parity {
            text(&mut d.case);
            text(&mut d.runtime);
            text(&mut d.left);
            text(&mut d.right);
            text(&mut d.what);
        }
    }
}

/// The outcome of a result: as annotated by the run, else from its verdict alone.
pub fn outcome(r: &CaseResult) -> Outcome {
    r.annotations
        .outcome
        .unwrap_or_else(|| Outcome::of(r, None))
}

/// What one case result counts as, in every rendering of a run (terminal, result.json,
/// summary.md, index.html, junit.xml, badges): exactly one of these. Snapshot drift is on top
/// of it ([`fails_run`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Pass,
    Fail,
    ExpectedFail,
    Stale,
    Skip,
    Unimplemented,
    Error,
    /// A PROFILE case the runtime decides otherwise than hcpspec's profile: never a failure.
    Profile,
    /// A case of a later protocol version than the target states: never a failure.
    NotScored,
}

impl State {
    pub const ALL: [State; 9] = [
        State::Pass,
        State::Fail,
        State::ExpectedFail,
        State::Stale,
        State::Skip,
        State::Unimplemented,
        State::Error,
        State::Profile,
        State::NotScored,
    ];

    /// The one word for it, in every rendering.
    pub fn label(self) -> &'static str {
        match self {
            State::Pass => "pass",
            State::Fail => "fail",
            State::ExpectedFail => "expected-fail",
            State::Stale => "stale",
            State::Skip => "skip",
            State::Unimplemented => "unimplemented",
            State::Error => "error",
            State::Profile => "profile",
            State::NotScored => "not-scored",
        }
    }

    /// Its count in a summary.
    pub fn count(self, s: &Summary) -> usize {
        match self {
            State::Pass => s.pass,
            State::Fail => s.fail,
            State::ExpectedFail => s.expected_fail,
            State::Stale => s.stale,
            State::Skip => s.skip,
            State::Unimplemented => s.unimplemented,
            State::Error => s.error,
            State::Profile => s.profile,
            State::NotScored => s.not_scored,
        }
    }
}

/// The state of one result.
pub fn state(r: &CaseResult) -> State {
    let o = outcome(r);
    if o == Outcome::NotScored {
        return State::NotScored;
    }
    let deviates = matches!(o, Outcome::Fail | Outcome::Unimplemented | Outcome::Error);
    if r.level == Level::PROFILE && deviates {
        return State::Profile;
    }
    match o {
        Outcome::Pass => State::Pass,
        Outcome::Fail => State::Fail,
        Outcome::ExpectedFail => State::ExpectedFail,
        Outcome::Stale => State::Stale,
        Outcome::Skip => State::Skip,
        Outcome::Unimplemented => State::Unimplemented,
        Outcome::Error => State::Error,
        Outcome::NotScored => State::NotScored,
    }
}

/// Does this result make the run exit 1? An unexpected MUST failure, error or unimplemented
/// case, a changed snapshot, a new snapshot under CI, a stale expectation under
/// `--strict-expectations`. The one rule for the exit code, JUnit's failures and every red mark.
pub fn fails_run(r: &CaseResult, rules: Rules) -> bool {
    let drifted = match &r.annotations.drift {
        Some(Drift::Changed { .. }) => true,
        Some(Drift::New) => rules.ci,
        None => false,
    };
    drifted || outcome(r).fails_run(r.level, rules.strict)
}

/// A cell's mark, one rule for every rendering ([`Summary::mark`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    Fails,
    NoneRan,
    Warn,
    Ok,
}

impl Summary {
    pub fn of(results: &[CaseResult], rules: Rules) -> Summary {
        Summary::of_each(results, rules)
    }

    /// [`Summary::of`] some of a run's results, read where they are (never copied).
    pub fn of_each<'r>(results: impl IntoIterator<Item = &'r CaseResult>, rules: Rules) -> Summary {
        let mut s = Summary::default();
        for r in results {
            s.unclassified += r.unclassified.len();
            match state(r) {
                State::Pass => s.pass += 1,
                State::Fail => s.fail += 1,
                State::ExpectedFail => s.expected_fail += 1,
                State::Stale => s.stale += 1,
                State::Skip => s.skip += 1,
                State::Unimplemented => s.unimplemented += 1,
                State::Error => s.error += 1,
                State::Profile => s.profile += 1,
                State::NotScored => s.not_scored += 1,
            }
            s.must_fail += usize::from(fails_run(r, rules));
            match r.annotations.drift {
                Some(Drift::Changed { .. }) => s.drift += 1,
                Some(Drift::New) => s.new += 1,
                None => {}
            }
            // A result file read back may say anything: a sum past u64 is saturated.
            s.micros = s.micros.saturating_add(r.micros);
        }
        s
    }

    /// Every case counted: the one denominator of every rendering.
    pub fn total(&self) -> usize {
        State::ALL.iter().map(|st| st.count(self)).sum()
    }

    /// Cases scored: all but those of a later version than the target states. What every
    /// rendering's mark compares the passes with (all scored passed: green).
    pub fn scored(&self) -> usize {
        self.total() - self.not_scored
    }

    /// Cases that ran (all but the skipped): a section where none ran is neither green nor red.
    pub fn ran(&self) -> usize {
        self.total() - self.skip
    }

    /// The mark every rendering gives these cases (docs/reading-results.md, "Marks"): the run
    /// fails here; nothing ran; something did not pass that no expectation declares (an
    /// expected failure is the runtime's own word); all passed.
    pub fn mark(&self) -> Mark {
        if self.must_fail > 0 {
            Mark::Fails
        } else if self.ran() == 0 {
            Mark::NoneRan
        } else if self.pass + self.expected_fail < self.scored() {
            Mark::Warn
        } else {
            Mark::Ok
        }
    }

    /// The non-zero counts past `pass`, as `N label` in [`State::ALL`]'s order, then drift and
    /// new snapshots.
    pub fn others(&self) -> Vec<String> {
        let mut out: Vec<String> = State::ALL[1..]
            .iter()
            .filter(|st| st.count(self) > 0)
            .map(|st| format!("{} {}", st.count(self), st.label()))
            .collect();
        if self.drift > 0 {
            out.push(format!("{} drift", self.drift));
        }
        if self.new > 0 {
            out.push(format!("{} new", self.new));
        }
        out
    }
}

/// Counts per (section, level) for the matrix.
pub fn counts(
    results: &[CaseResult],
    section: &str,
    level: Option<Level>,
    rules: Rules,
) -> Summary {
    let rs = results
        .iter()
        .filter(|r| r.section == section && level.is_none_or(|l| r.level == l));
    Summary::of_each(rs, rules)
}

/// FNV-1a 64 over the given byte strings, as hex.
pub use crate::hash::fnv1a_parts as fnv1a;

/// One case observed differently over two specs of the same runtime.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Difference {
    pub case: String,
    pub runtime: String,
    pub left: String,
    pub right: String,
    /// Where they part: a JSON pointer (`/verdict`, `/failure/…`, `/observations/N/value/…`)
    /// with both values.
    pub what: String,
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({}): {} and {} differ: {}",
            self.case, self.runtime, self.left, self.right, self.what
        )
    }
}

/// What a finished run counted: enough to decide its exit code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunStats {
    pub suites: usize,
    /// Case results, over every runtime of every suite.
    pub cases: usize,
    /// Case results that fail the run (`run::result::fails_run`).
    pub failed: usize,
    /// Transport parity differences (each fails the run).
    pub parity: usize,
    /// The run was interrupted (Ctrl-C): the cases not run are skips.
    pub interrupted: bool,
}

impl RunStats {
    /// The stats of `results`.
    pub fn of(results: &[RunResult], interrupted: bool) -> RunStats {
        let cases = || {
            results.iter().flat_map(|r| {
                r.runtimes
                    .iter()
                    .flat_map(move |run| run.cases.iter().map(move |c| (r, c)))
            })
        };
        RunStats {
            suites: results.len(),
            cases: cases().count(),
            failed: cases().filter(|(r, c)| fails_run(c, r.rules())).count(),
            parity: results.iter().map(|r| r.parity.len()).sum(),
            interrupted,
        }
    }

    /// Does the run fail (exit 1)? A case that fails it, or a transport parity difference.
    pub fn fails(&self) -> bool {
        self.failed > 0 || self.parity > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn start_times_are_rfc3339_in_utc() {
        let at = |s: u64| rfc3339(UNIX_EPOCH + Duration::from_secs(s));
        assert_eq!(at(0), "1970-01-01T00:00:00Z");
        assert_eq!(at(951_782_400 + 86_399), "2000-02-29T23:59:59Z");
        assert_eq!(at(1_796_618_452), "2026-12-07T04:40:52Z");
    }

    /// A result written before the implementation was recorded still says who it was.
    #[test]
    fn an_older_result_declares_its_implementation_from_info() {
        let run: RuntimeRun = serde_json::from_value(serde_json::json!({
            "runtime": "stdio:./shim", "info": {"runtime": {"name": "toy", "version": "0.3"}},
            "summary": Summary::default(), "cases": []}))
        .expect("an older runtime run");
        assert_eq!(run.implementation, None);
        let declared = run.declared().expect("declared");
        assert_eq!(
            (declared.name.as_str(), declared.version.as_str()),
            ("toy", "0.3")
        );
    }
}
