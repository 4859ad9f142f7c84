//! No planted secret reaches any output of any suite (docs/security.md, issue 20): values of
//! hcpspec's environment (as strings, as JSON numbers, inside the quoted excerpt of a non-JSON
//! line, cut at its byte 160) and tokens of common secret shapes, said by a contract shim, a host
//! shim, a core's control shim and a harness (in its stderr and its frames), never appear in
//! result.json, junit.xml, the Markdown and HTML reports, the snapshots or the terminal.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The values planted in hcpspec's environment (tests/fauxmplementations/leaky.py repeats them).
pub(crate) const PLANTED: &[(&str, &str)] = &[
    ("HCPSPEC_LEAK_QUOTE", "canary\"q\\uote-7d1e2f0a"),
    ("HCPSPEC_LEAK_CUT", "canary-cut-9a8b7c6d5e4f"),
    ("HCPSPEC_LEAK_NUM", "8675309123"),
    ("HCPSPEC_LEAK_PLAIN", "canary-plain-4c3b2a1f0e"),
];

/// What no output may hold, in any encoding (JSON, HTML, Markdown escape quotes and
/// backslashes, so these are the parts no escape touches): the planted values, the cut one
/// without its last byte, and the secret part of each secret-shaped token leaky.py says.
pub(crate) const FORBIDDEN: &[&str] = &[
    "uote-7d1e2f0a",
    "canary-cut-9a8b7c6d5e4",
    "8675309123",
    "canary-plain-4c3b2a1f0e",
    "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8",
    "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123",
    "1234567890-abcdefghijkl",
    "1234567890-mnopqrstuvwx",
    "AKIAIOSFODNN7LEAKYXX",
    "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0Ed",
    "leakybearer-0123456789abcdef",
    "c2lnbmF0dXJlLWNhbmFyeQ",
    "5f3e2d1c0b9a8877",
];

/// Every file under `dir`, with its text.
pub(crate) fn files(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let text = String::from_utf8_lossy(&std::fs::read(&p).unwrap()).into_owned();
                out.push((p, text));
            }
        }
    }
    out
}

