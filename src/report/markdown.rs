//! A Markdown summary that fits a GitHub job summary: the section matrix, then what failed.

use super::{counts, fails_run, state, Mark, Report, RunResult, State, Summary};
use crate::run::Verdict;

/// `mark pass/total · N state …`: the counts every rendering shows, with one mark: ❌ the run
/// fails here, – nothing ran, ⚠️ something did not pass, ✅ all passed.
fn cell(s: &Summary) -> String {
    let mark = match s.mark() {
        Mark::Fails => "❌",
        Mark::NoneRan => "–",
        Mark::Warn => "⚠️",
        Mark::Ok => "✅",
    };
    let mut text = format!("{mark} {}/{}", s.pass, s.total());
    for other in s.others() {
        text += &format!(" · {other}");
    }
    text
}

/// Markdown table cells and headings must not break the table or the page: escape pipes,
/// markup and backticks, and show control characters (newlines included) escaped.
pub(super) fn md(s: &str) -> String {
    super::printable(&s.replace(['\r', '\n'], " "), false)
        .replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('`', "'")
        .replace('[', "\\[")
}

/// A part per suite, each its section matrix and what failed.
pub fn markdown(report: &Report) -> String {
    let mut out = report
        .suites
        .iter()
        .map(suite)
        .collect::<Vec<_>>()
        .join("\n");
    for o in &report.vectors {
        out += &format!("<sub>vectors: {}</sub>\n", md(&o.to_string()));
    }
    out
}

/// What the matrix needs said first, per runtime: a run stopped early, a run judged by an older
/// protocol version.
fn notes(result: &RunResult) -> String {
    let mut out = String::new();
    for run in &result.runtimes {
        if let Some(why) = &run.stopped {
            out += &format!(
                "> **Stopped early** on {}: {}; the cases not run are skips.\n\n",
                md(run.shown()),
                md(why)
            );
        }
        if let (Some(v), n @ 1..) = (
            &run.version,
            Summary::of(&run.cases, result.rules()).not_scored,
        ) {
            out += &format!(
                "> {} is judged by `{}`: {n} case(s) of a later version are not scored.\n\n",
                md(run.shown()),
                md(v)
            );
        }
    }
    out
}

/// Does `r` fail the run only for want of a snapshot (under CI)?
fn only_new(r: &crate::run::CaseResult, rules: super::Rules) -> bool {
    r.annotations.drift == Some(crate::snapshot::Drift::New)
        && !fails_run(
            &crate::run::CaseResult {
                annotations: crate::run::Annotations {
                    drift: None,
                    ..r.annotations.clone()
                },
                ..r.clone()
            },
            rules,
        )
}

/// The one command that records a runtime's snapshots: its run again with `--accept`.
pub(super) fn record_command(suite: &str, run: &crate::run::result::RuntimeRun) -> String {
    let mut words = super::run_words(suite, run);
    words.extend(["--snapshots", "DIR", "--accept"].map(String::from));
    shell_words::join(words)
}

/// A problem's row: runtime, case, level, what, spec.
fn row(runtime: &str, r: &crate::run::CaseResult, st: State) -> String {
    let why = match (&r.verdict, st) {
        (_, State::Stale) => "expected to fail, but passes".to_string(),
        (Verdict::Fail(f), _) => format!(
            "step {} ({}): {} at `{}`",
            f.step, f.action, f.message, f.path
        ),
        (Verdict::Error { message }, _) => message.clone(),
        (Verdict::Unimplemented { reason }, _) => format!("unimplemented: {reason}"),
        _ if r.annotations.drift == Some(crate::snapshot::Drift::New) => {
            "no snapshot yet (a new snapshot fails the run under CI)".to_string()
        }
        _ => "snapshot drift".to_string(),
    };
    format!(
        "| {} | `{}` | {:?} | {} | {} |",
        md(runtime),
        md(&r.name),
        r.level,
        md(&why),
        md(&r.spec)
    )
}

/// A table of case rows, the first 50 of them.
fn cases_table(rows: &[String]) -> String {
    let shown = rows.len().min(50);
    let mut out = "| runtime | case | level | what | spec |\n|---|---|---|---|---|\n".to_string();
    out += &rows[..shown].join("\n");
    out += "\n";
    if shown < rows.len() {
        out += &format!("\n… and {} more: see result.json\n", rows.len() - shown);
    }
    out
}

/// "N problem(s)": what fails the run, counted as the exit code, JUnit and the terminal count
/// it; the cases failing only for want of a snapshot in one line per runtime, with the command
/// that records them, then a row per other case. Empty when nothing fails the run.
fn problems_part(
    result: &RunResult,
    problems: &[String],
    new_only: &[(&crate::run::result::RuntimeRun, usize)],
) -> String {
    let mut out = String::new();
    let count =
        problems.len() + new_only.iter().map(|(_, n)| n).sum::<usize>() + result.parity.len();
    if count > 0 {
        out += &format!("\n### {count} problem(s): what fails the run\n\n");
        for (run, n) in new_only {
            out += &format!(
                "- **{n} case(s) of {} have no snapshot yet**, which fails the run under CI: record them with `{}`, then commit DIR (your --snapshots folder).\n",
                md(run.shown()),
                md(&record_command(&result.suite, run))
            );
        }
        if !result.parity.is_empty() {
            out += &format!(
                "- {} transport parity difference(s), below.\n",
                result.parity.len()
            );
        }
        if !problems.is_empty() {
            if !new_only.is_empty() || !result.parity.is_empty() {
                out += "\n";
            }
            out += &cases_table(problems);
        }
    }
    out
}

