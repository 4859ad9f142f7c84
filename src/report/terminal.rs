//! The terminal reporter. While a run goes: a progress bar (without a terminal, a line per
//! runtime started), drift and parity as they come, and per runtime its problems explained, a
//! cause at a time: the first case of each cause in full, with the command that reruns it
//! alone, and the others a line each. At its end, as pytest and nextest end: the causes, each
//! once with its count and a few of its cases, then each runtime's table (80 columns at most),
//! then the one line saying how the run exits. Tables, notes and that line go to `out`
//! (stdout), problems to `err` (stderr).

use super::causes::{causes, Cause};
use super::{fails_run, printable, state, table_marked, Marks, Rules, State};
use crate::case::{Case, SuiteInfo};
use crate::run::expectations::Outcome;
use crate::run::result::{RunResult, RunStats, RuntimeRun};
use crate::run::runner::{Event, EventKind, Reporter};
use crate::run::Verdict;
use crate::snapshot::{self, Drift};
use serde_json::Value;
use std::collections::HashMap;
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

/// What the command that reruns one case keeps of the run's own command line.
#[derive(Debug, Clone, Default)]
pub struct Rerun {
    /// The options that decide a case's verdict besides its suite, runtime and name, as words:
    /// `--vectors DIR`, `--expectations FILE`, `--snapshots DIR`, `--ci`, `--timeout SECS` …
    pub options: Vec<String>,
    /// `--vectors DIR`, which `hcpspec explain` needs too.
    pub vectors: Option<PathBuf>,
}

/// The cases a cause names in the summary at the end; the rest are counted.
const NAMED: usize = 3;

/// The causes of a runtime the summary at the end shows, most failing first; the rest are
/// counted (each is explained with the problems above it).
const SHOWN: usize = 12;

/// The width the terminal's own lines are wrapped at (the table's, [`super::table::WIDTH`]).
const WIDTH: usize = super::table::WIDTH;

/// What the end of the run shows of one runtime: its causes and its table.
struct End {
    causes: Vec<String>,
    table: Vec<String>,
}

pub struct Terminal {
    out: Box<dyn Write + Send>,
    err: Box<dyn Write + Send>,
    look: Look,
    rules: Rules,
    snapshots: Option<PathBuf>,
    rerun: Rerun,
    suites: Vec<SuiteInfo>,
    bar: Option<indicatif::ProgressBar>,
    /// The suite's cases whose snapshot changed, and those that had none.
    changed: usize,
    new: usize,
    /// Each finished runtime's causes and table, shown at the end.
    ends: Vec<End>,
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
            rerun: Rerun::default(),
            suites: Vec::new(),
            bar: None,
            changed: 0,
            new: 0,
            ends: Vec::new(),
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

    /// The same terminal, its rerun commands keeping `rerun` of the run's command line.
    pub fn rerunning(mut self, rerun: Rerun) -> Terminal {
        self.rerun = rerun;
        self
    }

    fn out(&mut self, text: &str) {
        let _ = writeln!(self.out, "{text}");
    }

    fn err(&mut self, text: &str) {
        let _ = writeln!(self.err, "{text}");
    }

