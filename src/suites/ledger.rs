//! The ledgers: the files that map every sentence of a suite's spec to the cases that check it
//! (`vectors/COVERAGE.md`, `vectors/<suite>/COVERAGE.md`, harness-api's `CHECKS.md`), read the
//! same way for every suite. A ledger table is a Markdown table with the columns `#`, `state`
//! and `killer`; its rows are claims, and a claim is proved by the sentence-level kill matrix:
//! the row's killer (a mutant breaking exactly its sentence) fails one of the row's MUST cases on
//! an expectation the case wrote (docs/ledgers.md).

use crate::case::{Case, Level, SuiteInfo};
use crate::error::BadInput;
use std::collections::BTreeMap;
use std::path::Path;

/// How far a row's sentence is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum State {
    /// Its killer is proven: it fails a MUST case of the row on an expectation the case wrote.
    Covered,
    /// Checked in part: its killer proves the part checked, and the row says what is missing.
    Partly,
    /// Only PROFILE cases: hcpspec recommends, the spec leaves the point open.
    ProfileOnly,
    /// No case can check it from outside, for the reason the row gives.
    NotCheckable,
    /// Checkable, with no proven case yet: the row says what a case would do.
    NotYet,
}

impl State {
    pub const ALL: [State; 5] = [
        State::Covered,
        State::Partly,
        State::ProfileOnly,
        State::NotCheckable,
        State::NotYet,
    ];

    /// As a ledger writes it.
    pub fn label(self) -> &'static str {
        match self {
            State::Covered => "covered",
            State::Partly => "partly",
            State::ProfileOnly => "PROFILE only",
            State::NotCheckable => "not checkable",
            State::NotYet => "not yet",
        }
    }

    /// `covered`, `partly: …`, `PROFILE only`, `not checkable: …`, `not yet: …` (the text after
    /// the label is the row's reason).
    fn parse(cell: &str) -> Option<(State, String)> {
        State::ALL.iter().find_map(|s| {
            let rest = cell.strip_prefix(s.label())?;
            if !(rest.is_empty() || rest.starts_with(':') || rest.starts_with(' ')) {
                return None;
            }
            let why = rest.trim_start_matches(':').trim().to_string();
            Some((*s, why))
        })
    }
}

/// One sentence of a ledger, as a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The ledger file, as the suite names it (`COVERAGE.md`, `../COVERAGE.md`).
    pub ledger: String,
    /// Its line in the ledger (1-based).
    pub line: usize,
    /// Its `#`, unique in its ledger.
    pub number: u32,
    pub sentence: String,
    /// `None` where the row binds another party than the suite's (a `binds` column says whom).
    pub state: Option<State>,
    /// The reason after the state's label, or the row's other cells.
    pub why: String,
    /// The cases it names, as full names (`contract::04-confirm::…`).
    pub cases: Vec<String>,
    /// The checks every case runs that it names (host's always-checks, harness-api's `CHECKS.md`).
    pub checks: Vec<String>,
    /// The mutants that break exactly its sentence: one, or one per clause when the sentence
    /// joins several rules (each must fail a MUST case of the row).
    pub killers: Vec<String>,
    /// The killers it shares with the row that owns them, when both quote one rule: that row's
    /// ledger and number (`` `k` (as row N) `` in the killer cell, or `(as FILE row N)` for a row
    /// of another of the suite's ledgers).
    pub shares: BTreeMap<String, (String, u32)>,
}

impl Row {
    /// `LEDGER row N`, as errors name it.
    pub fn at(&self) -> String {
        format!("{} row {}", self.ledger, self.number)
    }
}

/// The cells of a Markdown table line, split at every `|` not written `\|`; `\|` becomes `|`.
pub fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|');
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    // Split at every `|`; a piece ending in `\` was escaping the `|` after it.
    let mut out: Vec<String> = Vec::new();
    let mut escaped = false;
    for piece in inner.split('|') {
        match out.last_mut() {
            Some(last) if escaped => {
                last.pop();
                last.push('|');
                last.push_str(piece);
            }
            _ => out.push(piece.to_string()),
        }
        escaped = out.last().is_some_and(|c| c.ends_with('\\'));
    }
    out.into_iter().map(|c| c.trim().to_string()).collect()
}

