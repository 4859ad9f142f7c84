//! The redactions that make observations comparable across runs, machines and transports. One
//! place, and steps are only ever appended (cf. trybuild's normaliser), so that old snapshots
//! stay valid. Volatile values become the case file's own variables where there is one.

use regex::Regex;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::OnceLock;

/// The longest text from a runtime or shim that reports keep, in bytes; past it the text is cut
/// and marked `…[cut: N bytes in all]`.
pub const MAX_TEXT: usize = 4 << 10;

/// The largest observation reports keep, pretty-printed, in bytes; past it the observation is
/// replaced by a cut excerpt of itself.
pub const MAX_VALUE: usize = 16 << 10;

/// `s` cut to at most [`MAX_TEXT`] bytes (on a character boundary), the cut marked with the full
/// size.
pub fn cap(s: &str) -> Cow<'_, str> {
    cap_at(s, MAX_TEXT)
}

fn cap_at(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max {
        return Cow::Borrowed(s);
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}…[cut: {} bytes in all]", &s[..end], s.len()))
}

/// Environment variables whose values are never secrets, and common enough in observations
/// that redacting them would hide what a runtime did.
const BORING: &[&str] = &[
    "PATH",
    "HOME",
    "PWD",
    "OLDPWD",
    "SHELL",
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TERM_PROGRAM",
    "COLORTERM",
    "TMPDIR",
    "TMP",
    "TEMP",
    "HOSTNAME",
    "SHLVL",
    "EDITOR",
    "PAGER",
    "MAIL",
    "DISPLAY",
    "TZ",
    "CARGO",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_TARGET_TMPDIR",
    "RUST_BACKTRACE",
    "RUST_LOG",
];

/// Prefixes of variables cargo sets for a test or build (package metadata, not credentials).
const BORING_PREFIXES: &[&str] = &[
    "LC_",
    "CARGO_PKG_",
    "CARGO_CRATE_",
    "CARGO_MANIFEST_",
    "CARGO_BIN_",
    "XDG_",
];

/// The values of hcpspec's own environment that are redacted wherever they appear: at least 8
/// bytes, not a boring variable and not an existing path; longest first.
pub fn secrets() -> &'static [(String, String)] {
    static S: OnceLock<Vec<(String, String)>> = OnceLock::new();
    S.get_or_init(|| {
        secrets_of(std::env::vars_os().map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        }))
    })
}

/// [`secrets`] of a given environment.
pub fn secrets_of(vars: impl IntoIterator<Item = (String, String)>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = vars
        .into_iter()
        .filter(|(k, v)| {
            v.len() >= 8
                && !BORING.contains(&k.as_str())
                && !BORING_PREFIXES.iter().any(|p| k.starts_with(p))
                && (!v.starts_with('/') || !std::path::Path::new(v).exists())
        })
        .collect();
    out.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    out
}

/// Credentials by their shape, whoever's they are: GitHub, AWS, Slack, OpenAI-style keys and PEM
/// private keys.
fn secret_shapes() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        Regex::new(concat!(
            r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}",
            r"|AKIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9-]{10,}|sk-[A-Za-z0-9_-]{32,})\b",
            r"|-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)"
        ))
        .expect("static regex")
    })
}

/// `s` with every value of hcpspec's environment replaced by `[redacted: $NAME]` and every
/// secret-shaped token by `[redacted: secret-shaped]`.
pub fn redact_secrets<'a>(s: &'a str, secrets: &[(String, String)]) -> Cow<'a, str> {
    let mut out = Cow::Borrowed(s);
    for (name, value) in secrets {
        if out.contains(value.as_str()) {
            out = Cow::Owned(out.replace(value.as_str(), &format!("[redacted: ${name}]")));
        }
    }
    if secret_shapes().is_match(&out) {
        out = Cow::Owned(
            secret_shapes()
                .replace_all(&out, "[redacted: secret-shaped]")
                .into_owned(),
        );
    }
    out
}

/// Any text from a runtime or shim as reports keep it: secrets redacted, then capped.
pub fn contain_text(s: &str) -> String {
    let redacted = redact_secrets(s, secrets());
    cap(&redacted).into_owned()
}

