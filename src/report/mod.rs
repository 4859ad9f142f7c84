//! The RunResult, the one machine-readable record of a run, and its renderings: JUnit XML,
//! a Markdown summary, a self-contained HTML compatibility report, shields.io badges.

mod badge;
pub mod causes;
pub mod diff;
mod html;
mod junit;
mod markdown;
mod record;
pub mod site;
mod table;
pub mod terminal;
pub mod verify;

pub use badge::badge;
pub use html::html;
pub use junit::junit;
pub use markdown::markdown;
pub use record::{merge, read, Report, REPORT_SCHEMA};
pub use table::{table, table_marked, Marks};
pub use terminal::{Look, Terminal};

pub use crate::run::result::{
    counts, fails_run, fnv1a, outcome, state, Mark, Rules, RunResult, RunStats, RuntimeRun, State,
    Summary, SCHEMA,
};
use std::path::Path;

/// A character that is not text to show: a control character (ESC, CR, BEL, NUL …), a bidi
/// control (U+202A–U+202E embeddings and overrides, U+2066–U+2069 isolates, U+200E/U+200F marks,
/// U+061C), an invisible one (zero-width U+200B–U+200D, U+2060–U+2064, U+FEFF, the soft hyphen
/// U+00AD, the line and paragraph separators U+2028/U+2029) or a tag character (U+E0000–U+E007F,
/// invisible text). Every rendering shows these escaped (`\u{202e}`), never as they act.
pub fn invisible(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{202a}'..='\u{202e}'
            | '\u{2066}'..='\u{2069}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2060}'..='\u{2064}'
            | '\u{2028}' | '\u{2029}' | '\u{061c}' | '\u{feff}' | '\u{ad}'
            | '\u{e0000}'..='\u{e007f}')
}

/// Text from a runtime, a shim or a result file made safe for a terminal or a one-line field:
/// control characters (ESC, CR, BEL, NUL, bidi overrides, zero-width and other [`invisible`]
/// ones) are shown escaped (`\u{1b}`) instead of acting; newlines and tabs are kept only when
/// `lines`.
pub fn printable(s: &str, lines: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if (lines && (c == '\n' || c == '\t')) || !invisible(c) {
            out.push(c);
        } else {
            out.extend(c.escape_default());
        }
    }
    out
}

/// A case's wire trace as text (`--trace`, `explain --result`): a line a message, indented,
/// escaped as every text from a runtime is.
pub fn trace_text(r: &crate::run::CaseResult) -> String {
    match &r.annotations.trace {
        None => "  trace: no message was exchanged".into(),
        Some(t) => {
            let mut out = format!(
                "  trace ({} messages{}):",
                t.messages.len(),
                match t.left_out {
                    0 => String::new(),
                    n => format!(", {n} left out"),
                }
            );
            for l in t.lines() {
                out += &format!("\n    {}", printable(&l, false));
            }
            out
        }
    }
}

/// The words of `hcpspec run` for one runtime of a suite, as the run named it (its spec and
/// `--name`): what a rerun or a recording command starts with.
fn run_words(suite: &str, run: &RuntimeRun) -> Vec<String> {
    let mut words: Vec<String> = ["hcpspec", "run", "--suite", suite, "--runtime"]
        .map(String::from)
        .into();
    words.push(run.runtime.clone());
    if let Some(l) = &run.label {
        words.extend(["--name".into(), l.clone()]);
    }
    words
}

/// The size budget of each output file of a record, in bytes: 1 MiB, and 128 KiB for each case
/// result, observation, failure's expected and actual, and parity difference. Observations are
/// at most 16 KiB pretty-printed and texts 4 KiB (`snapshot::MAX_VALUE`, `MAX_TEXT`), so a run
/// stays well inside it; a file over it is not written.
pub fn budget(report: &Report) -> u64 {
    let mut items = 0;
    for result in &report.suites {
        items += result.parity.len() as u64;
        for run in &result.runtimes {
            items += 1;
            for c in &run.cases {
                items += 1 + c.observations.len() as u64;
                // A trace: 32 KiB of text, escaped.
                items += u64::from(c.annotations.trace.is_some());
                if matches!(c.verdict, crate::run::Verdict::Fail(_)) {
                    items += 2;
                }
            }
        }
    }
    (1 << 20) + items * (128 << 10)
}

/// Why the outputs of a run were not written: not bad input, not a failed case.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{}: {source}", path.display())]
    Io {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    #[error("{}: {size} bytes is over its budget of {budget} bytes; nothing was written", path.display())]
    OverBudget {
        path: std::path::PathBuf,
        size: u64,
        budget: u64,
    },
}

/// Write every rendering of `report` into `dir`: result.json, junit.xml, summary.md,
/// index.html and badges/<suite>/<runtime>.json. Each must fit its [`budget`]; nothing is
/// written when one does not.
pub fn write_all(report: &Report, dir: &Path) -> Result<Vec<std::path::PathBuf>, WriteError> {
    let io = |p: &Path, e: std::io::Error| WriteError::Io {
        path: p.to_path_buf(),
        source: e,
    };
    let mut files = vec![
        (
            dir.join("result.json"),
            serde_json::to_string_pretty(report).unwrap_or_default(),
        ),
        (dir.join("junit.xml"), junit(report)),
        (dir.join("summary.md"), markdown(report)),
        (dir.join("index.html"), html(report)),
    ];
    for result in &report.suites {
        for run in &result.runtimes {
            let name = crate::snapshot::runtime_dir(&run.name());
            let suite = crate::snapshot::runtime_dir(&result.suite);
            files.push((
                dir.join("badges").join(suite).join(format!("{name}.json")),
                badge(result, run),
            ));
        }
    }
    let budget = budget(report);
    if let Some((p, text)) = files.iter().find(|(_, t)| t.len() as u64 > budget) {
        return Err(WriteError::OverBudget {
            path: p.clone(),
            size: text.len() as u64,
            budget,
        });
    }
    for (p, text) in &files {
        unlinked(dir, p).map_err(|e| io(p, e))?;
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
        }
        std::fs::write(p, text).map_err(|e| io(p, e))?;
    }
    let written: Vec<_> = files.into_iter().map(|(p, _)| p).collect();
    stale_badges(&dir.join("badges"), &written);
    Ok(written)
}

