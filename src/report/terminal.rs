//! The terminal reporter: a progress bar (or a line per problem without a terminal), then per
//! runtime a table per section and an explanation of every failure; drift and parity as they
//! come; after the run, where its failing cases stop. Tables and notes go to `out` (stdout),
//! problems to `err` (stderr).

use super::{printable, table_marked, Marks, Rules};
use crate::case::{Case, Level, SuiteInfo};
use crate::run::expectations::Outcome;
use crate::run::result::{fails_run, RunResult, RuntimeRun};
use crate::run::runner::{Event, EventKind, Reporter};
use crate::run::Verdict;
use crate::snapshot::{self, Drift};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// How the terminal looks, as the command line and the streams decide it.
#[derive(Debug, Clone)]
pub struct Look {
    /// stderr is a terminal: a progress bar, and drift diffs in colour.
    pub tty: bool,
    /// The table's marks.
    pub marks: Marks,
    /// stderr is coloured.
    pub red: bool,
}

impl Look {
    /// Plain text: no terminal, no colour, Unicode marks (what a file or a pipe gets).
    pub fn plain() -> Look {
        Look {
            tty: false,
            marks: Marks::unicode(),
            red: false,
        }
    }
}

pub struct Terminal {
    out: Box<dyn Write + Send>,
    err: Box<dyn Write + Send>,
    look: Look,
    rules: Rules,
    snapshots: Option<PathBuf>,
    suites: Vec<SuiteInfo>,
    bar: Option<indicatif::ProgressBar>,
    /// The suite's cases whose snapshot changed, and those that had none.
    changed: usize,
    new: usize,
    /// Where the run's failing cases stop, and how many stop there.
    stops: BTreeMap<String, usize>,
    /// `--trace`: each failing case's messages under its failure block.
    pub trace: bool,
}

impl Terminal {
    /// A terminal writing to `out` and `err`; `snapshots` is `--snapshots`, named in the advice
    /// on drift.
    pub fn new(
        look: Look,
        rules: Rules,
        snapshots: Option<&Path>,
        out: Box<dyn Write + Send>,
        err: Box<dyn Write + Send>,
    ) -> Terminal {
        Terminal {
            out,
            err,
            look,
            rules,
            snapshots: snapshots.map(Path::to_path_buf),
            suites: Vec::new(),
            bar: None,
            changed: 0,
            new: 0,
            stops: BTreeMap::new(),
            trace: false,
        }
    }

    /// On stdout and stderr.
    pub fn stdio(look: Look, rules: Rules, snapshots: Option<&Path>) -> Terminal {
        Terminal::new(
            look,
            rules,
            snapshots,
            Box::new(std::io::stdout()),
            Box::new(std::io::stderr()),
        )
    }

    fn out(&mut self, text: &str) {
        let _ = writeln!(self.out, "{text}");
    }

    fn err(&mut self, text: &str) {
        let _ = writeln!(self.err, "{text}");
    }

    /// A line above the progress bar, or on stderr.
    fn say(&mut self, line: &str) {
        match &self.bar {
            Some(b) => b.println(line),
            None => self.err(line),
        }
    }