/// The words between backticks in `cell`.
fn ticked(cell: &str) -> impl Iterator<Item = &str> {
    cell.split('`').skip(1).step_by(2)
}

/// The columns of a ledger table, by header.
struct Columns {
    number: usize,
    state: usize,
    killer: usize,
    sentence: Option<usize>,
    cases: Option<usize>,
    check: Option<usize>,
    binds: Option<usize>,
    width: usize,
}

impl Columns {
    fn of(header: &[String]) -> Option<Columns> {
        let find = |names: &[&str]| {
            header
                .iter()
                .position(|h| names.iter().any(|n| h.eq_ignore_ascii_case(n)))
        };
        Some(Columns {
            number: find(&["#"])?,
            state: find(&["state"])?,
            killer: find(&["killer"])?,
            sentence: find(&["sentence"]),
            cases: find(&["cases", "checked by", "scenarios"]),
            check: find(&["check"]),
            binds: find(&["binds"]),
            width: header.len(),
        })
    }
}

/// What names a case or a check in a ledger: the suite's cases (by full name, `group/id` or
/// id) and the checks every one of its cases runs.
pub struct Names<'a> {
    pub suite: &'a str,
    /// Each way of naming a case, and the case's full name.
    cases: std::collections::HashMap<String, String>,
    pub checks: &'a [&'a str],
}

impl<'a> Names<'a> {
    /// The names of the cases given by group and id (ids are unique in a suite, and neither
    /// holds `/` or `::`, so no word names two cases).
    pub fn new(
        suite: &'a str,
        cases: impl IntoIterator<Item = (String, String)>,
        checks: &'a [&'a str],
    ) -> Self {
        let mut index = std::collections::HashMap::new();
        for (group, id) in cases {
            let name = format!("{suite}::{group}::{id}");
            index.insert(name.clone(), name.clone());
            index.insert(format!("{group}/{id}"), name.clone());
            index.insert(id, name);
        }
        Names {
            suite,
            cases: index,
            checks,
        }
    }

    fn case(&self, word: &str) -> Option<String> {
        self.cases.get(word).cloned()
    }
}

/// A suite's ledgers, read: every row of every file its `suite.json` names; a row's cases are
/// those of the suite's folder, named by full name, `group/id` or id.
pub fn read(vectors: &Path, info: &SuiteInfo, checks: &[&str]) -> Result<Vec<Row>, BadInput> {
    let files = crate::case::case_files(vectors, &info.name).map_err(|e| e.to_string())?;
    let names = Names::new(
        &info.name,
        files.iter().map(|f| crate::case::group_and_id(f)),
        checks,
    );
    let mut rows = Vec::new();
    for l in &info.ledgers {
        let path = vectors.join(&info.name).join(l);
        // A ledger is a file of the vectors like a case: regular, within the same cap.
        let text = crate::input::read_capped(&path, crate::input::MAX_CASE)
            .map_err(|e| format!("{}: {}", path.display(), e.0))?;
        rows.extend(parse(l, &text, &names)?);
    }
    Ok(rows)
}

