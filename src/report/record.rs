//! `result.json`: the one record a run (or `hcpspec report`) writes, every suite's result in
//! it, and the union of several such records by case name.

use super::{RunResult, RuntimeRun, Summary};
use crate::error::BadInput;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// The schema of `result.json`: `vectors/schemas/run-result.schema.json`. A new `$id`, since
/// the record changed shape (a file of the first shape, one suite's RunResult, is still read).
pub const REPORT_SCHEMA: &str = "https://hcpspec.dev/schemas/run-result-2.schema.json";

/// What `result.json` holds: one RunResult per suite run, in run order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    #[serde(rename = "$schema", default)]
    pub schema: String,
    pub hcpspec_version: String,
    /// The vectors the run read: `embedded` or a folder, and the case-set hash. Shards of one
    /// run name one; a merge of runs over several case sets names each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vectors: Vec<crate::vectors::Origin>,
    /// When the run started: RFC 3339, UTC, to the second. A merge keeps the earliest. Absent
    /// in results written before hcpspec recorded it. Recorded only: no verdict reads it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started: Option<String>,
    /// How long the run took, wall-clock milliseconds, from the start to the record written.
    /// A merge keeps the longest of its inputs (shards run side by side; the sum of the cases'
    /// own times stays in each runtime's `summary.micros`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_ms: Option<u64>,
    pub suites: Vec<RunResult>,
}

impl Report {
    pub fn of(suites: Vec<RunResult>) -> Report {
        Report {
            schema: REPORT_SCHEMA.into(),
            hcpspec_version: env!("CARGO_PKG_VERSION").into(),
            vectors: vec![],
            started: None,
            wall_ms: None,
            suites,
        }
    }

    /// Does it fail (exit 1)? When any suite's result does.
    pub fn fails(&self) -> bool {
        crate::run::result::RunStats::of(&self.suites, false).fails()
    }
}

/// Two results of one case, as compared by a merge: everything but how long it took and its
/// wire trace (whose times are the run's own).
fn judged(c: &crate::run::CaseResult) -> Value {
    let mut v = serde_json::to_value(c).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.remove("micros");
        o.remove("trace");
    }
    v
}

/// The union of several records by case name (shards of one run, or runs of several runtimes
/// or suites): suites by name, runtimes by name (`--name`, else `initialize`'s name and version)
/// and adapter spec, cases by name. The same result twice
/// (the same path, or a copy or hard link of one: the same record) is refused; a case present
/// in two files must agree (its verdict, observations and annotations), else the merge is
/// refused naming it; one suite's results must agree on `--strict-expectations` and on CI.
/// Summaries are recounted from the merged cases. Results over different case sets (vectors
/// hashes) do merge, as docs/vectors.md says, with a warning each: the second value.
pub fn merge(inputs: Vec<(PathBuf, Report)>) -> Result<(Report, Vec<String>), BadInput> {
    merge_counting(inputs, &mut 0)
}

/// A record's hash, streamed: a copy of a 64 MiB result is found without a second 64 MiB.
/// (In-process only, never written, so std's hasher.)
struct Hashing(std::collections::hash_map::DefaultHasher);

