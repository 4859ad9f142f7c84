//! The terminal's table of one runtime's run: a row per section, a column per state, in the
//! same words and counts as every other rendering.

use super::{counts, Rules, RuntimeRun, State, Summary};
use crate::case::Section;
use std::fmt::Write;

/// The row's mark: ✗ the run fails here, – nothing ran, ✓ otherwise.
fn mark(s: &Summary) -> &'static str {
    if s.must_fail > 0 {
        "✗"
    } else if s.ran() == 0 {
        "–"
    } else {
        "✓"
    }
}

fn row(out: &mut String, mark: &str, label: &str, width: usize, s: &Summary) {
    let _ = write!(out, "{mark} {label:<width$}");
    for st in State::ALL {
        let _ = write!(out, " {:>w$}", st.count(s), w = st.label().len());
    }
    let _ = write!(out, " {:>5} {:>3}", s.drift, s.new);
}

/// The header, a row per section that has cases, and the total row.
pub fn table(sections: &[Section], run: &RuntimeRun, rules: Rules) -> String {
    let rows: Vec<(String, Summary)> = sections
        .iter()
        .map(|sec| {
            let label = if sec.id.len() <= 2 {
                format!("{:>2} {}", sec.id, sec.title)
            } else {
                sec.title.clone()
            };
            let label = super::printable(&label, false);
            (label, counts(&run.cases, &sec.id, None, rules))
        })
        .filter(|(_, s)| s.total() > 0)
        .collect();
    let width = rows
        .iter()
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(0)
        .max("section".len());
    let mut out = format!("  {:<width$}", "section");
    for st in State::ALL {
        let _ = write!(out, " {}", st.label());
    }
    out.push_str(" drift new\n");
    for (label, s) in &rows {
        row(&mut out, mark(s), label, width, s);
        out.push('\n');
    }
    let s = Summary::of(&run.cases, rules);
    row(&mut out, " ", "total", width, &s);
    let _ = writeln!(
        out,
        "   {} cases in {:.2} s",
        s.total(),
        run.summary.micros as f64 / 1e6
    );
    out
}
