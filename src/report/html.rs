//! The HTML compatibility report: one self-contained page (no external assets, no script).
//! A runtimes × sections matrix with MUST/SHOULD split, requirement coverage per section, and a
//! drill-down per case with its citation and diff. Every byte that came from a runtime or a
//! case goes through `esc`.

use super::{counts, fails_run, state, Mark, Report, RunResult, State, Summary};
use crate::case::Level;
use crate::run::plan::section_label;
use crate::run::Verdict;
use std::fmt::Write;

pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control, bidi and invisible characters are not text: shown escaped (`\u{202e}`),
            // never as they act, in text, attributes and titles alike.
            c if super::invisible(c) && c != '\n' && c != '\t' => out.extend(c.escape_default()),
            c => out.push(c),
        }
    }
    out
}

pub(super) const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#1d1d1f}h1{font-size:1.6em}\
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #d0d0d5;padding:.35em .6em;text-align:left;vertical-align:top}\
th{background:#f3f3f6}td.ok{background:#e6f6e9}td.bad{background:#fde8e8}td.warn{background:#fff6d6}td.none{color:#999}\
.n{font-variant-numeric:tabular-nums}small{color:#666}pre{background:#f6f6f8;padding:.6em;overflow:auto;max-height:24em}\
details{margin:.2em 0}summary{cursor:pointer}:target{outline:2px solid #3b6fd4;scroll-margin-top:14em}.trace pre{white-space:pre-wrap;overflow-wrap:anywhere}a.a{color:#999;text-decoration:none;margin-left:.4em}.pass{color:#17803d}.fail,.error,.stale{color:#c0282d}.skip{color:#8a6d00}";

/// An element id from names (a suite, a runtime, a section, a case): stable across runs, the
/// same names the same id. Letters, digits, `:`, `.`, `_` and `-` stay; anything else is `-`.
pub fn anchor(parts: &[&str]) -> String {
    parts
        .iter()
        .map(|p| {
            p.chars()
                .map(|c| match c {
                    c if c.is_ascii_alphanumeric() || matches!(c, ':' | '.' | '_' | '-') => c,
                    _ => '-',
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// One mark per cell, as in every rendering: bad when the run fails here, none when nothing
/// ran, warn when something did not pass and was not declared to fail (an expected failure is
/// the runtime's own word: a section of only those is ok, as the terminal marks it ✓).
fn class(s: &Summary) -> &'static str {
    match s.mark() {
        Mark::Fails => "bad",
        Mark::NoneRan => "none",
        Mark::Warn => "warn",
        Mark::Ok => "ok",
    }
}

fn level_line(label: &str, s: &Summary) -> String {
    if s.total() == 0 {
        return String::new();
    }
    format!(
        "<div>{label} <span class=n>{}/{}</span></div>",
        s.pass,
        s.total()
    )
}

/// A matrix cell: `pass/total`, the other counts in words, and every count as a `data-*`
/// attribute (`data-expected-fail`, …, `data-drift`, `data-new`, `data-total`) for a checker.
pub(super) fn cell(h: &mut String, s: &Summary, attrs: &str, levels: &str) {
    let mut data = String::new();
    for st in State::ALL {
        let _ = write!(data, " data-{}={}", st.label(), st.count(s));
    }
    let _ = write!(
        h,
        "<td class={}{attrs}{data} data-drift={} data-new={} data-total={}><b class=n>{}/{}</b>{levels}",
        class(s),
        s.drift,
        s.new,
        s.total(),
        s.pass,
        s.total()
    );
    let others = s.others();
    if !others.is_empty() {
        let _ = write!(h, "<div><small>{}</small></div>", others.join(" · "));
    }
    h.push_str("</td>");
}

/// The page: a part per suite, each its matrix, coverage, cases and parity.
pub fn html(report: &Report) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>hcpspec compatibility report</title><style>{STYLE}</style></head><body>\
         <h1>hcpspec compatibility report</h1><p>hcpspec {} · {} suite(s)",
        esc(&report.hcpspec_version),
        report.suites.len()
    );
    for o in &report.vectors {
        let _ = write!(h, " · vectors {}", esc(&o.to_string()));
    }
    h += "</p>";
    for result in &report.suites {
        suite(&mut h, result);
    }
    h += "</body></html>\n";
    h
}

fn suite(h: &mut String, result: &RunResult) {
    let _ = write!(
        h,
        "<section id=\"{3}\" data-suite=\"{0}\"><h2>Suite {0}<a class=a href=\"#{3}\">#</a></h2><p>{1} runtime(s) · cases <code>{2}</code></p>",
        esc(&result.suite),
        result.runtimes.len(),
        esc(&result.cases_hash),
        esc(&anchor(&["suite", &result.suite]))
    );
    for run in &result.runtimes {
        if let Some(why) = &run.stopped {
            let _ = write!(
                *h,
                "<p class=stale><b>Stopped early</b> on {}: {}; the cases not run are skips.</p>",
                esc(run.shown()),
                esc(why)
            );
        }
        if let (Some(v), n @ 1..) = (
            &run.version,
            Summary::of(&run.cases, result.rules()).not_scored,
        ) {
            let _ = write!(
                *h,
                "<p>{} is judged by <code>{}</code>: {n} case(s) of a later version are not scored.</p>",
                esc(run.shown()),
                esc(v)
            );
        }
    }
    let sections = sections(result);
    matrix(h, result, &sections);
    coverage(h, result, &sections);
    cases(h, result, &sections);
    parity(h, result);
    *h += "</section>";
}

/// The suite's sections some runtime ran a case of: (id, title).
fn sections(result: &RunResult) -> Vec<(&str, &str)> {
    result
        .sections
        .iter()
        .map(|s| (s.id.as_str(), s.title.as_str()))
        .filter(|(s, _)| {
            result
                .runtimes
                .iter()
                .any(|r| r.cases.iter().any(|c| c.section == *s))
        })
        .collect()
}

/// The matrix: sections down, runtimes across.
fn matrix(h: &mut String, result: &RunResult, sections: &[(&str, &str)]) {
    // The matrix: sections down, runtimes across. data-* attributes let a checker read the
    // numbers without parsing the text.
    *h += "<h3>Matrix</h3><table class=matrix><thead><tr><th>section</th>";
    for run in &result.runtimes {
        let version = run
            .info
            .pointer("/runtime/version")
            .and_then(|v| v.as_str())
            .unwrap_or("");
        let _ = write!(
            *h,
            "<th>{}<br><small>{} {}</small></th>",
            esc(run.shown()),
            esc(&run.name()),
            esc(version)
        );
    }
    *h += "</tr></thead><tbody>";
    for (s, title) in sections {
        let id = esc(&anchor(&[&result.suite, "section", s]));
        let _ = write!(
            h,
            "<tr id=\"{id}\"><th>{}<a class=a href=\"#{id}\">#</a></th>",
            esc(&section_label(s, title))
        );
        for run in &result.runtimes {
            let rules = result.rules();
            let levels = [
                ("MUST", Level::MUST),
                ("SHOULD", Level::SHOULD),
                ("MAY", Level::MAY),
            ]
            .iter()
            .map(|(label, l)| level_line(label, &counts(&run.cases, s, Some(*l), rules)))
            .collect::<String>();
            cell(
                h,
                &counts(&run.cases, s, None, rules),
                &format!(
                    " data-suite=\"{}\" data-runtime=\"{}\" data-section=\"{}\"",
                    esc(&result.suite),
                    esc(&run.runtime),
                    esc(s)
                ),
                &levels,
            );
        }
        *h += "</tr>";
    }
    *h += "<tr><th>total</th>";
    for run in &result.runtimes {
        let s = Summary::of(&run.cases, result.rules());
        cell(
            h,
            &s,
            &format!(
                " data-suite=\"{}\" data-runtime=\"{}\" data-section=total",
                esc(&result.suite),
                esc(&run.runtime)
            ),
            "",
        );
    }
    *h += "</tr></tbody></table>";
}

/// How many cases stand behind each section, by level.
fn coverage(h: &mut String, result: &RunResult, sections: &[(&str, &str)]) {
    // Requirement coverage: how many cases stand behind each section, by level.
    *h += "<h3>Requirement coverage</h3><table><thead><tr><th>section</th><th>cases</th><th>MUST</th><th>SHOULD</th><th>MAY</th><th>PROFILE</th></tr></thead><tbody>";
    if let Some(run) = result.runtimes.first() {
        for (s, title) in sections {
            let n = |l: Option<Level>| {
                run.cases
                    .iter()
                    .filter(|c| c.section == *s && l.is_none_or(|l| c.level == l))
                    .count()
            };
            let _ = write!(h, "<tr><th>{}</th><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td></tr>", esc(&section_label(s, title)), n(None), n(Some(Level::MUST)), n(Some(Level::SHOULD)), n(Some(Level::MAY)), n(Some(Level::PROFILE)));
        }
    }
    *h += "</tbody></table>";
}

/// The drill-down: per runtime and section, every case.
fn cases(h: &mut String, result: &RunResult, sections: &[(&str, &str)]) {
    // Drill-down per runtime and section.
    *h += "<h3>Cases</h3>";
    for run in &result.runtimes {
        let s = Summary::of(&run.cases, result.rules());
        let _ = write!(
            *h,
            "<h4>{}</h4><p>{}/{} pass",
            esc(run.shown()),
            s.pass,
            s.total()
        );
        for other in s.others() {
            let _ = write!(h, " · {other}");
        }
        if let Some(f) = run.info.get("features").and_then(|f| f.as_array()) {
            let names: Vec<String> = f.iter().map(|x| esc(x.as_str().unwrap_or("?"))).collect();
            let _ = write!(h, " · claims: {}", names.join(", "));
        }
        *h += "</p>";
        for (sec, title) in sections {
            let cases: Vec<_> = run.cases.iter().filter(|c| c.section == *sec).collect();
            let c = counts(&run.cases, sec, None, result.rules());
            let id = esc(&anchor(&[run.shown(), &result.suite, "section", sec]));
            let _ = write!(
                h,
                "<details><summary>{} — {}/{}<a class=a href=\"#{id}\">#</a></summary><ul id=\"{id}\">",
                esc(&section_label(sec, title)),
                c.pass,
                c.total()
            );
            for r in cases {
                case(h, r, result.rules(), run.shown());
            }
            *h += "</ul></details>";
        }
    }
}

/// One case in the drill-down: its state, what failed, its expectation and snapshot drift.
fn case(h: &mut String, r: &crate::run::CaseResult, rules: super::Rules, runtime: &str) {
    let st = state(r);
    let css = match st {
        _ if fails_run(r, rules) => "fail",
        State::Pass => "pass",
        State::Fail | State::Error | State::Stale => "fail",
        _ => "skip",
    };
    let label = st.label();
    let id = esc(&anchor(&[runtime, &r.name]));
    // The id is inside the details: a browser opens the details around the element a link
    // names (HTML's ancestor revealing), so a link to a case shows it open, in its section.
    let _ = write!(h, "<li><details><summary><span class={css}>{label}</span> {} <small>{:?}</small><a class=a href=\"#{id}\">#</a></summary><div id=\"{id}\">", esc(&r.name), r.level);
    if !r.title.is_empty() {
        let _ = write!(h, "<p><b>{}</b></p>", esc(&r.title));
    }
    let _ = write!(h, "<p><small>{}</small></p>", esc(&r.spec));
    if let Some(a) = &r.assumption {
        let _ = write!(h, "<p><small>assumption: {}</small></p>", esc(a));
    }
    match &r.verdict {
        Verdict::Fail(f) => {
            let _ = write!(
                h,
                "<p>step {} ({}): {} at <code>{}</code></p><pre>expected: {}\nactual:   {}</pre>",
                f.step,
                esc(&f.action),
                esc(&f.message),
                esc(&f.path),
                esc(&serde_json::to_string_pretty(&f.expected).unwrap_or_default()),
                esc(&serde_json::to_string_pretty(&f.actual).unwrap_or_default())
            );
        }
        Verdict::Error { message } => {
            let _ = write!(h, "<pre>{}</pre>", esc(message));
        }
        Verdict::Skip { reason } | Verdict::Unimplemented { reason } => {
            let _ = write!(h, "<p>{}</p>", esc(reason));
        }
        Verdict::Pass => {}
    }
    if let Some(why) = &r.annotations.not_scored {
        let _ = write!(h, "<p>not scored: {}</p>", esc(why));
    }
    if let Some(e) = &r.annotations.expectation {
        let _ = write!(
            h,
            "<p>expected {:?}: {}{}</p>",
            e.expect,
            esc(&e.reason),
            e.issue
                .as_ref()
                .map(|i| format!(" ({})", esc(i)))
                .unwrap_or_default()
        );
    }
    if let Some(crate::snapshot::Drift::Changed { diff }) = &r.annotations.drift {
        let _ = write!(h, "<p>snapshot drift</p><pre>{}</pre>", esc(diff));
    } else if r.annotations.drift.is_some() {
        *h += "<p>new snapshot (none yet): fails the run only under CI</p>";
    }
    if let Some(t) = &r.annotations.trace {
        trace(h, t, &format!("{id}/trace"));
    }
    *h += "</div></details></li>";
}

/// A case's wire trace, collapsed: a line a message, the gap where messages were left out.
fn trace(h: &mut String, t: &crate::trace::Trace, id: &str) {
    let _ = write!(
        h,
        "<details class=trace><summary>wire trace: {} messages{}<a class=a href=\"#{id}\">#</a></summary><pre id=\"{id}\">",
        t.messages.len(),
        t.gap().map(|g| format!(" ({g})")).unwrap_or_default()
    );
    for l in t.lines() {
        *h += &esc(&l);
        *h += "\n";
    }
    *h += "</pre></details>";
}

/// Cases observed differently over two transports of one runtime.
fn parity(h: &mut String, result: &RunResult) {
    if !result.parity.is_empty() {
        let _ = write!(h, "<h3>Transport parity</h3><p>{} case(s) observed differently over two transports of one runtime</p><ul>", result.parity.len());
        for d in &result.parity {
            let _ = write!(
                h,
                "<li><code>{}</code> on {}: {} and {} differ: <code>{}</code></li>",
                esc(&d.case),
                esc(&d.runtime),
                esc(&d.left),
                esc(&d.right),
                esc(&d.what)
            );
        }
        *h += "</ul>";
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::run::expectations::Outcome;
    use crate::run::result::RuntimeRun;
    use crate::run::{Annotations, CaseResult};
    use crate::trace::{Dir, Message, Trace};

    fn result(name: &str, section: &str, verdict: Verdict, outcome: Outcome) -> CaseResult {
        CaseResult {
            name: name.into(),
            section: section.into(),
            level: Level::MUST,
            spec: "spec §1".into(),
            title: format!("the title of {name}"),
            assumption: Some("an <assumption>".into()),
            verdict,
            observations: vec![],
            unclassified: vec![],
            micros: 0,
            annotations: Annotations {
                outcome: Some(outcome),
                ..Default::default()
            },
        }
    }

    /// Issue 46: every suite, section and case has a stable id a link can name, placed inside
    /// the details it opens; a case shows its title and assumption and its wire trace
    /// (collapsed, escaped); coverage counts PROFILE; a section of expected failures only is
    /// ok, as the terminal marks it.
    #[test]
    fn a_report_can_be_linked_into_and_shows_the_trace() {
        let error = Verdict::Error {
            message: "runtime.create: method not found".into(),
        };
        let mut failing = result("contract::01-load::x", "1", error, Outcome::Error);
        failing.annotations.trace = Some(Trace {
            messages: vec![
                Message {
                    dir: Dir::Sent,
                    method: "runtime.create".into(),
                    text: r#"{"id":2,"method":"runtime.create"}"#.into(),
                    ms: Some(1),
                },
                Message {
                    dir: Dir::Received,
                    method: "runtime.create".into(),
                    text: r#"{"id":2,"error":{"code":-32601,"message":"<b>"}}"#.into(),
                    ms: Some(2),
                },
            ],
            left_out: 0,
            left_out_after: 0,
        });
        let fail = Verdict::Fail(crate::run::Failure {
            step: 1,
            action: "exec".into(),
            path: String::new(),
            message: "differs".into(),
            expected: serde_json::json!(1),
            actual: serde_json::json!(2),
        });
        let expected = result("contract::02-lint::y", "2", fail, Outcome::ExpectedFail);
        let cases = vec![failing, expected];
        let run = RuntimeRun {
            runtime: "stdio:./toy".into(),
            label: None,
            stopped: None,
            info: serde_json::json!({}),
            version: None,
            implementation: None,
            summary: Summary::of(&cases, Default::default()),
            cases,
        };
        let section = |id: &str, title: &str| crate::case::Section {
            id: id.into(),
            title: title.into(),
        };
        let result = RunResult {
            schema: String::new(),
            hcpspec_version: "0".into(),
            suite: "contract".into(),
            sections: vec![section("1", "Load"), section("2", "Lint")],
            cases_hash: "h".into(),
            runtimes: vec![run],
            parity: vec![],
            strict_expectations: false,
            ci: false,
        };
        let page = html(&Report::of(vec![result]));
        for id in [
            "suite/contract",
            "contract/section/1",
            "stdio:.-toy/contract/section/1",
            "stdio:.-toy/contract::01-load::x",
            "stdio:.-toy/contract::01-load::x/trace",
        ] {
            assert!(page.contains(&format!("id=\"{id}\"")), "no id {id}");
            assert!(page.contains(&format!("href=\"#{id}\"")), "no link to {id}");
        }
        // The case's id is inside its details, the trace's inside the trace's.
        assert!(page.contains("<div id=\"stdio:.-toy/contract::01-load::x\"><p><b>the title of contract::01-load::x</b>"));
        assert!(page.contains("assumption: an &lt;assumption&gt;"));
        assert!(page.contains("<details class=trace><summary>wire trace: 2 messages"));
        assert!(page.contains("+2 ms ← runtime.create  {&quot;id&quot;:2,&quot;error&quot;:{&quot;code&quot;:-32601,&quot;message&quot;:&quot;&lt;b&gt;&quot;}}"));
        assert!(page.contains("<th>MAY</th><th>PROFILE</th>"));
        // Section 2 holds one expected failure: ok, as on the terminal (it was warn).
        assert!(page.contains(
            "<td class=ok data-suite=\"contract\" data-runtime=\"stdio:./toy\" data-section=\"2\""
        ));
    }

    #[test]
    fn escapes_markup() {
        assert_eq!(
            esc("<script>alert('x')</script>&\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;"
        );
    }
}