fn suite(result: &RunResult) -> String {
    let mut out = format!(
        "## hcpspec {} — {} runtime(s)\n\n",
        md(&result.suite),
        result.runtimes.len()
    );
    out += &notes(result);
    out += "| section |";
    for run in &result.runtimes {
        out += &format!(" {} |", md(run.shown()));
    }
    out += "\n|---|";
    out += &"---|".repeat(result.runtimes.len());
    out += "\n";
    for sec in &result.sections {
        let s = sec.id.as_str();
        if result
            .runtimes
            .iter()
            .all(|r| r.cases.iter().all(|c| c.section != s))
        {
            continue;
        }
        out += &format!(
            "| {} |",
            md(&crate::run::plan::section_label(s, &sec.title))
        );
        for run in &result.runtimes {
            out += &format!(" {} |", cell(&counts(&run.cases, s, None, result.rules())));
        }
        out += "\n";
    }
    out += "| **total** |";
    for run in &result.runtimes {
        out += &format!(" **{}** |", cell(&Summary::of(&run.cases, result.rules())));
    }
    out += "\n";
    let rules = result.rules();
    let mut problems = Vec::new();
    let mut new_only: Vec<(&crate::run::result::RuntimeRun, usize)> = vec![];
    let mut other = Vec::new();
    let mut profile = Vec::new();
    let mut unscored = Vec::new();
    for run in &result.runtimes {
        let mut new = 0;
        for r in &run.cases {
            let st = state(r);
            let fails = fails_run(r, rules);
            // One rule for a problem, as the exit code, JUnit and the terminal count: a case
            // that fails the run. Those missing only their snapshot are counted in one line.
            if fails && only_new(r, rules) {
                new += 1;
            } else if fails {
                problems.push(row(run.shown(), r, st));
            }
            if st == State::NotScored {
                let why = r.annotations.not_scored.as_deref().unwrap_or_default();
                unscored.push(format!(
                    "| {} | `{}` | {} | {} |",
                    md(run.shown()),
                    md(&r.name),
                    r.verdict.label(),
                    md(why)
                ));
            } else if st == State::Profile {
                profile.push(format!("| {} | `{}` |", md(run.shown()), md(&r.name)));
            } else if !fails
                && matches!(
                    st,
                    State::Fail | State::Error | State::Stale | State::Unimplemented
                )
            {
                other.push(row(run.shown(), r, st));
            }
        }
        if new > 0 {
            new_only.push((run, new));
        }
    }
    out += &problems_part(result, &problems, &new_only);
    if !other.is_empty() {
        out += &format!(
            "\n### {} other case(s) that did not pass: not failing the run\n\n",
            other.len()
        );
        out += &cases_table(&other);
    }
    if !profile.is_empty() {
        out += &format!(
            "\n### {} PROFILE deviation(s): decided otherwise than hcpspec recommends, not failures\n\n| runtime | case |\n|---|---|\n{}\n",
            profile.len(),
            profile.join("\n")
        );
    }
    if !unscored.is_empty() {
        let shown = unscored.len().min(50);
        out += &format!(
            "\n### {} case(s) not scored: of a later protocol version than the target states, run and reported, never failing the run\n\n| runtime | case | verdict | why |\n|---|---|---|---|\n{}\n",
            unscored.len(),
            unscored[..shown].join("\n")
        );
        if shown < unscored.len() {
            out += &format!("\n… and {} more: see result.json\n", unscored.len() - shown);
        }
    }
    if !result.parity.is_empty() {
        out += &format!(
            "\n### Transport parity: {} difference(s)\n\n",
            result.parity.len()
        );
        for d in &result.parity {
            out += &format!(
                "- `{}` on {}: {} and {} differ: {}\n",
                md(&d.case),
                md(&d.runtime),
                md(&d.left),
                md(&d.right),
                md(&d.what)
            );
        }
    }
    out += &format!(
        "\n<sub>hcpspec {} · cases {}</sub>\n",
        md(&result.hcpspec_version),
        md(&result.cases_hash)
    );
    out
}

#[cfg(test)]
mod marks {
    use super::*;

    #[test]
    fn a_section_of_expected_failures_only_is_ok_as_on_the_terminal() {
        let s = Summary {
            expected_fail: 3,
            ..Summary::default()
        };
        assert!(cell(&s).starts_with("✅"), "{}", cell(&s));
        let s = Summary {
            expected_fail: 2,
            skip: 0,
            fail: 0,
            pass: 1,
            profile: 1,
            ..Summary::default()
        };
        assert!(cell(&s).starts_with("⚠️"), "{}", cell(&s));
    }
}
