//! The redactions that make observations comparable across runs, machines and transports. One
//! place, and steps are only ever appended (cf. trybuild's normaliser), so that old snapshots
//! stay valid. Volatile values become the case file's own variables where there is one.

use regex::Regex;
use serde_json::Value;

/// The volatile paths of one case run.
#[derive(Debug, Clone)]
pub struct Redact {
    /// The case's temp dir (its workdir, probe reports and packs live inside).
    tmp: String,
    /// The runtime's bin directory.
    bin: String,
    reports: Regex,
}

impl Redact {
    pub fn new(tmp: &str, bin: &str) -> Redact {
        let reports = Regex::new(&format!(
            r"{}/probe/report(\.[A-Za-z0-9_-]+)?\.json",
            regex::escape(tmp)
        ))
        .expect("escaped");
        Redact {
            tmp: tmp.into(),
            bin: bin.into(),
            reports,
        }
    }
}

fn text(s: &str, r: &Redact) -> String {
    let mut s = s.to_string();
    // 1. The workdir and the probe reports by their case variables, then the rest of the tmp dir.
    if !r.tmp.is_empty() && s.contains(&r.tmp) {
        s = s.replace(&format!("{}/work", r.tmp), "${workdir}");
        s = r
            .reports
            .replace_all(&s, |c: &regex::Captures| {
                format!("${{report{}}}", c.get(1).map_or("", |m| m.as_str()))
            })
            .into_owned();
        s = s.replace(&r.tmp, "${tmp}");
    }
    // 2. The bin directory (it is in the probe's PATH).
    if !r.bin.is_empty() {
        s = s.replace(&r.bin, "${bin}");
    }
    s
}

pub fn apply(v: &Value, r: &Redact) -> Value {
    match v {
        Value::String(s) => Value::String(text(s, r)),
        Value::Array(a) => Value::Array(a.iter().map(|x| apply(x, r)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| {
                    // 3. Ids a runtime generates.
                    let x = if k == "runtime_id" && x.is_string() {
                        Value::String("[runtime_id]".into())
                    } else {
                        apply(x, r)
                    };
                    (text(k, r), x)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn redacts_paths_and_ids() {
        let r = Redact::new("/tmp/hcpspec-caseAB", "/tmp/hcpspec-binXY");
        let v = json!({
            "runtime_id": "rt-7",
            "cwd": "/tmp/hcpspec-caseAB/work",
            "argv": ["--report", "/tmp/hcpspec-caseAB/probe/report.second.json", "/tmp/hcpspec-caseAB/probe/report.json"],
            "env": { "PATH": "/tmp/hcpspec-binXY" },
            "dir": "/tmp/hcpspec-caseAB/packs/ledger"
        });
        assert_eq!(
            apply(&v, &r),
            json!({
                "runtime_id": "[runtime_id]",
                "cwd": "${workdir}",
                "argv": ["--report", "${report.second}", "${report}"],
                "env": { "PATH": "${bin}" },
                "dir": "${tmp}/packs/ledger"
            })
        );
    }
}
