//! The terminal's table of one runtime's run: a row per section, a column per state, in the
//! same words and counts as every other rendering.

use super::{counts, Rules, RuntimeRun, State, Summary};
use crate::case::Section;
use std::fmt::Write;

/// A row's marks, as a terminal shows them: the run fails here, nothing ran, otherwise. Each is
/// one column wide as shown (colour codes around it take none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marks {
    pub fails: String,
    pub none: String,
    pub pass: String,
}

impl Marks {
    /// ✗, – and ✓, plain.
    pub fn unicode() -> Marks {
        Marks {
            fails: "✗".into(),
            none: "–".into(),
            pass: "✓".into(),
        }
    }
    /// For a terminal that cannot show them: x, - and +.
    pub fn ascii() -> Marks {
        Marks {
            fails: "x".into(),
            none: "-".into(),
            pass: "+".into(),
        }
    }
    /// The same marks in ANSI colours: red, dim and green.
    pub fn coloured(self) -> Marks {
        Marks {
            fails: format!("\x1b[31m{}\x1b[0m", self.fails),
            none: format!("\x1b[2m{}\x1b[0m", self.none),
            pass: format!("\x1b[32m{}\x1b[0m", self.pass),
        }
    }
    fn of(&self, s: &Summary) -> &str {
        if s.must_fail > 0 {
            &self.fails
        } else if s.ran() == 0 {
            &self.none
        } else {
            &self.pass
        }
    }
}

fn row(out: &mut String, mark: &str, label: &str, width: usize, s: &Summary, states: &[State]) {
    let _ = write!(out, "{mark} {label:<width$}");
    for &st in states {
        let _ = write!(out, " {:>w$}", st.count(s), w = st.label().len());
    }
    let _ = write!(out, " {:>5} {:>3}", s.drift, s.new);
}

/// The header, a row per section that has cases, and the total row, marked ✗ – ✓.
pub fn table(sections: &[Section], run: &RuntimeRun, rules: Rules) -> String {
    table_marked(sections, run, rules, &Marks::unicode())
}

/// [`table`] with the terminal's own marks.
pub fn table_marked(sections: &[Section], run: &RuntimeRun, rules: Rules, marks: &Marks) -> String {
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
    let s = Summary::of(&run.cases, rules);
    // The not-scored column only where a target states an older version (`run::versions`).
    let states: Vec<State> = State::ALL
        .into_iter()
        .filter(|st| *st != State::NotScored || s.not_scored > 0)
        .collect();
    let mut out = format!("  {:<width$}", "section");
    for st in &states {
        let _ = write!(out, " {}", st.label());
    }
    out.push_str(" drift new\n");
    for (label, s) in &rows {
        row(&mut out, marks.of(s), label, width, s, &states);
        out.push('\n');
    }
    row(&mut out, " ", "total", width, &s, &states);
    let _ = writeln!(
        out,
        "   {} cases in {:.2} s",
        s.total(),
        run.summary.micros as f64 / 1e6
    );
    out
}