/// A ledger's rows: every line of a table whose header has `#`, `state` and `killer`. Errors
/// name the ledger's line and what is wrong with it.
pub fn parse(ledger: &str, text: &str, names: &Names) -> Result<Vec<Row>, BadInput> {
    let mut rows = Vec::new();
    let mut columns: Option<Columns> = None;
    let mut header = true;
    for (i, line) in text.lines().enumerate() {
        let at = format!("{ledger} line {}", i + 1);
        if !line.trim_start().starts_with('|') {
            columns = None;
            header = true;
            continue;
        }
        let c = cells(line);
        if header {
            columns = Columns::of(&c);
            header = false;
            continue;
        }
        let Some(cols) = &columns else { continue };
        if c.iter().all(|x| x.chars().all(|ch| "-: ".contains(ch))) {
            continue; // the header's rule
        }
        if c.len() != cols.width {
            return Err(BadInput(format!(
                "{at}: {} cells where the header has {}",
                c.len(),
                cols.width
            )));
        }
        let number = c[cols.number]
            .parse::<u32>()
            .map_err(|_| format!("{at}: `#` is `{}`, not a number", c[cols.number]))?;
        let state_cell = &c[cols.state];
        let (state, mut why) = if state_cell.is_empty() || state_cell == "-" {
            if cols.binds.is_none() {
                return Err(BadInput(format!("{at}: row {number} has no state")));
            }
            (None, String::new())
        } else {
            let (s, why) = State::parse(state_cell).ok_or_else(|| {
                format!(
                    "{at}: state `{state_cell}` is none of {}",
                    State::ALL.map(State::label).join(", ")
                )
            })?;
            (Some(s), why)
        };
        if why.is_empty() {
            // The reason may stand in the row's other cells (a `why none` column, prose).
            why = c
                .iter()
                .enumerate()
                .filter(|(k, _)| {
                    ![
                        Some(cols.number),
                        Some(cols.state),
                        Some(cols.killer),
                        cols.sentence,
                        cols.binds,
                    ]
                    .contains(&Some(*k))
                })
                .map(|(_, x)| x.as_str())
                .filter(|x| !x.is_empty())
                .collect::<Vec<_>>()
                .join(" ");
        }
        let mut cases = Vec::new();
        let mut checks = Vec::new();
        for word in cols
            .cases
            .map_or_else(Vec::new, |k| ticked(&c[k]).collect())
        {
            if let Some(name) = names.case(word) {
                if !cases.contains(&name) {
                    cases.push(name);
                }
            } else if names.checks.contains(&word) && !checks.iter().any(|k| k == word) {
                checks.push(word.to_string());
            }
        }
        if let Some(k) = cols.check {
            for word in ticked(&c[k]) {
                if !names.checks.contains(&word) {
                    return Err(BadInput(format!(
                        "{at}: `{word}` is not a check of {}",
                        names.suite
                    )));
                }
                checks.push(word.to_string());
            }
        }
        // Killers, comma-separated: `k`, or `k` (as row N) / `k` (as FILE row N) when the row
        // shares the killer of the row that owns it (another ledger's with FILE).
        let killer_cell = &c[cols.killer];
        let mut killers = Vec::new();
        let mut shares = BTreeMap::new();
        for piece in killer_cell
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty() && *p != "-")
        {
            let mut names = ticked(piece);
            let (Some(k), None) = (names.next(), names.next()) else {
                return Err(BadInput(format!(
                    "{at}: the killer is a mutant's name in backticks"
                )));
            };
            killers.push(k.to_string());
            let Some((_, rest)) = piece.split_once("(as ") else {
                continue;
            };
            let rest = rest.trim_end().trim_end_matches(')');
            let (file, n) = rest.rsplit_once("row ").ok_or_else(|| {
                format!("{at}: write a shared killer `(as row N)` or `(as FILE row N)`")
            })?;
            let n = n
                .trim()
                .parse::<u32>()
                .map_err(|_| format!("{at}: `(as row N)` needs a row number"))?;
            let file = match file.trim() {
                "" => ledger.to_string(),
                f => f.to_string(),
            };
            shares.insert(k.to_string(), (file, n));
        }
        rows.push(Row {
            ledger: ledger.to_string(),
            line: i + 1,
            number,
            sentence: cols.sentence.map(|k| c[k].clone()).unwrap_or_default(),
            state,
            why,
            cases,
            checks,
            killers,
            shares,
        });
    }
    Ok(rows)
}

/// The counts of each state, as a ledger's summary and the README print them.
pub fn counts(rows: &[Row]) -> BTreeMap<State, usize> {
    let mut out: BTreeMap<State, usize> = State::ALL.iter().map(|s| (*s, 0)).collect();
    for s in rows.iter().filter_map(|r| r.state) {
        *out.entry(s).or_default() += 1;
    }
    out
}