impl std::io::Write for Hashing {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        std::hash::Hasher::write(&mut self.0, buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The same result given twice: the same file by two paths, or a copy or hard link of it
/// (the same record, by hash, then whole).
fn same_results(inputs: &[(PathBuf, Report)], names: &[String]) -> Result<(), BadInput> {
    let mut seen: Vec<PathBuf> = vec![];
    let mut by_hash: HashMap<u64, usize> = HashMap::new();
    for (i, (p, r)) in inputs.iter().enumerate() {
        let real = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
        if seen.contains(&real) {
            return Err(BadInput(format!("{}: given twice", names[i])));
        }
        seen.push(real);
        let mut h = Hashing(Default::default());
        serde_json::to_writer(&mut h, r).map_err(|e| format!("{}: {e}", names[i]))?;
        match by_hash.get(&std::hash::Hasher::finish(&h.0)) {
            Some(&j) if inputs[j].1 == *r => {
                return Err(BadInput(format!(
                    "{} and {} are the same result (a copy or a link: given twice)",
                    names[j], names[i]
                )))
            }
            Some(_) => {}
            None => {
                by_hash.insert(std::hash::Hasher::finish(&h.0), i);
            }
        }
    }
    Ok(())
}

/// One warning per file whose case set (vectors hash) differs from an earlier file's: such
/// results merge (runs of several suites or runtimes may read several trees), but never
/// without a word.
fn case_sets(inputs: &[(PathBuf, Report)], names: &[String]) -> Vec<String> {
    let short = |h: &str| super::printable(&h.chars().take(64).collect::<String>(), false);
    let mut first: Option<(usize, String)> = None;
    let mut warned = HashSet::new();
    let mut out = vec![];
    for (i, (_, r)) in inputs.iter().enumerate() {
        for o in &r.vectors {
            match &first {
                None => first = Some((i, o.sha256.clone())),
                Some((j, h)) if *h != o.sha256 && warned.insert(o.sha256.clone()) => {
                    out.push(format!(
                        "warning: {} (case set sha256 {}) and {} (case set sha256 {}) ran different case sets; merged, each listed under vectors",
                        names[*j],
                        short(h),
                        names[i],
                        short(&o.sha256)
                    ))
                }
                Some(_) => {}
            }
        }
    }
    out
}

/// What a merge takes for one runtime: its `--name`, else what it said to `initialize` (name
/// and version), with its adapter spec. Two implementations run as one command (`stdio:./shim`)
/// are two runtimes; one runtime over two transports is two, as in its run; shards of one run
/// are one.
pub(super) fn identity(run: &RuntimeRun) -> (String, String) {
    (said(run).unwrap_or_default(), run.runtime.clone())
}

/// Its `--name`, else `initialize`'s name and version (`toy 0.3.0`).
fn said(run: &RuntimeRun) -> Option<String> {
    let info = |p: &str| run.info.pointer(p).and_then(Value::as_str);
    run.label.clone().or_else(|| {
        let name = info("/runtime/name")?;
        Some(match info("/runtime/version") {
            Some(v) if !v.is_empty() => format!("{name} {v}"),
            _ => name.to_string(),
        })
    })
}

/// Runtimes of a merged suite that every rendering would head alike (one command, no
/// `--name`) are labelled by what they said to `initialize`, so a page of several
/// implementations tells its columns apart.
fn tell_apart(runs: &mut [RuntimeRun]) {
    let shown: Vec<String> = runs.iter().map(|r| r.shown().to_string()).collect();
    for (i, run) in runs.iter_mut().enumerate() {
        if run.label.is_none() && shown.iter().filter(|s| **s == shown[i]).count() > 1 {
            run.label = said(run).map(|s| crate::snapshot::contain_text(&s));
        }
    }
}

/// Every case of one (suite, runtime), with the input it came from.
type Gathered = Vec<(usize, crate::run::CaseResult)>;

/// One (suite, runtime)'s cases, deduplicated by name (a case in two files must agree) by a
/// sort of their indices: O(n log n) name comparisons, counted in `compared`. Several files
/// come out ordered by name; one file keeps its own order.
fn union(
    all: Gathered,
    several: bool,
    names: &[String],
    runtime: &str,
    compared: &mut u64,
) -> Result<Vec<crate::run::CaseResult>, BadInput> {
    let mut order: Vec<usize> = (0..all.len()).collect();
    // Stable: of one name, the first file's case comes first and is kept.
    order.sort_by(|&a, &b| {
        *compared += 1;
        all[a].1.name.cmp(&all[b].1.name)
    });
    let mut keep = vec![true; all.len()];
    let mut first: Option<usize> = None;
    for &i in &order {
        *compared += 1;
        match first {
            Some(f) if all[f].1.name == all[i].1.name => {
                if judged(&all[f].1) != judged(&all[i].1) {
                    return Err(BadInput(format!(
                        "case {} of {} differs between {} and {}: shards of one run never overlap; give the runs of two implementations each its own --name",
                        all[i].1.name, runtime, names[all[f].0], names[all[i].0]
                    )));
                }
                keep[i] = false;
            }
            _ => first = Some(i),
        }
    }
    let mut slots: Vec<Option<crate::run::CaseResult>> =
        all.into_iter().map(|(_, c)| Some(c)).collect();
    let picked: Vec<usize> = if several {
        order.into_iter().filter(|&i| keep[i]).collect()
    } else {
        (0..slots.len()).filter(|&i| keep[i]).collect()
    };
    Ok(picked.into_iter().filter_map(|i| slots[i].take()).collect())
}

/// [`merge`], counting the case-name comparisons it makes in `compared` (a bound on its work
/// that a test asserts without a clock: 130 000 cases once took 162 s, a scan per case).
fn merge_counting(
    inputs: Vec<(PathBuf, Report)>,
    compared: &mut u64,
) -> Result<(Report, Vec<String>), BadInput> {
    let names: Vec<String> = inputs
        .iter()
        .map(|(p, _)| super::printable(&p.display().to_string(), false))
        .collect();
    same_results(&inputs, &names)?;
    let warnings = case_sets(&inputs, &names);
    let several = inputs.len() > 1;
    let mut suites: Vec<RunResult> = vec![];
    let mut cases: Vec<Vec<Gathered>> = vec![];
    let mut suite_at: HashMap<String, usize> = HashMap::new();
    let mut runtime_at: HashMap<(usize, (String, String)), usize> = HashMap::new();
    let mut parity_seen: Vec<HashSet<String>> = vec![];
    let mut vectors: Vec<crate::vectors::Origin> = vec![];
    let mut vectors_seen = HashSet::new();
    // The earliest start (RFC 3339 in UTC of one shape orders as text) and the longest wall time.
    let started = inputs.iter().filter_map(|(_, r)| r.started.clone()).min();
    let wall_ms = inputs.iter().filter_map(|(_, r)| r.wall_ms).max();
    for (file, (_, report)) in inputs.into_iter().enumerate() {
        for o in report.vectors {
            if vectors_seen.insert((o.origin.clone(), o.sha256.clone())) {
                vectors.push(o);
            }
        }
        for mut r in report.suites {
            let runtimes = std::mem::take(&mut r.runtimes);
            let parity = std::mem::take(&mut r.parity);
            let si = *suite_at.entry(r.suite.clone()).or_insert_with(|| {
                suites.push(r.clone());
                cases.push(vec![]);
                parity_seen.push(HashSet::new());
                suites.len() - 1
            });
            let acc = &mut suites[si];
            if acc.strict_expectations != r.strict_expectations {
                return Err(BadInput(format!(
                    "{}: suite {} was run {} --strict-expectations, an earlier file's without",
                    names[file],
                    r.suite,
                    if r.strict_expectations {
                        "with"
                    } else {
                        "without"
                    }
                )));
            }
            if acc.ci != r.ci {
                return Err(BadInput(format!(
                    "{}: suite {} was run {} CI (--ci), an earlier file's {}",
                    names[file],
                    r.suite,
                    if r.ci { "under" } else { "outside" },
                    if r.ci { "outside" } else { "under" }
                )));
            }
            if acc.cases_hash != r.cases_hash
                && !acc.cases_hash.split('+').any(|h| h == r.cases_hash)
            {
                acc.cases_hash = format!("{}+{}", acc.cases_hash, r.cases_hash);
            }
            for sec in r.sections {
                if !acc.sections.contains(&sec) {
                    acc.sections.push(sec);
                }
            }
            for d in parity {
                if parity_seen[si].insert(format!("{d:?}")) {
                    acc.parity.push(d);
                }
            }
            for mut run in runtimes {
                let run_cases = std::mem::take(&mut run.cases);
                let ri = *runtime_at.entry((si, identity(&run))).or_insert_with(|| {
                    acc.runtimes.push(RuntimeRun {
                        summary: Summary::default(),
                        ..run.clone()
                    });
                    cases[si].push(vec![]);
                    acc.runtimes.len() - 1
                });
                acc.runtimes[ri].summary.micros = acc.runtimes[ri]
                    .summary
                    .micros
                    .saturating_add(run.summary.micros);
                cases[si][ri].extend(run_cases.into_iter().map(|c| (file, c)));
            }
        }
    }
    if suites.is_empty() {
        return Err("no results to merge".into());
    }
    for s in &mut suites {
        tell_apart(&mut s.runtimes);
    }
    for (s, gathered) in suites.iter_mut().zip(cases) {
        let rules = s.rules();
        for (run, all) in s.runtimes.iter_mut().zip(gathered) {
            run.cases = union(all, several, &names, run.shown(), compared)?;
            let micros = run.summary.micros;
            run.summary = Summary::of(&run.cases, rules);
            run.summary.micros = micros;
        }
    }
    Ok((
        Report {
            vectors,
            started,
            wall_ms,
            ..Report::of(suites)
        },
        warnings,
    ))
}

/// Read a result.json, as untrusted as any input: a regular file of at most
/// [`crate::input::MAX_RESULT`] bytes and [`crate::input::MAX_RESULT_VALUES`] JSON values,
/// parsed, then contained as a live run contains what it keeps ([`RunResult::contain`]): a
/// hand-edited file's floods come out cut and its secrets redacted. One line naming the file
/// on any problem.
pub fn read(path: &Path) -> Result<Report, BadInput> {
    let name = super::printable(&path.display().to_string(), false);
    let text = crate::input::read_capped(path, crate::input::MAX_RESULT)
        .map_err(|e| format!("{name}: {e}"))?;
    let values = crate::input::json_values(&text);
    if values > crate::input::MAX_RESULT_VALUES {
        return Err(BadInput(format!(
            "{name}: {values} JSON values is over the cap of {} values",
            crate::input::MAX_RESULT_VALUES
        )));
    }
    let quiet = |e: serde_json::Error| {
        super::printable(&crate::snapshot::contain_text(&e.to_string()), false)
    };
    let at = |e: serde_json::Error| {
        format!(
            "{name}: line {} column {}: {}",
            e.line(),
            e.column(),
            quiet(e)
        )
    };
    let v: Value = serde_json::from_str(&text).map_err(at)?;
    // Read again as its shape, so that a member of the wrong type is named by line and column.
    let mut report = match v.get("suites") {
        Some(_) => serde_json::from_str::<Report>(&text).map_err(at)?,
        None => {
            let one: RunResult = serde_json::from_str(&text).map_err(at)?;
            Report {
                schema: REPORT_SCHEMA.into(),
                hcpspec_version: one.hcpspec_version.clone(),
                vectors: vec![],
                started: None,
                wall_ms: None,
                suites: vec![one],
            }
        }
    };
    drop((v, text));
    for r in &mut report.suites {
        r.contain();
    }
    // The report's own members too: a hand-edited file may hold a secret anywhere.
    let text = |s: &mut String| *s = crate::snapshot::contain_text(s);
    text(&mut report.schema);
    text(&mut report.hcpspec_version);
    if let Some(s) = &mut report.started {
        text(s);
    }
    for o in &mut report.vectors {
        text(&mut o.origin);
        text(&mut o.sha256);
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `shards` results of one suite and runtime, `n` cases dealt round-robin among them.
    fn shards(n: usize, shards: usize) -> Vec<(PathBuf, Report)> {
        (0..shards)
            .map(|k| {
                let cases: Vec<Value> = (k..n)
                    .step_by(shards)
                    .map(|i| {
                        serde_json::json!({"name": format!("contract::04-x::c{i:06}"), "section": "4",
                            "level": "MUST", "spec": "", "verdict": "pass", "observations": [], "micros": 1})
                    })
                    .collect();
                let v = serde_json::json!({"hcpspec_version": "0", "suites": [{"hcpspec_version": "0",
                    "suite": "contract", "cases_hash": format!("h{k}"), "strict_expectations": false,
                    "ci": false, "runtimes": [{"runtime": "inproc:reference", "info": null,
                    "version": "", "summary": Summary::default(), "cases": cases}]}]});
                let report: Report = serde_json::from_value(v).expect("a report");
                (PathBuf::from(format!("shard{k}.json")), report)
            })
            .collect()
    }

    /// One file's suite and runtime: `spec` labelled `label`, initialize naming `info`.
    fn one(
        spec: &str,
        label: Option<&str>,
        info: &str,
        cases: &[&str],
        path: &str,
    ) -> (PathBuf, Report) {
        let cases: Vec<Value> = cases
            .iter()
            .map(|n| {
                serde_json::json!({"name": format!("contract::04-x::{n}"), "section": "4",
                    "level": "MUST", "spec": "", "verdict": "pass", "observations": [], "micros": 1})
            })
            .collect();
        let v = serde_json::json!({"hcpspec_version": "0", "suites": [{"hcpspec_version": "0",
            "suite": "contract", "cases_hash": "h", "strict_expectations": false,
            "ci": false, "runtimes": [{"runtime": spec, "label": label,
            "info": {"runtime": {"name": info, "version": "1.0"}},
            "version": "", "summary": Summary::default(), "cases": cases}]}]});
        (
            PathBuf::from(path),
            serde_json::from_value(v).expect("a report"),
        )
    }

    /// Two implementations run as the same command (`stdio:./shim`) are two runtimes of one
    /// report, told apart by their `--name`, else by what `initialize` says; shards of one
    /// run still merge into one.
    #[test]
    fn two_implementations_of_one_command_merge_as_two_runtimes() {
        let (merged, _) = merge(vec![
            one("stdio:./shim", Some("toy"), "shim", &["a", "b"], "toy.json"),
            one(
                "stdio:./shim",
                Some("other"),
                "shim",
                &["a", "b"],
                "other.json",
            ),
        ])
        .expect("two --names merge");
        let names: Vec<String> = merged.suites[0].runtimes.iter().map(|r| r.name()).collect();
        assert_eq!(names, ["toy", "other"]);
        let (merged, _) = merge(vec![
            one("stdio:./shim", None, "toy", &["a", "b"], "toy.json"),
            one("stdio:./shim", None, "other", &["a"], "other.json"),
        ])
        .expect("two initialize names merge");
        let runs = &merged.suites[0].runtimes;
        assert_eq!(runs.len(), 2);
        // Every rendering tells them apart, though they share a command.
        assert_ne!(runs[0].shown(), runs[1].shown());
        assert!(super::super::markdown(&merged).contains("toy 1.0"));
        let (merged, _) = merge(vec![
            one("stdio:./shim", Some("toy"), "shim", &["a"], "s1.json"),
            one("stdio:./shim", Some("toy"), "shim", &["b"], "s2.json"),
        ])
        .expect("shards merge");
        assert_eq!(merged.suites[0].runtimes.len(), 1);
        assert_eq!(merged.suites[0].runtimes[0].cases.len(), 2);
    }

    /// 130 000 cases took 162 s: each case was looked up by a scan of the cases merged so
    /// far. Merging n cases compares names O(n log n) times, not O(n²).
    #[test]
    fn merging_n_cases_compares_names_n_log_n_times() {
        let n = 20_000;
        let mut compared = 0;
        let (merged, _) = merge_counting(shards(n, 4), &mut compared).expect("merges");
        let cases = &merged.suites[0].runtimes[0].cases;
        assert_eq!(cases.len(), n);
        assert!(cases.windows(2).all(|w| w[0].name < w[1].name));
        let bound = 2 * n as u64 * (n as f64).log2().ceil() as u64;
        assert!(
            compared <= bound,
            "{compared} comparisons for {n} cases (bound {bound})"
        );
    }
}