/// Run one case of `suite` on `runtime` with the secrets planted; every output's text, by
/// name (the terminal's as `terminal`).
fn outputs(suite: &str, filter: &str, runtime: &str) -> Vec<(String, String)> {
    let dir = tempfile::tempdir().unwrap();
    let (out, snaps) = (dir.path().join("out"), dir.path().join("snaps"));
    let o = Command::new(env!("CARGO_BIN_EXE_hcpspec"))
        .args([
            "run",
            "--suite",
            suite,
            "--filter",
            filter,
            "--runtime",
            runtime,
        ])
        .args(["--timeout", "3", "--accept", "--snapshots"])
        .arg(&snaps)
        .arg("--out")
        .arg(&out)
        .envs(PLANTED.iter().copied())
        .current_dir(root())
        .output()
        .expect("hcpspec runs");
    let mut all = vec![(
        "terminal".to_string(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )];
    for d in [&out, &snaps] {
        for (p, text) in files(d) {
            all.push((p.display().to_string(), text));
        }
    }
    let names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
    for kind in ["result.json", "junit.xml", ".md", ".html", ".snap"] {
        assert!(
            names.iter().any(|n| n.ends_with(kind)),
            "{suite}: no {kind} written: {names:?}\n{}",
            all[0].1
        );
    }
    all
}

/// No output holds a planted secret; result.json names each of `named` as redacted.
fn keeps_the_secrets(outputs: &[(String, String)], named: &[&str]) {
    let token = regex::Regex::new("nylorun-ht-[0-9a-f]{6,}").unwrap();
    for (name, text) in outputs {
        for secret in FORBIDDEN {
            assert!(!text.contains(secret), "{name} holds `{secret}`:\n{text}");
        }
        assert!(
            !token.is_match(text),
            "{name} holds a harness token:\n{text}"
        );
    }
    let result = &outputs
        .iter()
        .find(|(n, _)| n.ends_with("result.json"))
        .unwrap()
        .1;
    for var in named {
        assert!(
            result.contains(&format!("[redacted: ${var}")),
            "result.json does not name {var}:\n{result}"
        );
    }
}

fn leaky(mode: &str) -> String {
    let script = root().join("tests/fauxmplementations/leaky.py");
    format!("stdio:python3 {} {mode}", script.display())
}

#[test]
fn a_contract_shim_answering_a_line_of_secrets_leaks_none_of_them() {
    let o = outputs("contract", "list-packs-lists-installed", &leaky("contract"));
    keeps_the_secrets(&o, &["HCPSPEC_LEAK_QUOTE", "HCPSPEC_LEAK_CUT"]);
}

#[test]
fn a_host_shim_answering_secrets_as_strings_numbers_and_garbage_leaks_none_of_them() {
    let o = outputs(
        "host",
        "bound-session-exposes-what-host-needs",
        &leaky("host"),
    );
    keeps_the_secrets(
        &o,
        &[
            "HCPSPEC_LEAK_QUOTE",
            "HCPSPEC_LEAK_NUM",
            "HCPSPEC_LEAK_PLAIN",
        ],
    );
}

#[test]
fn a_core_start_error_full_of_secrets_is_redacted_and_capped() {
    let o = outputs("core-api", "correct-upgrade-accepted", &leaky("core"));
    keeps_the_secrets(&o, &["HCPSPEC_LEAK_QUOTE", "HCPSPEC_LEAK_NUM"]);
    let result = &o
        .iter()
        .find(|(n, _)| n.ends_with("result.json"))
        .unwrap()
        .1;
    assert!(
        !result.contains(&"E".repeat(5000)),
        "the core.start error is not capped"
    );
}

#[test]
fn a_harness_repeating_secrets_in_stderr_and_frames_leaks_none_of_them() {
    let script = root().join("tests/fauxmplementations/hostile_harness.py");
    let o = outputs(
        "harness-api",
        "connects-to-the-listener-path",
        &format!("exec:python3 {} leaks", script.display()),
    );
    keeps_the_secrets(
        &o,
        &[
            "HCPSPEC_LEAK_QUOTE",
            "HCPSPEC_LEAK_NUM",
            "HCPSPEC_LEAK_PLAIN",
        ],
    );
}

/// A contract shim declaring `rules` (JSON) in `initialize` that answers every other method with
/// a few short texts; outputs of one case run against it with the secrets planted.
fn declaring(rules: &str) -> Vec<(String, String)> {
    let dir = tempfile::tempdir().unwrap();
    let shim = dir.path().join("declares.py");
    std::fs::write(
        &shim,
        format!(
            r#"import json, sys
RULES = json.loads({rules:?})
for line in sys.stdin:
    m = json.loads(line)
    meth = m.get("method")
    if meth == "initialize":
        r = {{"protocol": "hcpspec-shim/1", "runtime": {{"name": "declares", "version": "0"}},
             "features": [], "redactions": RULES}}
    elif meth == "runtime.create":
        r = {{"ok": True, "runtime_id": "rt-1"}}
    elif meth in ("runtime.dispose", "shutdown"):
        r = {{}}
    else:
        r = {{"ok": True, "packs": [{{"id": "ledger", "name": "x"}}], "note": "ab", "more": ["c", "d", "e"]}}
    print(json.dumps({{"jsonrpc": "2.0", "id": m.get("id"), "result": r}}), flush=True)
    if meth == "shutdown":
        break
"#
        ),
    )
    .unwrap();
    outputs(
        "contract",
        "list-packs-lists-installed",
        &format!("stdio:python3 {}", shim.display()),
    )
}

/// A runtime's declared redactions are applied after hcpspec's own, so what they put in is
/// contained again: a placeholder that is a value of hcpspec's environment, or secret-shaped,
/// is redacted in every output.
#[test]
fn a_declared_placeholder_spelling_a_secret_is_redacted_again() {
    let o = declaring(
        r#"[{"pattern": "(?s).+", "placeholder": "canary-plain-4c3b2a1f0e AKIAIOSFODNN7LEAKYXX"}]"#,
    );
    keeps_the_secrets(&o, &["HCPSPEC_LEAK_PLAIN"]);
}

/// Chained declared rules each multiply a text by up to 64 (`(?s).` → 64 × `A`, then `A` →
/// 64 × `B`, …): every text stays cut at the usual cap after each rule, so the report is
/// written and small.
#[test]
fn chained_declared_redactions_cannot_multiply_a_text() {
    let rules: Vec<String> = ["(?s).", "A", "B", "C", "D", "E"]
        .windows(2)
        .map(|w| {
            format!(
                r#"{{"pattern": "{}", "placeholder": "{}"}}"#,
                w[0],
                w[1].repeat(64)
            )
        })
        .collect();
    let o = declaring(&format!("[{}]", rules.join(",")));
    for (name, text) in &o {
        assert!(
            text.len() < 256 << 10,
            "{name}: {} bytes:\n{}",
            text.len(),
            &text[..text.len().min(2000)]
        );
    }
    let result = &o
        .iter()
        .find(|(n, _)| n.ends_with("result.json"))
        .unwrap()
        .1;
    assert!(result.contains(&"E".repeat(64)), "{result}");
    assert!(result.contains("…[cut: "), "{result}");
}

/// One runtime over two transports that answer differently, with a declared redaction so wide
/// that every text becomes the same: no parity difference is left, and the run says what its
/// redactions hid.
#[test]
fn a_wide_declared_redaction_hiding_a_parity_difference_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let shim = dir.path().join("two.py");
    std::fs::write(
        &shim,
        r#"import json, sys
side = sys.argv[1]
for line in sys.stdin:
    m = json.loads(line)
    meth = m.get("method")
    if meth == "initialize":
        r = {"protocol": "hcpspec-shim/1", "runtime": {"name": "twofaced", "version": "0"},
             "features": [], "redactions": [{"pattern": "(?s).+", "placeholder": "[all]"}]}
    elif meth == "runtime.create":
        r = {"ok": True, "runtime_id": "rt-1", "side": side}
    elif meth in ("runtime.dispose", "shutdown"):
        r = {}
    else:
        r = {"ok": True}
    print(json.dumps({"jsonrpc": "2.0", "id": m.get("id"), "result": r}), flush=True)
    if meth == "shutdown":
        break
"#,
    )
    .unwrap();
    let spec = |side: &str| format!("stdio:python3 {} {side}", shim.display());
    let o = Command::new(env!("CARGO_BIN_EXE_hcpspec"))
        .args([
            "run",
            "--suite",
            "contract",
            "--filter",
            "list-packs-lists-installed",
        ])
        .args(["--runtime", &spec("left"), "--runtime", &spec("right")])
        .args(["--timeout", "3", "--out"])
        .arg(dir.path().join("out"))
        .current_dir(root())
        .output()
        .expect("hcpspec runs");
    let t = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(!t.contains("PARITY"), "{t}");
    assert!(
        t.contains("twofaced 0: ")
            && t.contains("observed 1 case(s) differently (first ")
            && t.contains(
                "list-packs-lists-installed) until its declared redactions made them equal"
            ),
        "{t}"
    );
}