    fn runtime_started(&mut self, spec: &str, cases: usize) {
        self.bar = self.look.tty.then(|| {
            let b = indicatif::ProgressBar::new(cases as u64);
            if let Ok(style) =
                indicatif::ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg}")
            {
                b.set_style(style.progress_chars("=> "));
            }
            b.set_prefix(spec.to_string());
            b
        });
    }

    fn case_finished(&mut self, spec: &str, r: &crate::run::CaseResult) {
        let name = printable(&r.name, false);
        match &self.bar {
            Some(b) => {
                b.inc(1);
                if !matches!(r.verdict, Verdict::Pass) {
                    b.set_message(format!("last problem: {name}"));
                }
            }
            None if !matches!(r.verdict, Verdict::Pass) => {
                let label = if r.annotations.not_scored.is_some() {
                    "not-scored"
                } else if r.level == Level::PROFILE {
                    "profile"
                } else {
                    r.verdict.label()
                };
                self.err(&format!("hcpspec: {spec} {label} {name}"));
            }
            None => {}
        }
    }

    fn case_slow(&mut self, spec: &str, name: &str, elapsed: std::time::Duration) {
        let line = format!(
            "SLOW {spec} {} (running for {:.0} s)",
            printable(name, false),
            elapsed.as_secs_f64()
        );
        match &self.bar {
            Some(b) => b.println(line),
            None => self.err(&format!("hcpspec: {line}")),
        }
    }

    fn drifted(&mut self, spec: &str, r: &crate::run::CaseResult, drift: &Drift, written: &Path) {
        match drift {
            Drift::New => {
                self.new += 1;
                let what = if self.rules.ci {
                    "no snapshot yet, which fails under CI; pending"
                } else {
                    "no snapshot yet; written"
                };
                self.say(&format!(
                    "NEW {} on {spec}: {what} {}",
                    printable(&r.name, false),
                    written.display()
                ));
            }
            Drift::Changed { diff } => {
                self.changed += 1;
                let diff = if self.look.tty {
                    snapshot::colour(diff)
                } else {
                    diff.clone()
                };
                self.err(&format!(
                    "\nDRIFT {} on {spec} (verdict {}):\n{diff}",
                    r.name,
                    r.verdict.label()
                ));
            }
        }
    }

    fn runtime_finished(
        &mut self,
        suite: Option<&str>,
        spec: &str,
        run: &RuntimeRun,
        cases: &[Case],
    ) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        self.table(suite, spec, run);
        self.explain_problems(cases, run);
    }

    /// A runtime's table, headed by its spec (and label) and what it said of itself.
    fn table(&mut self, suite: Option<&str>, spec: &str, run: &RuntimeRun) {
        let head = match &run.label {
            Some(l) => format!("{} = {spec}", printable(l, false)),
            None => spec.to_string(),
        };
        // What the implementation said of itself, as far as it said it (a harness says nothing).
        let said: Vec<String> = ["/runtime/name", "/runtime/version"]
            .iter()
            .filter_map(|p| run.info.pointer(p).and_then(Value::as_str))
            .filter(|t| *t != spec)
            .map(|t| printable(t, false))
            .collect();
        match said.is_empty() {
            true => self.out(&format!("\n{head}")),
            false => self.out(&format!("\n{head}  ({})", said.join(" "))),
        }
        let sections = self
            .suites
            .iter()
            .find(|s| Some(s.name.as_str()) == suite)
            .map(|s| s.sections.clone())
            .unwrap_or_default();
        let table = table_marked(&sections, run, self.rules, &self.look.marks);
        let _ = write!(self.out, "{table}");
        if let Some(why) = &run.stopped {
            self.out(&format!(
                "  stopped early: {why}; the cases not run are skips"
            ));
        }
        if run.summary.not_scored > 0 {
            self.out(&format!(
                "  {} case(s) not scored: of a later protocol version than {}, the one it is judged by; they ran and are reported, never failing the run (docs/CHANGELOG.md)",
                run.summary.not_scored,
                run.version.as_deref().map_or("the one stated".into(), |v| printable(v, false)),
            ));
        }
        if run.summary.unclassified > 0 {
            self.out(&format!(
                "  {} denial-class or rule check(s) unclassified: the runtime declares no map for them in initialize (docs/shim-protocol.md#initialize); counted, never failed",
                run.summary.unclassified
            ));
        }
    }

    /// Every unexpected failure explained; PROFILE deviations and stale expectations in a line.
    fn explain_problems(&mut self, cases: &[Case], run: &RuntimeRun) {
        for c in cases {
            let Some(r) = run.cases.iter().find(|r| r.name == c.name()) else {
                continue;
            };
            let o = r.annotations.outcome.unwrap_or(Outcome::Pass);
            let deviates = matches!(o, Outcome::Fail | Outcome::Error | Outcome::Unimplemented);
            if deviates && c.level == Level::PROFILE {
                self.err(&format!(
                    "\nPROFILE {} decides otherwise than hcpspec's profile (not a failure): {}",
                    r.name,
                    c.assumption.as_deref().unwrap_or("")
                ));
            } else if deviates {
                self.err(&format!(
                    "\n{} {}",
                    r.verdict.label().to_uppercase(),
                    printable(r.explain(c).trim_end(), true)
                ));
                if self.trace {
                    self.err(&super::trace_text(r));
                }
            } else if o == Outcome::Stale {
                self.err(&format!(
                    "\nSTALE {}: expected to fail ({}), but passes",
                    r.name,
                    r.annotations
                        .expectation
                        .as_ref()
                        .map(|e| e.reason.as_str())
                        .unwrap_or("")
                ));
            }
        }
    }

    /// A suite's last words: transport parity, and what its snapshots call for.
    fn suite_finished(&mut self, result: &RunResult) {
        self.note_stops(result);
        let groups = crate::run::parity::groups(
            &result
                .runtimes
                .iter()
                .map(|r| (r.runtime.as_str(), &r.info))
                .collect::<Vec<_>>(),
        );
        for (runtime, specs) in &groups {
            let n = result
                .parity
                .iter()
                .filter(|d| &d.runtime == runtime)
                .count();
            if n == 0 {
                self.out(&format!(
                    "\ntransport parity: {runtime} observed the same over {}",
                    specs.join(", ")
                ));
            } else {
                self.err(&format!(
                    "\ntransport parity: {runtime}: {n} case(s) observed differently over {}",
                    specs.join(", ")
                ));
            }
        }
        let review = self.snapshots.as_ref().map_or_else(String::new, |d| {
            format!("hcpspec review --snapshots {}", d.display())
        });
        let (new, changed) = (
            std::mem::take(&mut self.new),
            std::mem::take(&mut self.changed),
        );
        if new > 0 && self.rules.ci {
            self.err(&format!("\n{new} new snapshot(s), which fail the run under CI: left as .snap.new; review them ({review}) or run with --accept, then commit them"));
        } else if new > 0 {
            self.err(&format!(
                "\n{new} new snapshot(s) written (not a failure): commit them"
            ));
        }
        if changed > 0 {
            self.err(&format!("\n{changed} case(s) drifted from their snapshots: review the .snap.new files ({review}, or cargo insta review) or rerun with --accept"));
        }
    }

    /// Where a suite's failing cases stop: the step's action and the pointer of a failure, an
    /// error's or unimplemented method's first words.
    fn note_stops(&mut self, result: &RunResult) {
        for run in &result.runtimes {
            for r in &run.cases {
                if !fails_run(r, result.rules()) {
                    continue;
                }
                let key = match &r.verdict {
                    Verdict::Fail(f) => format!("{} at {}", f.action, f.path),
                    Verdict::Error { message } => {
                        format!("error: {}", message.chars().take(60).collect::<String>())
                    }
                    Verdict::Unimplemented { reason } => {
                        format!(
                            "unimplemented: {}",
                            reason.chars().take(60).collect::<String>()
                        )
                    }
                    _ => "snapshot drift".into(),
                };
                *self
                    .stops
                    .entry(format!("{} {}", result.suite, printable(&key, false)))
                    .or_default() += 1;
            }
        }
    }

    /// A red run's last words: where its failing cases stop, most first.
    fn roll_up(&mut self) {
        if self.stops.is_empty() {
            return;
        }
        let mut rows: Vec<(String, usize)> = std::mem::take(&mut self.stops).into_iter().collect();
        rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let total: usize = rows.iter().map(|r| r.1).sum();
        let head = format!("{total} case(s) failed the run, stopping at:");
        let head = if self.look.red {
            format!("\x1b[31m{head}\x1b[0m")
        } else {
            head
        };
        self.err(&format!("\n{head}"));
        for (key, n) in rows.iter().take(10) {
            self.err(&format!("  {n:>4} × {key}"));
        }
        if rows.len() > 10 {
            self.err(&format!(
                "  … and {} more places (see summary.md)",
                rows.len() - 10
            ));
        }
    }
}

