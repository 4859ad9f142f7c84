//! The HTML compatibility report: one self-contained page (no external assets, no script).
//! A runtimes × sections matrix with MUST/SHOULD split, requirement coverage per section, and a
//! drill-down per case with its citation and diff. Every byte that came from a runtime or a
//! case goes through `esc`.

use super::{counts, outcome, RunResult, Summary};
use crate::case::Level;
use crate::run::expectations::Outcome;
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

pub fn outcome_label(o: Outcome) -> &'static str {
    match o {
        Outcome::Pass => "pass",
        Outcome::Fail => "fail",
        Outcome::ExpectedFail => "expected fail",
        Outcome::Stale => "stale expectation",
        Outcome::Skip => "skip",
        Outcome::Unimplemented => "not implemented",
        Outcome::Error => "error",
    }
}

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:2em;color:#1d1d1f}h1{font-size:1.6em}\
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #d0d0d5;padding:.35em .6em;text-align:left;vertical-align:top}\
th{background:#f3f3f6}td.ok{background:#e6f6e9}td.bad{background:#fde8e8}td.warn{background:#fff6d6}td.none{color:#999}\
.n{font-variant-numeric:tabular-nums}small{color:#666}pre{background:#f6f6f8;padding:.6em;overflow:auto;max-height:24em}\
details{margin:.2em 0}summary{cursor:pointer}.pass{color:#17803d}.fail,.error,.stale{color:#c0282d}.skip{color:#8a6d00}";

fn class(s: &Summary) -> &'static str {
    let total = s.pass + s.fail + s.expected_fail + s.stale + s.skip + s.unimplemented + s.error;
    if total == 0 {
        "none"
    } else if s.must_fail > 0 {
        "bad"
    } else if s.fail + s.error + s.stale + s.expected_fail + s.skip + s.unimplemented > 0 {
        "warn"
    } else {
        "ok"
    }
}

fn level_line(label: &str, s: &Summary) -> String {
    let total = s.pass + s.fail + s.expected_fail + s.stale + s.skip + s.unimplemented + s.error;
    if total == 0 {
        return String::new();
    }
    format!("<div>{label} <span class=n>{}/{total}</span></div>", s.pass)
}

pub fn html(result: &RunResult) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>hcpspec compatibility report</title><style>{STYLE}</style></head><body>\
         <h1>hcpspec compatibility report</h1><p>Suite <b>{}</b> · {} runtime(s) · hcpspec {} · cases <code>{}</code></p>",
        esc(&result.suite),
        result.runtimes.len(),
        esc(&result.hcpspec_version),
        esc(&result.cases_hash)
    );
    // The matrix: sections down, runtimes across. data-* attributes let a checker read the
    // numbers without parsing the text.
    h += "<h2>Matrix</h2><table id=matrix><thead><tr><th>section</th>";
    for run in &result.runtimes {
        let version = run
            .info
            .pointer("/runtime/version")
            .and_then(|v| v.as_str())
            .unwrap_or("");
        let _ = write!(
            h,
            "<th>{}<br><small>{} {}</small></th>",
            esc(&run.runtime),
            esc(&run.name()),
            esc(version)
        );
    }
    h += "</tr></thead><tbody>";
    let sections: Vec<(&str, &str)> = result
        .sections
        .iter()
        .map(|s| (s.id.as_str(), s.title.as_str()))
        .filter(|(s, _)| {
            result
                .runtimes
                .iter()
                .any(|r| r.cases.iter().any(|c| c.section == *s))
        })
        .collect();
    for (s, title) in &sections {
        let _ = write!(h, "<tr><th>{}</th>", esc(&section_label(s, title)));
        for run in &result.runtimes {
            let all = counts(&run.cases, s, None);
            let total = all.pass
                + all.fail
                + all.expected_fail
                + all.stale
                + all.skip
                + all.unimplemented
                + all.error;
            let _ = write!(
                h,
                "<td class={} data-runtime=\"{}\" data-section=\"{}\" data-pass={} data-fail={} data-skip={} data-total={total}><b class=n>{}/{total}</b>{}{}{}</td>",
                class(&all),
                esc(&run.runtime),
                esc(s),
                all.pass,
                all.fail + all.error + all.stale,
                all.skip + all.unimplemented + all.expected_fail,
                all.pass,
                level_line("MUST", &counts(&run.cases, s, Some(Level::MUST))),
                level_line("SHOULD", &counts(&run.cases, s, Some(Level::SHOULD))),
                level_line("MAY", &counts(&run.cases, s, Some(Level::MAY))),
            );
            let profile = all.profile;
            if profile > 0 {
                // Inside the cell, after the level lines: reported apart, never a failure.
                h.truncate(h.len() - "</td>".len());
                let _ = write!(
                    h,
                    "<div>PROFILE deviations <span class=n>{profile}</span></div></td>"
                );
            }
        }
        h += "</tr>";
    }
    h += "<tr><th>total</th>";
    for run in &result.runtimes {
        let s = Summary::of(&run.cases);
        // PROFILE deviations are no failures: counted apart, out of the total.
        let profile = if s.profile > 0 {
            format!(
                "<div>PROFILE deviations <span class=n>{}</span></div>",
                s.profile
            )
        } else {
            String::new()
        };
        let _ = write!(
            h,
            "<td class={}><b class=n>{}/{}</b>{profile}</td>",
            class(&s),
            s.pass,
            run.cases.len() - s.profile
        );
    }
    h += "</tr></tbody></table>";

    // Requirement coverage: how many cases stand behind each section, by level.
    h += "<h2>Requirement coverage</h2><table><thead><tr><th>section</th><th>cases</th><th>MUST</th><th>SHOULD</th><th>MAY</th></tr></thead><tbody>";
    if let Some(run) = result.runtimes.first() {
        for (s, title) in &sections {
            let n = |l: Option<Level>| {
                run.cases
                    .iter()
                    .filter(|c| c.section == *s && l.is_none_or(|l| c.level == l))
                    .count()
            };
            let _ = write!(h, "<tr><th>{}</th><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td></tr>", esc(&section_label(s, title)), n(None), n(Some(Level::MUST)), n(Some(Level::SHOULD)), n(Some(Level::MAY)));
        }
    }
    h += "</tbody></table>";

    // Drill-down per runtime and section.
    h += "<h2>Cases</h2>";
    for run in &result.runtimes {
        let s = Summary::of(&run.cases);
        let _ = write!(
            h,
            "<h3>{}</h3><p>{} pass · {} fail · {} skip · {} error",
            esc(&run.runtime),
            s.pass,
            s.fail + s.stale,
            s.skip + s.unimplemented + s.expected_fail,
            s.error
        );
        if let Some(f) = run.info.get("features").and_then(|f| f.as_array()) {
            let names: Vec<String> = f.iter().map(|x| esc(x.as_str().unwrap_or("?"))).collect();
            let _ = write!(h, " · claims: {}", names.join(", "));
        }
        h += "</p>";
        for (sec, title) in &sections {
            let cases: Vec<_> = run.cases.iter().filter(|c| c.section == *sec).collect();
            let c = counts(&run.cases, sec, None);
            let _ = write!(
                h,
                "<details><summary>{} — {}/{}</summary><ul>",
                esc(&section_label(sec, title)),
                c.pass,
                cases.len()
            );
            for r in cases {
                let o = outcome(r);
                let profile = r.level == crate::case::Level::PROFILE
                    && matches!(o, Outcome::Fail | Outcome::Error | Outcome::Unimplemented);
                let (css, label) = match o {
                    _ if profile => ("skip", "profile deviation"),
                    Outcome::Pass => ("pass", outcome_label(o)),
                    Outcome::Fail | Outcome::Error | Outcome::Stale => ("fail", outcome_label(o)),
                    _ => ("skip", outcome_label(o)),
                };
                let _ = write!(h, "<li><details><summary><span class={css}>{label}</span> {} <small>{:?}</small></summary><p><small>{}</small></p>", esc(&r.name), r.level, esc(&r.spec));
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
                    h += "<p>no snapshot yet</p>";
                }
                h += "</details></li>";
            }
            h += "</ul></details>";
        }
    }
    if !result.parity.is_empty() {
        let _ = write!(h, "<h2>Transport parity</h2><p>{} case(s) observed differently over two transports of one runtime</p><ul>", result.parity.len());
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
        h += "</ul>";
    }
    h += "</body></html>\n";
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            esc("<script>alert('x')</script>&\""),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;"
        );
    }
}