/// Run `contract` case list-packs-lists-installed on minihcp whose version embeds `GITHUB_SHA`,
/// in GitHub's environment plus `env`, with `args`; result.json and the terminal's text.
fn in_github(env: &[(&str, &str)], args: &[&str]) -> (String, String, i32) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let shim = root().join("tests/fauxmplementations/ci_version.py");
    let o = Command::new(env!("CARGO_BIN_EXE_hcpspec"))
        .args([
            "run",
            "--suite",
            "contract",
            "--filter",
            "list-packs-lists-installed",
        ])
        .arg("--runtime")
        .arg(format!("stdio:python3 {}", shim.display()))
        .args(args)
        .arg("--out")
        .arg(&out)
        .envs([
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_SHA", "8f2c1e0d9b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e"),
            ("GITHUB_RUN_ID", "12345678901"),
            ("GITHUB_REPOSITORY", "someone/toy-runtime"),
            ("GITHUB_TOKEN", "a-token-not-shaped-like-one-0123"),
        ])
        .envs(env.iter().copied())
        .current_dir(root())
        .output()
        .expect("hcpspec runs");
    let result = std::fs::read_to_string(out.join("result.json")).unwrap_or_default();
    let terminal = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (result, terminal, o.status.code().unwrap_or(-1))
}

/// In GitHub Actions a version embedding the commit is shown as it is: GitHub's default
/// variables (commit, run id, repository …) are no secrets. GITHUB_TOKEN stays one.
#[test]
fn githubs_own_variables_are_not_redacted_as_secrets() {
    let (result, terminal, code) = in_github(&[], &[]);
    assert_eq!(code, 0, "{terminal}");
    assert!(
        result.contains("0.3.0+8f2c1e0d9b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e"),
        "the commit was redacted:\n{terminal}"
    );
    assert!(!result.contains("$GITHUB_SHA"), "{result}");
    // The token's value, said by the runtime (here in its version): redacted as the token.
    let token = "a-token-not-shaped-like-one-0123";
    let leaked = in_github(&[("GITHUB_SHA", token)], &[]).0;
    assert!(!leaked.contains(token), "{leaked}");
    assert!(
        leaked.contains("0.3.0+[redacted: $GITHUB_TOKEN]"),
        "{leaked}"
    );
}

/// A user says which of their variables are no secrets (`--not-secret NAME`, or
/// `HCPSPEC_NOT_SECRET=A,B`); a name like a credential's cannot be said so, and a secret-shaped
/// value is redacted whatever its variable.
#[test]
fn a_user_names_the_variables_that_are_not_secret() {
    let build = ("MY_BUILD_ID", "build-2026-12-07-0042");
    let (result, terminal, _) = in_github(&[build, ("GITHUB_SHA", build.1)], &[]);
    assert!(!result.contains(build.1), "{terminal}");
    let (result, terminal, code) = in_github(
        &[build, ("GITHUB_SHA", build.1)],
        &["--not-secret", "MY_BUILD_ID"],
    );
    assert_eq!(code, 0, "{terminal}");
    assert!(result.contains("0.3.0+build-2026-12-07-0042"), "{terminal}");
    let by_env = in_github(
        &[
            build,
            ("GITHUB_SHA", build.1),
            ("HCPSPEC_NOT_SECRET", "OTHER,MY_BUILD_ID"),
        ],
        &[],
    )
    .0;
    assert!(by_env.contains("0.3.0+build-2026-12-07-0042"), "{by_env}");
    // A token's name stays secret: one line, exit 2, before anything runs.
    let (_, terminal, code) = in_github(&[], &["--not-secret", "GITHUB_TOKEN"]);
    assert_eq!(code, 2, "{terminal}");
    assert!(
        terminal.contains("GITHUB_TOKEN") && terminal.lines().count() <= 2,
        "{terminal}"
    );
    // A token-shaped value is redacted, whatever its variable says.
    let shaped = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
    let (result, terminal, _) = in_github(&[("GITHUB_SHA", shaped)], &[]);
    assert!(
        !result.contains(shaped) && result.contains("secret-shaped"),
        "{terminal}"
    );
}
