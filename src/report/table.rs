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

/// The widest a table is: a terminal's 80 columns, so that no row wraps.
pub const WIDTH: usize = 80;

/// A column: its header (an abbreviation the legend spells out, else the word every rendering
/// uses) and its count in a summary.
struct Column {
    head: &'static str,
    word: &'static str,
    count: fn(&Summary) -> usize,
}

/// The columns of a table: every state some case is in (pass always: "0 pass" is news), then
/// drift and new when any case drifted or had no snapshot. A column of zeros says nothing.
fn columns(s: &Summary) -> Vec<Column> {
    let mut out: Vec<Column> = State::ALL
        .into_iter()
        .filter(|st| *st == State::Pass || st.count(s) > 0)
        .map(|st| Column {
            head: match st {
                State::ExpectedFail => "xfail",
                State::Unimplemented => "unimp",
                State::NotScored => "unscored",
                st => st.label(),
            },
            word: st.label(),
            count: match st {
                State::Pass => |s| s.pass,
                State::Fail => |s| s.fail,
                State::ExpectedFail => |s| s.expected_fail,
                State::Stale => |s| s.stale,
                State::Skip => |s| s.skip,
                State::Unimplemented => |s| s.unimplemented,
                State::Error => |s| s.error,
                State::Profile => |s| s.profile,
                State::NotScored => |s| s.not_scored,
            },
        })
        .collect();
    if s.drift > 0 {
        out.push(Column {
            head: "drift",
            word: "drift",
            count: |s| s.drift,
        });
    }
    if s.new > 0 {
        out.push(Column {
            head: "new",
            word: "new",
            count: |s| s.new,
        });
    }
    out
}

/// `text` in at most `width` characters: cut with an ellipsis when longer.
fn fit(text: &str, width: usize) -> String {
    match text.chars().count() > width {
        true => {
            text.chars()
                .take(width.saturating_sub(1))
                .collect::<String>()
                + "…"
        }
        false => text.to_string(),
    }
}

fn row(
    out: &mut String,
    mark: &str,
    label: &str,
    width: usize,
    s: &Summary,
    cols: &[(Column, usize)],
) {
    let label = fit(label, width);
    let _ = write!(out, "{mark} {label:<width$}");
    for (c, w) in cols {
        let _ = write!(out, " {:>w$}", (c.count)(s));
    }
    out.push('\n');
}

/// The header, a row per section that has cases, the total row, marked ✗ – ✓, a line with the
/// count of cases and their time, and one with what the abbreviated headers stand for; at most
/// [`WIDTH`] columns (a long section title is cut).
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
    let s = Summary::of(&run.cases, rules);
    // Each column as wide as its header or its widest count (the total's).
    let cols: Vec<(Column, usize)> = columns(&s)
        .into_iter()
        .map(|c| {
            let w = c.head.len().max((c.count)(&s).to_string().len());
            (c, w)
        })
        .collect();
    let counts_width: usize = cols.iter().map(|(_, w)| w + 1).sum();
    let room = WIDTH.saturating_sub(2 + counts_width).max("section".len());
    let width = rows
        .iter()
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(0)
        .max("section".len())
        .min(room);
    let mut out = format!("  {:<width$}", "section");
    for (c, w) in &cols {
        let _ = write!(out, " {:>w$}", c.head);
    }
    out.push('\n');
    for (label, s) in &rows {
        row(&mut out, marks.of(s), label, width, s, &cols);
    }
    row(&mut out, " ", "total", width, &s, &cols);
    let legend: Vec<String> = cols
        .iter()
        .filter(|(c, _)| c.head != c.word)
        .map(|(c, _)| format!("{} = {}", c.head, c.word))
        .collect();
    let _ = writeln!(
        out,
        "  {} cases in {:.2} s",
        s.total(),
        run.summary.micros as f64 / 1e6
    );
    if !legend.is_empty() {
        let _ = writeln!(out, "  {}", legend.join(", "));
    }
    out
}
