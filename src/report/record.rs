//! `result.json`: the one record a run (or `hcpspec report`) writes, every suite's result in
//! it, and the union of several such records by case name.

use super::{RunResult, RuntimeRun, Summary};
use crate::error::BadInput;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
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
    pub suites: Vec<RunResult>,
}

impl Report {
    pub fn of(suites: Vec<RunResult>) -> Report {
        Report {
            schema: REPORT_SCHEMA.into(),
            hcpspec_version: env!("CARGO_PKG_VERSION").into(),
            vectors: vec![],
            suites,
        }
    }

    /// Does it fail (exit 1)? When any suite's result does.
    pub fn fails(&self) -> bool {
        crate::run::result::RunStats::of(&self.suites, false).fails()
    }
}

/// Two results of one case, as compared by a merge: everything but how long it took.
fn judged(c: &crate::run::CaseResult) -> Value {
    let mut v = serde_json::to_value(c).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.remove("micros");
    }
    v
}

/// The union of several records by case name (shards of one run, or runs of several runtimes
/// or suites): suites by name, runtimes by adapter spec, cases by name. The same file twice is
/// refused; a case present in two files must agree (its verdict, observations and annotations),
/// else the merge is refused naming it; one suite's results must agree on
/// `--strict-expectations` and on CI. Summaries are recounted from the merged cases.
pub fn merge(inputs: Vec<(PathBuf, Report)>) -> Result<Report, BadInput> {
    let mut seen: Vec<PathBuf> = vec![];
    for (p, _) in &inputs {
        let real = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
        if seen.contains(&real) {
            return Err(BadInput(format!("{}: given twice", p.display())));
        }
        seen.push(real);
    }
    let mut suites: Vec<RunResult> = vec![];
    let mut vectors: Vec<crate::vectors::Origin> = vec![];
    // Where each (suite, runtime, case) came from, to name both files of a disagreement.
    let mut from: BTreeMap<(String, String, String), PathBuf> = BTreeMap::new();
    for (path, report) in inputs {
        for o in report.vectors {
            if !vectors.contains(&o) {
                vectors.push(o);
            }
        }
        for r in report.suites {
            let acc = match suites.iter_mut().find(|s| s.suite == r.suite) {
                Some(acc) => acc,
                None => {
                    suites.push(RunResult {
                        runtimes: vec![],
                        parity: vec![],
                        ..r.clone()
                    });
                    suites.last_mut().expect("pushed")
                }
            };
            if acc.strict_expectations != r.strict_expectations {
                return Err(BadInput(format!(
                    "{}: suite {} was run {} --strict-expectations, an earlier file's without",
                    path.display(),
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
                    path.display(),
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
            for d in r.parity {
                if !acc.parity.contains(&d) {
                    acc.parity.push(d);
                }
            }
            for run in r.runtimes {
                let target = match acc.runtimes.iter_mut().find(|x| x.runtime == run.runtime) {
                    Some(t) => t,
                    None => {
                        acc.runtimes.push(RuntimeRun {
                            cases: vec![],
                            summary: Summary::default(),
                            ..run.clone()
                        });
                        acc.runtimes.last_mut().expect("pushed")
                    }
                };
                target.summary.micros += run.summary.micros;
                for c in run.cases {
                    let key = (r.suite.clone(), run.runtime.clone(), c.name.clone());
                    match target.cases.iter().find(|x| x.name == c.name) {
                        Some(old) if judged(old) != judged(&c) => {
                            return Err(BadInput(format!(
                                "case {} of {} differs between {} and {}: shards of one run never overlap; results of two runs cannot be merged",
                                c.name,
                                run.runtime,
                                from[&key].display(),
                                path.display()
                            )))
                        }
                        Some(_) => {}
                        None => {
                            from.insert(key, path.clone());
                            target.cases.push(c);
                        }
                    }
                }
            }
        }
    }
    if suites.is_empty() {
        return Err("no results to merge".into());
    }
    // One file is its own merge, in its own order; several are ordered by case name.
    let several = seen.len() > 1;
    for s in &mut suites {
        let rules = s.rules();
        for run in &mut s.runtimes {
            if several {
                run.cases.sort_by(|a, b| a.name.cmp(&b.name));
            }
            let micros = run.summary.micros;
            run.summary = Summary::of(&run.cases, rules);
            run.summary.micros = micros;
        }
    }
    Ok(Report {
        vectors,
        ..Report::of(suites)
    })
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
                suites: vec![one],
            }
        }
    };
    drop((v, text));
    for r in &mut report.suites {
        r.contain();
    }
    Ok(report)
}