/// What is wrong with the rows as claims, before any mutant runs: a state its cases and killer
/// do not fit, a killer of no mutant, a killer shared without `(as row N)`, a number used twice.
pub fn problems(rows: &[Row], cases: &[Case], mutants: &[&str]) -> Vec<String> {
    let level = |name: &str| cases.iter().find(|c| c.name() == name).map(|c| c.level);
    let mut out = Vec::new();
    let mut numbers = BTreeMap::new();
    for r in rows {
        let at = r.at();
        if numbers.insert((&r.ledger, r.number), ()).is_some() {
            out.push(format!("{at}: the number is used twice"));
        }
        let must = r.cases.iter().any(|c| level(c) == Some(Level::MUST));
        let claims = must || !r.checks.is_empty();
        match r.state {
            None if !r.cases.is_empty() || !r.killers.is_empty() => out.push(format!(
                "{at}: binds another party, yet names cases or a killer"
            )),
            Some(State::Covered) if !claims || r.killers.is_empty() => out.push(format!(
                "{at}: `covered` needs a MUST case (or a check) and the killer that it proves"
            )),
            Some(State::ProfileOnly) if r.cases.is_empty() || must || !r.killers.is_empty() => out
                .push(format!(
                    "{at}: `PROFILE only` names PROFILE cases, no MUST case and no killer"
                )),
            Some(State::Partly | State::NotCheckable | State::NotYet) if r.why.is_empty() => out
                .push(format!(
                    "{at}: `{}` needs its reason",
                    r.state.unwrap().label()
                )),
            Some(State::NotCheckable | State::NotYet) if !r.killers.is_empty() => out.push(format!(
                "{at}: `{}` names a killer: a proven killer makes the row `covered` or `partly`",
                r.state.unwrap().label()
            )),
            // Partly is a proof of part of the sentence: nothing proven is `not yet`.
            Some(State::Partly) if r.killers.is_empty() || !claims => out.push(format!(
                "{at}: `partly` needs the killer that proves the part checked, and a MUST case (or a check) it fails; with none proven the row is `not yet`"
            )),
            _ => {}
        }
        for k in &r.killers {
            if !mutants.contains(&k.as_str()) {
                out.push(format!("{at}: killer `{k}` is no mutant of the suite"));
            }
        }
    }
    // One row owns each killer; every other row naming it quotes the same rule and says whose.
    let mut by_killer: BTreeMap<&str, Vec<&Row>> = BTreeMap::new();
    for r in rows {
        for k in &r.killers {
            by_killer.entry(k).or_default().push(r);
        }
    }
    for (k, group) in by_killer {
        let owners: Vec<&&Row> = group.iter().filter(|r| !r.shares.contains_key(k)).collect();
        let [owner] = owners.as_slice() else {
            let rows: Vec<String> = group.iter().map(|r| r.at()).collect();
            out.push(format!(
                "killer `{k}` of {}: one row owns it, the others quote the same rule and say so with `(as row N)` or `(as FILE row N)`",
                rows.join(", ")
            ));
            continue;
        };
        for r in group.iter().filter(|r| r.shares.contains_key(k)) {
            if r.shares.get(k) != Some(&(owner.ledger.clone(), owner.number)) {
                let (f, n) = r.shares.get(k).cloned().unwrap_or_default();
                out.push(format!(
                    "{}: `(as {f} row {n})`, but the row with killer `{k}` is {}",
                    r.at(),
                    owner.at()
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(group: &str, id: &str, level: Level) -> Case {
        Case {
            id: id.into(),
            title: String::new(),
            section: "1".into(),
            level,
            spec: String::new(),
            assumption: None,
            requires: vec![],
            killed_by: vec![],
            fixed: Default::default(),
            body: Default::default(),
            suite: "s".into(),
            group: group.into(),
            file: Default::default(),
            parsed: Default::default(),
            source: Default::default(),
        }
    }

    const LEDGER: &str = "\
| # | sentence | cases | state | killer | why none |
|---|---|---|---|---|---|
| 1 | a | `s::g::one`, `g/two` | covered | `m1` | |
| 2 | b | `two` | partly: no case of c | `m1` (as row 1) | |
| 3 | c | | not checkable | | outside |
| 4 | d | `always` `p` | PROFILE only | | |

| gap | other table |
|---|---|
| G1 | `one` |
";

    #[test]
    fn rows_read_states_cases_checks_and_killers() {
        let cases = [
            case("g", "one", Level::MUST),
            case("g", "two", Level::MUST),
            case("g", "p", Level::PROFILE),
        ];
        let names = Names::new(
            "s",
            cases.iter().map(|c| (c.group.clone(), c.id.clone())),
            &["always"],
        );
        let rows = parse("L.md", LEDGER, &names).unwrap();
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[0].cases, ["s::g::one", "s::g::two"]);
        assert_eq!(rows[0].killers, ["m1"]);
        assert_eq!(
            (
                rows[1].state,
                rows[1].why.as_str(),
                rows[1].shares.get("m1")
            ),
            (
                Some(State::Partly),
                "no case of c",
                Some(&("L.md".into(), 1))
            )
        );
        // A row of several clauses names a killer per clause, its own or another row's.
        let mixed = "| # | sentence | cases | state | killer |\n|---|---|---|---|---|\n| 9 | e | `one` | covered | `m2`, `m1` (as row 1) |\n";
        let row = parse("L.md", mixed, &names).unwrap().remove(0);
        assert_eq!(row.killers, ["m2", "m1"]);
        assert_eq!(row.shares.keys().collect::<Vec<_>>(), ["m1"]);
        let mut all = rows.clone();
        all.push(row);
        assert!(
            problems(&all, &cases, &["m1", "m2"]).is_empty(),
            "{:?}",
            problems(&all, &cases, &["m1", "m2"])
        );
        // A row of another ledger quoting the same rule says whose killer it shares.
        let other = "| # | check | state | killer |\n|---|---|---|---|\n| 7 | `always` | covered | `m1` (as L.md row 1) |\n";
        let mut all = rows.clone();
        all.extend(parse("M.md", other, &names).unwrap());
        assert_eq!(all[4].checks, ["always"]);
        assert!(
            problems(&all, &cases, &["m1"]).is_empty(),
            "{:?}",
            problems(&all, &cases, &["m1"])
        );
        let wrong = other.replace("L.md row 1", "L.md row 2");
        let mut all = rows.clone();
        all.extend(parse("M.md", &wrong, &names).unwrap());
        assert_eq!(problems(&all, &cases, &["m1"]).len(), 1);
        assert_eq!(
            (rows[2].state, rows[2].why.as_str()),
            (Some(State::NotCheckable), "outside")
        );
        assert_eq!(
            (rows[3].checks.as_slice(), rows[3].cases.as_slice()),
            (&["always".to_string()][..], &["s::g::p".to_string()][..])
        );
        assert!(
            problems(&rows, &cases, &["m1"]).is_empty(),
            "{:?}",
            problems(&rows, &cases, &["m1"])
        );
        assert_eq!(counts(&rows)[&State::Covered], 1);
        // A killer no mutant has, and one shared without saying so.
        let bad = LEDGER.replace("`m1` (as row 1)", "`m1`");
        let p = problems(&parse("L.md", &bad, &names).unwrap(), &cases, &["m2"]);
        assert_eq!(p.len(), 3, "{p:?}");
    }

    #[test]
    fn a_bad_row_is_one_line_naming_it() {
        let names = Names::new("s", [], &[]);
        let e = parse(
            "L.md",
            "| # | state | killer |\n|---|---|---|\n| 1 | done | |\n",
            &names,
        )
        .unwrap_err();
        assert!(e.0.starts_with("L.md line 3: state `done`"), "{e}");
        let e = parse(
            "L.md",
            "| # | state | killer |\n|---|---|---|\n| x | covered | |\n",
            &names,
        )
        .unwrap_err();
        assert!(e.0.contains("not a number"), "{e}");
    }
}