impl Reporter for Terminal {
    fn event(&mut self, e: &Event<'_>) {
        match &e.kind {
            EventKind::RunStarted { suites } => {
                self.suites = suites.iter().map(|s| (*s).clone()).collect()
            }
            EventKind::RuntimeStarted { spec, cases, .. } => self.runtime_started(spec, *cases),
            EventKind::CaseStarted { .. } => {}
            EventKind::CaseSlow {
                spec,
                name,
                elapsed,
            } => self.case_slow(spec, name, *elapsed),
            EventKind::CaseFinished { spec, result } => self.case_finished(spec, result),
            EventKind::Drifted {
                spec,
                result,
                drift,
                written,
            } => self.drifted(spec, result, drift, written),
            EventKind::RuntimeFinished { spec, run, cases } => {
                self.runtime_finished(e.suite, spec, run, cases)
            }
            EventKind::ParityDiffered { difference } => self.err(&format!("PARITY {difference}")),
            EventKind::ParityHidden { hidden } => self.err(&format!("note: {hidden}")),
            EventKind::SuiteFinished { result } => self.suite_finished(result),
            EventKind::RunFinished { .. } => self.roll_up(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::expectations::Outcome;
    use crate::run::result::RunStats;
    use crate::run::result::Summary;
    use crate::run::{CaseResult, Failure};
    use serde_json::json;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    /// A stream the test reads back.
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl Write for Buffer {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Buffer {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    fn case(id: &str, level: &str) -> Case {
        let mut c: Case = serde_json::from_value(json!({
            "id": id, "title": id, "section": "1", "level": level, "spec": "echo.md#1",
            "assumption": "the profile's reading",
        }))
        .unwrap();
        c.suite = "echo".into();
        c.group = "01-echo".into();
        c
    }

    fn judged(c: &Case, verdict: Verdict) -> CaseResult {
        let mut r = CaseResult::of(c, verdict, vec![], vec![], std::time::Instant::now());
        r.micros = 0;
        r.annotations.outcome = Some(Outcome::of(&r, None));
        r
    }

    /// What the terminal prints of a run with a pass, a failure, an error and a PROFILE
    /// deviation: stdout (the table) and stderr (the problems, explained, and where they stop).
    #[test]
    fn a_red_run_reads_as_it_always_has() {
        let info: SuiteInfo = serde_json::from_value(json!({
            "name": "echo", "title": "Echo", "drives": "hcp-runtime", "protocol": "hcp/1",
            "spec": "echo.md", "sections": [{ "id": "1", "title": "Echo" }],
        }))
        .unwrap();
        let cases = vec![
            case("answers", "MUST"),
            case("echoes", "MUST"),
            case("breaks", "MUST"),
            case("decides", "PROFILE"),
        ];
        let failure = Failure {
            step: 1,
            action: "echo".into(),
            path: "/text".into(),
            message: "expected \"hi\"".into(),
            expected: json!("hi"),
            actual: json!("ho"),
        };
        let results = vec![
            judged(&cases[0], Verdict::Pass),
            judged(&cases[1], Verdict::Fail(failure.clone())),
            judged(
                &cases[2],
                Verdict::Error {
                    message: "the shim closed its output".into(),
                },
            ),
            judged(&cases[3], Verdict::Fail(failure)),
        ];
        let rules = Rules::default();
        let run = RuntimeRun {
            runtime: "inproc:mutant:mute".into(),
            label: None,
            stopped: None,
            info: json!({ "runtime": { "name": "mute", "version": "0.1.0" } }),
            version: None,
            summary: Summary::of(&results, rules),
            cases: results.clone(),
        };
        let result = RunResult {
            schema: crate::run::result::SCHEMA.into(),
            hcpspec_version: "0".into(),
            suite: "echo".into(),
            sections: info.sections.clone(),
            cases_hash: String::new(),
            runtimes: vec![run.clone()],
            parity: vec![],
            strict_expectations: false,
            ci: false,
        };
        let (out, err) = (Buffer::default(), Buffer::default());
        let mut t = Terminal::new(
            Look::plain(),
            rules,
            None,
            Box::new(out.clone()),
            Box::new(err.clone()),
        );
        let spec = "inproc:mutant:mute";
        let at = |kind| Event {
            suite: Some("echo"),
            elapsed: Duration::ZERO,
            kind,
        };
        t.event(&Event {
            suite: None,
            elapsed: Duration::ZERO,
            kind: EventKind::RunStarted { suites: &[&info] },
        });
        t.event(&at(EventKind::RuntimeStarted {
            spec,
            info: &run.info,
            cases: 4,
        }));
        for r in &results {
            t.event(&at(EventKind::CaseFinished { spec, result: r }));
        }
        t.event(&at(EventKind::RuntimeFinished {
            spec,
            run: &run,
            cases: &cases,
        }));
        t.event(&at(EventKind::SuiteFinished { result: &result }));
        let stats = RunStats::of(std::slice::from_ref(&result), false);
        t.event(&Event {
            suite: None,
            elapsed: Duration::ZERO,
            kind: EventKind::RunFinished { stats: &stats },
        });
        insta::assert_snapshot!("terminal_stdout", out.text());
        insta::assert_snapshot!("terminal_stderr", err.text());
    }
}