    fn runtime_started(&mut self, suite: Option<&str>, spec: &str, cases: usize) {
        if !self.look.tty {
            // Without a terminal, one line: each case's line would only repeat what the causes
            // and the table say at the end.
            let what = suite.map_or(String::new(), |s| format!(" {s}"));
            self.err(&format!("hcpspec: running {cases}{what} case(s) on {spec}"));
            return;
        }
        let b = indicatif::ProgressBar::new(cases as u64);
        if let Ok(style) =
            indicatif::ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg}")
        {
            b.set_style(style.progress_chars("=> "));
        }
        b.set_prefix(spec.to_string());
        self.bar = Some(b);
    }

    fn case_finished(&mut self, r: &crate::run::CaseResult) {
        if let Some(b) = &self.bar {
            b.inc(1);
            if !matches!(r.verdict, Verdict::Pass) {
                b.set_message(format!("last problem: {}", printable(&r.name, false)));
            }
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

    fn drifted(&mut self, spec: &str, r: &crate::run::CaseResult, drift: &Drift) {
        match drift {
            // Counted, and said once at the suite's end with what to do: a first run has a
            // new snapshot per case, and a line each would bury the verdict.
            Drift::New => self.new += 1,
            Drift::Changed { diff } => {
                self.changed += 1;
                // The runtime's observations: escaped as all its text is (JSON escapes control
                // characters, not bidi or zero-width ones), then coloured.
                let diff = printable(diff, true);
                let diff = if self.look.tty {
                    snapshot::colour(&diff)
                } else {
                    diff
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
        let found = causes(run, self.rules);
        self.explain_problems(suite.unwrap_or(""), run, cases, &found);
        let end = End {
            causes: self.summarise(suite, run, &found),
            table: self.table(suite, spec, run),
        };
        self.ends.push(end);
    }

    /// A runtime's table, headed by its suite, its spec (and label) and what it said of itself,
    /// with its notes, as lines.
    fn table(&self, suite: Option<&str>, spec: &str, run: &RuntimeRun) -> Vec<String> {
        let mut head = match &run.label {
            Some(l) => format!("{} = {spec}", printable(l, false)),
            None => spec.to_string(),
        };
        if let Some(s) = suite {
            head = format!("{s} on {head}");
        }
        // What the implementation said of itself, as far as it said it (a harness says nothing).
        let said: Vec<String> = ["/runtime/name", "/runtime/version"]
            .iter()
            .filter_map(|p| run.info.pointer(p).and_then(Value::as_str))
            .filter(|t| *t != spec)
            .map(|t| printable(t, false))
            .collect();
        let mut lines = vec![String::new()];
        match said.is_empty() {
            true => lines.push(head),
            false => lines.push(format!("{head}  ({})", said.join(" "))),
        }
        let sections = self
            .suites
            .iter()
            .find(|s| Some(s.name.as_str()) == suite)
            .map(|s| s.sections.clone())
            .unwrap_or_default();
        let table = table_marked(&sections, run, self.rules, &self.look.marks);
        lines.extend(table.lines().map(String::from));
        let mut notes = Vec::new();
        if let Some(why) = &run.stopped {
            notes.push(format!("stopped early: {why}; the cases not run are skips"));
        }
        if run.summary.not_scored > 0 {
            notes.push(format!(
                "{} case(s) not scored: of a later protocol version than {}, the one it is judged by; they ran and are reported, never failing the run (docs/CHANGELOG.md)",
                run.summary.not_scored,
                run.version.as_deref().map_or("the one stated".into(), |v| printable(v, false)),
            ));
        }
        if run.summary.unclassified > 0 {
            notes.push(format!(
                "{} denial-class or rule check(s) unclassified: the runtime declares no map for them in initialize (docs/shim-protocol.md#initialize); counted, never failed",
                run.summary.unclassified
            ));
        }
        for n in notes {
            lines.extend(wrap(&n, "  ", "  "));
        }
        lines
    }

    /// The command that reruns one case alone on the same runtime, as the run was made: its
    /// name as a glob over the whole name (`*` first makes it one), so that no case whose name
    /// merely contains it runs too.
    fn rerun_command(&self, suite: &str, run: &RuntimeRun, name: &str) -> String {
        let mut words = super::run_words(suite, run);
        words.extend(self.rerun.options.iter().cloned());
        words.extend(["--filter".into(), whole_name(name)]);
        printable(&shell_words::join(words), false)
    }

    /// The command that prints a case's rule, citation and steps.
    fn explain_command(&self, name: &str) -> String {
        let mut words: Vec<String> = vec!["hcpspec".into(), "explain".into(), name.into()];
        if let Some(v) = &self.rerun.vectors {
            words.extend(["--vectors".into(), v.display().to_string()]);
        }
        printable(&shell_words::join(words), false)
    }

    /// A runtime's problems, a cause at a time: its first case in full (how to rerun it, how
    /// to read it), the others a line each. Stale expectations that do not fail the run in a
    /// line each.
    fn explain_problems(&mut self, suite: &str, run: &RuntimeRun, cases: &[Case], found: &[Cause]) {
        let by_name: HashMap<String, &Case> = cases.iter().map(|c| (c.name(), c)).collect();
        for cause in found {
            let first = &run.cases[cause.cases[0]];
            let mut block = format!("\n{}", heading(first));
            match by_name.get(&first.name) {
                Some(c) if deviates(first) => {
                    block = format!(
                        "\n{} {}",
                        label(first),
                        printable(first.explain(c).trim_end(), true)
                    );
                    if state(first) == State::Profile {
                        block += "\n  not a failure: it decides otherwise than hcpspec's profile";
                    }
                }
                _ => {}
            }
            block += &format!(
                "\n  rerun:   {}\n  explain: {}",
                self.rerun_command(suite, run, &first.name),
                self.explain_command(&first.name)
            );
            if self.trace {
                block += &format!("\n{}", super::trace_text(first));
            }
            let others = &cause.cases[1..];
            if !others.is_empty() {
                block += &format!(
                    "\n  the same cause in {} more (rerun one: its name in --filter above):",
                    others.len()
                );
            }
            // Another case's own words where they differ from the first's (its step, the text
            // it quotes), cut to a line.
            let said = problem(first);
            for &i in others {
                let r = &run.cases[i];
                block += &format!("\n    {}", heading(r));
                let own = problem(r);
                if own != said && !own.is_empty() {
                    block += &format!("\n      {}", cut(&own, WIDTH - 6));
                }
                if self.trace {
                    block += &format!("\n{}", super::trace_text(r));
                }
            }
            self.err(&block);
        }
        for r in &run.cases {
            let stale = r.annotations.outcome == Some(Outcome::Stale);
            if stale && !fails_run(r, self.rules) {
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

    /// A runtime's causes, as the end of the run shows them: each once, with its count and
    /// the first of its cases.
    fn summarise(&self, suite: Option<&str>, run: &RuntimeRun, found: &[Cause]) -> Vec<String> {
        if found.is_empty() {
            return vec![];
        }
        let failing: usize = found.iter().map(|c| c.failing).sum();
        let on = match suite {
            Some(s) => format!("{s} on {}", run.shown()),
            None => run.shown().to_string(),
        };
        let mut lines = vec![String::new()];
        lines.extend(wrap(&format!("{}:", printable(&on, false)), "", "  "));
        lines.push(format!(
            "{failing} of {} case(s) fail the run; {} cause(s):",
            run.cases.len(),
            found.len()
        ));
        let width = found
            .iter()
            .map(|c| c.cases.len().to_string().len())
            .max()
            .unwrap_or(1);
        for cause in found.iter().take(SHOWN) {
            let count = format!("  {:>width$} × ", cause.cases.len());
            let indent = " ".repeat(count.chars().count());
            lines.extend(wrap(&printable(&cause.what, false), &count, &indent));
            match cause.failing {
                0 => lines.push(format!("{indent}(none of them fails the run)")),
                n if n < cause.cases.len() => {
                    lines.push(format!("{indent}({n} of them fail the run)"))
                }
                _ => {}
            }
            for &i in cause.cases.iter().take(NAMED) {
                lines.push(format!("{indent}{}", printable(&run.cases[i].name, false)));
            }
            if cause.cases.len() > NAMED {
                lines.push(format!(
                    "{indent}… and {} more (above)",
                    cause.cases.len() - NAMED
                ));
            }
        }
        if found.len() > SHOWN {
            let rest: usize = found[SHOWN..].iter().map(|c| c.cases.len()).sum();
            lines.push(format!(
                "  … and {} more cause(s) of {rest} case(s), each explained above",
                found.len() - SHOWN
            ));
        }
        lines
    }

    /// A suite's last words: transport parity, and what its snapshots call for.
    fn suite_finished(&mut self, result: &RunResult) {
        let groups = crate::run::parity::groups(
            &result
                .runtimes
                .iter()
                .map(|r| (r.runtime.as_str(), &r.info))
                .collect::<Vec<_>>(),
        );
        for (runtime, specs) in &groups {
            // The runtime's own name and version: escaped, as every text from it is.
            let (runtime_shown, specs_shown) = (
                printable(runtime, false),
                printable(&specs.join(", "), false),
            );
            let n = result
                .parity
                .iter()
                .filter(|d| &d.runtime == runtime)
                .count();
            if n == 0 {
                self.out(&format!(
                    "\ntransport parity: {runtime_shown} observed the same over {specs_shown}"
                ));
            } else {
                self.err(&format!(
                    "\ntransport parity: {runtime_shown}: {n} case(s) observed differently over {specs_shown}"
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
                "\n{new} new snapshot(s) written under {} (not a failure): commit them",
                self.snapshots
                    .as_ref()
                    .map_or_else(String::new, |d| d.display().to_string())
            ));
        }
        if changed > 0 {
            self.err(&format!("\n{changed} case(s) drifted from their snapshots: review the .snap.new files ({review}, or cargo insta review) or rerun with --accept"));
        }
    }

    /// The run's causes, every runtime's, once all ran.
    fn run_finished(&mut self) {
        let lines: Vec<String> = self
            .ends
            .iter_mut()
            .flat_map(|e| std::mem::take(&mut e.causes))
            .collect();
        // On stdout with the tables and the verdict: the summary reads whole even when stderr
        // (the details) goes elsewhere.
        for l in lines {
            self.out(&l);
        }
    }

    /// The run's last words, once its outputs are written (`wrote`, None when they could not
    /// be: the error that says so comes after): every runtime's table, then how it exits.
    pub fn finish(&mut self, code: i32, stats: &RunStats, wrote: Option<&str>) {
        if let Some(w) = wrote {
            self.out(&format!("\n{w}"));
        }
        self.tables();
        if wrote.is_none() {
            return;
        }
        let line = exit_line(code, stats);
        let line = match (self.look.red, code) {
            (false, _) => line,
            (true, 0) => format!("\x1b[32m{line}\x1b[0m"),
            (true, _) => format!("\x1b[31m{line}\x1b[0m"),
        };
        self.out(&format!("\n{line}"));
    }

    fn tables(&mut self) {
        let lines: Vec<String> = std::mem::take(&mut self.ends)
            .into_iter()
            .flat_map(|e| e.table)
            .collect();
        for l in lines {
            self.out(&l);
        }
    }
}

/// A run that ends early (an error) still shows the tables of the runtimes that finished.
impl Drop for Terminal {
    fn drop(&mut self) {
        self.tables();
    }
}

/// How the run exits, in one line.
fn exit_line(code: i32, stats: &RunStats) -> String {
    let parity = match stats.parity {
        0 => String::new(),
        n => format!(", and {n} transport parity difference(s)"),
    };
    match code {
        0 => format!("ok: {} case(s), none fails the run (exit 0)", stats.cases),
        1 => format!(
            "FAILED: {} of {} case(s) fail the run{parity} (exit 1)",
            stats.failed, stats.cases
        ),
        c => format!(
            "interrupted: {} of {} case(s) fail the run{parity}; the outputs hold the cases that ran, the rest are skips saying so (exit {c})",
            stats.failed, stats.cases
        ),
    }
}

/// Is the case's verdict itself the problem (not its snapshot or expectation)?
fn deviates(r: &crate::run::CaseResult) -> bool {
    matches!(
        state(r),
        State::Fail | State::Error | State::Unimplemented | State::Profile
    )
}

/// The word a case's problem is told by: its verdict's, PROFILE, or what its snapshot or
/// expectation did.
fn label(r: &crate::run::CaseResult) -> String {
    if state(r) == State::Profile {
        return "PROFILE".into();
    }
    if deviates(r) {
        return r.verdict.label().to_uppercase();
    }
    match &r.annotations.drift {
        Some(Drift::Changed { .. }) => "DRIFT".into(),
        Some(Drift::New) => "NEW".into(),
        None => "STALE".into(),
    }
}

/// A case's one-line heading: its label and name.
fn heading(r: &crate::run::CaseResult) -> String {
    format!("{} {}", label(r), printable(&r.name, false))
}

/// What a case's verdict says went wrong, in one line (empty for a pass or skip).
fn problem(r: &crate::run::CaseResult) -> String {
    let text = match &r.verdict {
        Verdict::Fail(f) => format!(
            "step {} ({}): {} at `{}`",
            f.step, f.action, f.message, f.path
        ),
        Verdict::Error { message } => message.clone(),
        Verdict::Unimplemented { reason } => reason.clone(),
        Verdict::Pass | Verdict::Skip { .. } => String::new(),
    };
    printable(&text, false)
}

/// A case name as a `--filter` that selects it alone: a glob over the whole name (the leading
/// `*` makes the filter one; every name of the suite starts with the suite's), its own glob
/// characters taken literally.
fn whole_name(name: &str) -> String {
    let mut out = String::from("*");
    for c in name.chars() {
        match c {
            '*' | '?' | '[' | ']' | '{' | '}' | '\\' => {
                out.push('[');
                out.push(c);
                out.push(']');
            }
            c => out.push(c),
        }
    }
    out
}

/// `text` in at most `width` characters: cut after a whole word, with an ellipsis.
fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut out = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let next = match out.is_empty() {
            true => word.to_string(),
            false => format!("{out} {word}"),
        };
        if next.chars().count() + 2 > width {
            break;
        }
        out = next;
    }
    if out.is_empty() {
        out = text.chars().take(width.saturating_sub(1)).collect();
    }
    out + " …"
}

/// `text` wrapped at [`WIDTH`] on word boundaries: the first line after `first`, the others
/// after `rest`. A word longer than a line has one to itself.
fn wrap(text: &str, first: &str, rest: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split(' ') {
        let len = line.chars().count() + 1 + word.chars().count();
        if !empty && len > WIDTH {
            lines.push(std::mem::replace(&mut line, rest.to_string()));
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    lines.push(line);
    lines
}

impl Reporter for Terminal {
    fn event(&mut self, e: &Event<'_>) {
        match &e.kind {
            EventKind::RunStarted { suites } => {
                self.suites = suites.iter().map(|s| (*s).clone()).collect()
            }
            EventKind::RuntimeStarted { spec, cases, .. } => {
                self.runtime_started(e.suite, spec, *cases)
            }
            EventKind::CaseStarted { .. } => {}
            EventKind::CaseSlow {
                spec,
                name,
                elapsed,
            } => self.case_slow(spec, name, *elapsed),
            EventKind::CaseFinished { result, .. } => self.case_finished(result),
            EventKind::Drifted {
                spec,
                result,
                drift,
                written: _,
            } => self.drifted(spec, result, drift),
            EventKind::RuntimeFinished { spec, run, cases } => {
                self.runtime_finished(e.suite, spec, run, cases)
            }
            EventKind::ParityDiffered { difference } => self.err(&format!(
                "PARITY {}",
                printable(&difference.to_string(), false)
            )),
            EventKind::ParityHidden { hidden } => {
                self.err(&format!("note: {}", printable(&hidden.to_string(), false)))
            }
            EventKind::SuiteFinished { result } => self.suite_finished(result),
            EventKind::RunFinished { .. } => self.run_finished(),
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

    #[test]
    fn lines_are_cut_and_wrapped_on_words() {
        assert_eq!(cut("short", 80), "short");
        assert_eq!(cut("one two three four", 12), "one two …");
        assert_eq!(cut("abcdefghijkl", 6), "abcde …");
        let text = "word ".repeat(40);
        let lines = wrap(text.trim_end(), "  1 × ", "      ");
        assert!(lines.len() > 1, "{lines:?}");
        assert!(
            lines.iter().all(|l| l.chars().count() <= WIDTH),
            "{lines:?}"
        );
        assert!(lines[0].starts_with("  1 × word") && lines[1].starts_with("      word"));
        assert!(lines.iter().all(|l| !l.ends_with(' ')), "{lines:?}");
    }

    #[test]
    fn a_filter_of_the_whole_name_takes_its_glob_characters_literally() {
        assert_eq!(whole_name("s::g::a"), "*s::g::a");
        assert_eq!(whole_name("s::g::a*b?[c]"), "*s::g::a[*]b[?][[]c[]]");
        let g = globset::Glob::new(&whole_name("s::g::a*b?[c]"))
            .unwrap()
            .compile_matcher();
        assert!(g.is_match("s::g::a*b?[c]") && !g.is_match("s::g::axbx[c]"));
    }

    /// What the terminal prints of a run with a pass, a failure, an error and a PROFILE
    /// deviation: stderr (the problems explained a cause at a time, then the causes) and stdout
    /// (where the outputs are, the table, how the run exits).
    #[test]
    fn a_red_run_ends_with_its_causes_table_and_exit() {
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
            implementation: None,
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
        t.finish(
            1,
            &stats,
            Some("wrote reports/latest/result.json (5 files)"),
        );
        insta::assert_snapshot!("terminal_stdout", out.text());
        insta::assert_snapshot!("terminal_stderr", err.text());
    }
}