/// A whole value as reports keep it: every string and key contained, and the value cut to an
/// excerpt when it is still over [`MAX_VALUE`] pretty-printed.
pub fn contain(v: &Value) -> Value {
    bound(apply(v, &Redact::new("", "")))
}

/// An observation over [`MAX_VALUE`] pretty-printed becomes a string: its start, cut and marked.
pub fn bound(v: Value) -> Value {
    let pretty = serde_json::to_string_pretty(&v).unwrap_or_default();
    if pretty.len() <= MAX_VALUE {
        return v;
    }
    let compact = v.to_string();
    let mut end = MAX_TEXT.min(compact.len());
    while !compact.is_char_boundary(end) {
        end -= 1;
    }
    Value::String(format!(
        "{}…[cut: {} bytes in all]",
        &compact[..end],
        compact.len()
    ))
}

/// The volatile paths of one case run.
#[derive(Debug, Clone)]
pub struct Redact {
    /// The case's temp dir (its workdir, probe reports and packs live inside).
    tmp: String,
    /// The runtime's bin directory.
    bin: String,
    reports: Regex,
    /// Paths only, no caps or redaction: for judges that read observations (the fuzzer's
    /// oracles), never for what a report keeps.
    pub uncapped: bool,
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
            uncapped: false,
        }
    }
}

fn text(s: &str, r: &Redact) -> String {
    if r.uncapped {
        return paths(s.to_string(), r);
    }
    // Cut first to a bound that keeps the cut's marker honest, so that path redaction never
    // walks megabytes.
    let s = if s.len() > 4 * MAX_TEXT {
        let mut end = 4 * MAX_TEXT;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        return contain_text(&s[..end])
            .split("…[cut: ")
            .next()
            .map(|head| format!("{}…[cut: {} bytes in all]", cap(head), s.len()))
            .unwrap_or_default();
    } else {
        s.to_string()
    };
    // 4. Values of hcpspec's own environment and secret-shaped tokens, then the size cap.
    contain_text(&paths(s, r))
}

/// Steps 1 and 2: the case's paths by their variables.
fn paths(mut s: String, r: &Redact) -> String {
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
    fn caps_long_texts_with_the_full_size() {
        let long = "x".repeat(7 << 20);
        let r = Redact::new("/tmp/hcpspec-caseAB", "/tmp/bin");
        let out = apply(&json!({ "error": long }), &r);
        let e = out["error"].as_str().unwrap();
        assert!(e.len() <= MAX_TEXT + 40, "{}", e.len());
        assert!(
            e.ends_with(&format!("…[cut: {} bytes in all]", 7 << 20)),
            "{}",
            &e[e.len() - 40..]
        );
        let many = json!(vec!["y".repeat(1000); 1000]);
        let bounded = bound(apply(&many, &r));
        assert!(serde_json::to_string_pretty(&bounded).unwrap().len() <= MAX_VALUE);
        assert!(bounded.as_str().unwrap().contains("…[cut: "));
        assert!(cap("é".repeat(MAX_TEXT).as_str()).len() <= MAX_TEXT + 40);
    }

    #[test]
    fn redacts_environment_values_and_secret_shapes() {
        let env = secrets_of([
            ("CI_SECRET".to_string(), "s3cr3t-value-123".to_string()),
            ("HOME".to_string(), "/home/someone-long".to_string()),
            ("SHORT".to_string(), "abc".to_string()),
        ]);
        assert_eq!(env.len(), 1);
        assert_eq!(
            redact_secrets("token=s3cr3t-value-123;", &env),
            "token=[redacted: $CI_SECRET];"
        );
        assert_eq!(
            redact_secrets(
                "AKIAABCDEFGHIJKLMNOP and ghp_0123456789abcdefghijklmnopqrstuvwxyz",
                &[]
            ),
            "[redacted: secret-shaped] and [redacted: secret-shaped]"
        );
        assert_eq!(redact_secrets("nothing here", &env), "nothing here");
    }

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