/// No part of `p` below `dir` is a symbolic link: an output is never written through one (a
/// link committed or planted in a reused `--out` made `run` and `report` overwrite files
/// outside it).
pub fn unlinked(dir: &Path, p: &Path) -> std::io::Result<()> {
    let Ok(rel) = p.strip_prefix(dir) else {
        return Ok(());
    };
    let mut at = dir.to_path_buf();
    for part in rel.components() {
        at.push(part);
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(std::io::Error::other(format!(
                "{} is a symbolic link: hcpspec writes no output through one",
                at.display()
            )));
        }
    }
    Ok(())
}

/// Remove the badges an earlier run left in a reused `--out` (`badges/<suite>/*.json` this one
/// did not write), so no badge shows a runtime or suite this run did not judge. Only regular
/// files, never through a link.
fn stale_badges(badges: &Path, written: &[std::path::PathBuf]) {
    let entries = |d: &Path| {
        std::fs::read_dir(d)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| Some((e.file_type().ok()?, e.path())))
            .collect::<Vec<_>>()
    };
    for (kind, suite) in entries(badges) {
        if !kind.is_dir() {
            continue;
        }
        for (kind, file) in entries(&suite) {
            let json = file.extension().is_some_and(|x| x == "json");
            if kind.is_file() && json && !written.contains(&file) {
                let _ = std::fs::remove_file(&file);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::parity::Difference;

    /// A result of suite `suite-a` with no runtime and no case.
    fn empty_result() -> RunResult {
        RunResult {
            schema: SCHEMA.into(),
            hcpspec_version: "0".into(),
            suite: "suite-a".into(),
            sections: vec![],
            cases_hash: "0".into(),
            runtimes: vec![],
            parity: vec![],
            strict_expectations: false,
            ci: false,
        }
    }

    #[test]
    fn an_output_over_its_budget_is_not_written() {
        let mut result = empty_result();
        let dir = tempfile::tempdir().unwrap();
        assert!(write_all(&Report::of(vec![result.clone()]), dir.path()).is_ok());
        // A result that was never contained (read from a file, say): over budget, refused.
        result.suite = "x".repeat(3 << 20);
        let out = tempfile::tempdir().unwrap();
        let e = write_all(&Report::of(vec![result]), out.path()).unwrap_err();
        assert!(matches!(e, WriteError::OverBudget { .. }), "{e}");
        assert!(!out.path().join("result.json").exists());
    }

    #[test]
    fn a_reused_out_keeps_no_badge_of_an_earlier_run() {
        let result = empty_result();
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("badges/suite-a/gone.json");
        let other = dir.path().join("badges/suite-b/gone.json");
        std::fs::create_dir_all(other.parent().unwrap()).unwrap();
        std::fs::create_dir_all(old.parent().unwrap()).unwrap();
        std::fs::write(&old, "{}").unwrap();
        std::fs::write(&other, "{}").unwrap();
        std::fs::write(dir.path().join("badges/suite-a/notes.txt"), "kept").unwrap();
        write_all(&Report::of(vec![result]), dir.path()).unwrap();
        assert!(!old.exists() && !other.exists(), "a stale badge stayed");
        assert!(dir.path().join("badges/suite-a/notes.txt").exists());
    }

    #[test]
    fn printable_escapes_control_characters() {
        assert_eq!(printable("a\u{1b}[31mb\r\n", false), "a\\u{1b}[31mb\\r\\n");
        assert_eq!(printable("a\nb\u{7}", true), "a\nb\\u{7}");
        assert_eq!(printable("\u{202e}x", false), "\\u{202e}x");
    }

    #[test]
    fn parity_differences_are_recorded_and_rendered() {
        let result = RunResult {
            schema: SCHEMA.into(),
            hcpspec_version: "0".into(),
            suite: "suite-a".into(),
            sections: vec![],
            cases_hash: "0".into(),
            runtimes: vec![],
            parity: vec![Difference {
                case: "contract::04-confirm::x".into(),
                runtime: "reference".into(),
                left: "inproc:reference".into(),
                right: "<stdio:evil>".into(),
                what: "/observations/1/value/ok: true ≠ false".into(),
            }],
            strict_expectations: false,
            ci: false,
        };
        let report = Report::of(vec![result]);
        let json = serde_json::to_value(&report).unwrap();
        assert!(crate::schema::violations(crate::schema::run_result(), &json).is_empty());
        assert_eq!(json["suites"][0]["parity"][0]["right"], "<stdio:evil>");
        assert!(markdown(&report).contains("Transport parity: 1 difference"));
        assert!(junit(&report).contains("suite-a transport parity"));
        let page = html(&report);
        assert!(page.contains("&lt;stdio:evil&gt;") && !page.contains("<stdio:evil>"));
    }
}
