//! hcpspec trusts nothing it reads (docs/security.md). Hostile cases (tests/hostile-vectors/),
//! a hostile shim (tests/fauxmplementations/hostile_shim.py) and a leaky runtime are each refused
//! or contained, checked on the file system and in every output.

use crate::common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CANARY: &str = "canary-hostile-5f0c1d2e3b4a";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Run hcpspec to its end; whatever the hostile input, its peak RSS stays under the bound.
fn hcpspec(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let (o, peak) = common::output_and_peak_rss(
        Command::new(env!("CARGO_BIN_EXE_hcpspec"))
            .args(args)
            .envs(envs.iter().copied())
            .current_dir(root()),
    );
    assert!(
        peak < common::RSS_BOUND,
        "hcpspec {args:?}: peak RSS {} MiB",
        peak >> 20
    );
    o
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A vectors folder with the real denials and fixture packs, and only the given hostile cases.
fn vectors_with(cases: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let v = root().join("vectors");
    std::fs::copy(v.join("denials.json"), dir.path().join("denials.json")).unwrap();
    common::copy_dir(&v.join("packs"), &dir.path().join("packs"));
    let group = dir.path().join("contract/99-hostile");
    std::fs::create_dir_all(&group).unwrap();
    std::fs::copy(
        v.join("contract/suite.json"),
        dir.path().join("contract/suite.json"),
    )
    .unwrap();
    for c in cases {
        std::fs::copy(
            root()
                .join("tests/hostile-vectors")
                .join(format!("{c}.json")),
            group.join(format!("{c}.json")),
        )
        .unwrap();
    }
    dir
}

/// Every file under `dir`, relative, with its size.
fn files(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let len = e.metadata().unwrap().len();
                out.push((p.strip_prefix(dir).unwrap().to_path_buf(), len));
            }
        }
    }
    out.sort();
    out
}

/// The hostile case files, the JSON pointer each must be refused at, and the victim it aims at.
const REFUSED: &[(&str, &str)] = &[
    ("files-traversal", "/setup/packs/0/files/..~1..~1"),
    (
        "files-absolute",
        "/setup/packs/0/files/~1tmp~1hcpspec-hostile-ABSOLUTE",
    ),
    ("files-delete", "/setup/packs/0/files/..~1"),
    ("patch-traversal", "/setup/packs/0/patch/..~1"),
    ("from-traversal", "/setup/packs/0/from"),
    ("pack-name-dotdot", "/setup/packs/0/name"),
    ("fixture-traversal", "/setup/packs/0"),
    ("fixture-missing", "/setup/packs/0"),
    ("probe-outside", "/steps/0/probe"),
    ("probe-tmp-traversal", "/steps/0/probe"),
];

fn victims() -> (PathBuf, PathBuf, PathBuf, PathBuf) {
    let t = Path::new("/tmp");
    (
        t.join("hcpspec-hostile-PWNED"),
        t.join("hcpspec-hostile-ABSOLUTE"),
        t.join("hcpspec-hostile-VICTIM"),
        t.join("hcpspec-hostile-PATCHED.json"),
    )
}

#[test]
fn every_hostile_path_in_a_case_is_refused_before_anything_runs() {
    let (pwned, absolute, victim, patched) = victims();
    let _ = std::fs::remove_file(&pwned);
    let _ = std::fs::remove_file(&absolute);
    std::fs::write(&victim, "keep me").unwrap();
    std::fs::write(&patched, "{\"a\": 1}").unwrap();
    for (case, pointer) in REFUSED {
        let v = vectors_with(&[case]);
        let out = tempfile::tempdir().unwrap();
        let o = hcpspec(
            &[
                "run",
                "--vectors",
                v.path().to_str().unwrap(),
                "--out",
                out.path().to_str().unwrap(),
            ],
            &[],
        );
        let t = text(&o);
        assert_eq!(code(&o), 2, "{case}: {t}");
        let line = t.trim();
        assert!(!line.contains('\n'), "{case}: one line: {t}");
        assert!(
            line.contains(&format!("99-hostile/{case}.json:{pointer}")),
            "{case}: names the file and {pointer}: {t}"
        );
        assert!(
            files(out.path()).is_empty(),
            "{case}: nothing ran, nothing written"
        );
    }
    assert!(
        !pwned.exists() && !absolute.exists(),
        "nothing written outside"
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    assert_eq!(std::fs::read_to_string(&patched).unwrap(), "{\"a\": 1}");
    let _ = std::fs::remove_file(&victim);
    let _ = std::fs::remove_file(&patched);
}

/// The executor checks again: a case that never went through the loader (the fuzzers build
/// their own) is an error verdict, and nothing outside its temp dir is touched.
#[test]
fn the_executor_refuses_hostile_paths_the_loader_never_saw() {
    let v = root().join("vectors");
    let env =
        hcpspec::suites::hcp::RunEnv::new(&v, Path::new(env!("CARGO_BIN_EXE_hcpspec"))).unwrap();
    let connect =
        hcpspec::suites::hcp::shim::connector("inproc:reference", &Default::default()).unwrap();
    let victim = std::env::temp_dir().join(format!("hcpspec-hostile-exec-{}", std::process::id()));
    let patched = victim.with_extension("json");
    for (case, _) in REFUSED {
        if *case == "fixture-missing" {
            continue;
        }
        std::fs::write(&victim, "keep me").unwrap();
        std::fs::write(&patched, "{\"a\": 1}").unwrap();
        let file = root()
            .join("tests/hostile-vectors")
            .join(format!("{case}.json"));
        let mut raw: Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        // Aim at this test's own victims, wherever the temp dir is.
        let text = raw.to_string().replace(
            "/tmp/hcpspec-hostile-PATCHED.json",
            patched.to_str().unwrap(),
        );
        let text = text
            .replace("/tmp/hcpspec-hostile-VICTIM", victim.to_str().unwrap())
            .replace("/tmp/hcpspec-hostile-ABSOLUTE", victim.to_str().unwrap());
        raw = serde_json::from_str(&text).unwrap();
        let mut c: hcpspec::case::Case = serde_json::from_value(raw).unwrap();
        c.file = file;
        c.suite = "hostile".into();
        c.group = "99-hostile".into();
        let mut adapter = connect().unwrap();
        let r = hcpspec::suites::hcp::run_case(&c, adapter.as_mut(), &env, &Default::default());
        assert!(
            matches!(r.verdict, hcpspec::run::Verdict::Error { .. }),
            "{case}: {:?}",
            r.verdict
        );
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "keep me",
            "{case}"
        );
        assert_eq!(
            std::fs::read_to_string(&patched).unwrap(),
            "{\"a\": 1}",
            "{case}"
        );
        let seen = serde_json::to_string(&r).unwrap();
        assert!(
            !seen.contains("PATH="),
            "{case}: no outside file in the result"
        );
    }
    let _ = std::fs::remove_file(&victim);
    let _ = std::fs::remove_file(&patched);
}

#[test]
fn a_runtime_named_dotdot_with_a_7_mib_error_is_contained() {
    let dir = tempfile::tempdir().unwrap();
    let snaps = dir.path().join("a/snaps");
    let out = dir.path().join("out");
    let log = dir.path().join("methods.log");
    let shim = root().join("tests/fauxmplementations/hostile_shim.py");
    let spec = format!(
        "stdio:python3 {} --name .. --log {}",
        shim.display(),
        log.display()
    );
    let o = hcpspec(
        &[
            "run",
            "--runtime",
            &spec,
            "--filter",
            "04-confirm",
            "--jobs",
            "1",
            "--snapshots",
            snaps.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    let t = text(&o);
    assert_eq!(
        code(&o),
        1,
        "failures, not a crash: {}",
        &t[..t.len().min(4000)]
    );
    // Names are data: the snapshots stay in their folder, under a name that is not `..`.
    let beside: Vec<_> = std::fs::read_dir(dir.path().join("a"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(beside, vec![std::ffi::OsString::from("snaps")]);
    let runtimes: Vec<_> = std::fs::read_dir(&snaps)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(runtimes, vec!["_..".to_string()]);
    assert!(files(&snaps)
        .iter()
        .all(|(p, _)| p.starts_with("_../contract")));
    // Floods are cut, and every output keeps to its budget (and to 2 MiB for this run).
    let outputs = files(&out);
    assert!(outputs.len() >= 5, "{outputs:?}");
    for (p, len) in &outputs {
        assert!(*len < 2 << 20, "{}: {len} bytes", p.display());
    }
    for (p, len) in files(&snaps) {
        assert!(len < 256 << 10, "{}: {len} bytes", p.display());
    }
    let result = std::fs::read_to_string(out.join("result.json")).unwrap();
    assert!(
        result.contains(&format!("…[cut: {} bytes in all]", (7 << 20) + 8)),
        "the cut is marked with the full size"
    );
    let parsed: hcpspec::report::Report = serde_json::from_str(&result).unwrap();
    for (p, len) in &outputs {
        assert!(*len <= hcpspec::report::budget(&parsed), "{}", p.display());
    }
    // Escaped everywhere: no markup, no terminal escapes.
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        !html.contains("<script>alert(1)"),
        "HTML escapes the version"
    );
    assert!(!html.contains('\u{1b}'));
    let junit = std::fs::read_to_string(out.join("junit.xml")).unwrap();
    assert!(!junit.contains('\u{1b}') && !junit.contains('\u{7}'));
    assert!(
        !t.contains('\u{1b}') && !t.contains('\u{7}') && !t.contains('\r'),
        "terminal"
    );
    assert!(t.len() < 1 << 20, "terminal output: {} bytes", t.len());
    // One process, one `initialize`.
    let methods = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        methods.lines().filter(|m| *m == "initialize").count(),
        1,
        "{methods}"
    );
}

/// Transport parity names a runtime by its own name and version: its lines escape them as
/// every text from a runtime is (a version holding ESC, BEL and a CR followed by `::error` was
/// printed raw: a terminal acted on it, and a CI runner would read a workflow command).
#[test]
fn the_transport_parity_lines_escape_the_runtimes_name_and_version() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let shim = |size: &str| {
        format!(
            "stdio:python3 {} --name twin --size {size}",
            root()
                .join("tests/fauxmplementations/hostile_shim.py")
                .display()
        )
    };
    let (a, b) = (shim("10"), shim("20"));
    let o = hcpspec(
        &[
            "run",
            "--suite",
            "contract",
            "--filter",
            "contract::03-authorize::activate-and-connect-grants-allow-no-exec",
            "--jobs",
            "1",
            "--color",
            "never",
            "--out",
            out.to_str().unwrap(),
            "--runtime",
            &a,
            "--runtime",
            &b,
        ],
        &[],
    );
    let t = text(&o);
    assert!(
        t.contains("PARITY") && t.contains("transport parity: twin"),
        "{t}"
    );
    for bad in ['\u{1b}', '\u{7}', '\r'] {
        assert!(!t.contains(bad), "{bad:?} printed raw: {t}");
    }
}

/// A shim's or a harness's stderr line is kept up to a width: a secret straddling that cut (a
/// value of hcpspec's environment, a credential's shape) leaves none of its bytes behind in any
/// output. The line was cut first and redacted after, so its head was kept (10 bytes of the
/// value, 20 of the token).
#[test]
fn a_secret_straddling_the_cut_of_a_stderr_line_leaves_nothing_behind() {
    const SECRET: &str = "Zq9vLp3xWm7tKr2dYh5nBc8fJs4gTa6e";
    let fake = root().join("tests/fauxmplementations/straddling_stderr.py");
    for (suite, filter, runtime) in [
        (
            "contract",
            "contract::01-load::list-packs-lists-installed",
            format!("stdio:python3 {} shim 300", fake.display()),
        ),
        (
            "harness-api",
            "harness-api::01-transport::connects-to-the-listener-path",
            format!("exec:python3 {} harness 400", fake.display()),
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let o = hcpspec(
            &[
                "run",
                "--suite",
                suite,
                "--filter",
                filter,
                "--color",
                "never",
                "--out",
                out.to_str().unwrap(),
                "--runtime",
                &runtime,
            ],
            &[("STRADDLED_SECRET", SECRET)],
        );
        let mut all = text(&o);
        for (p, _) in files(&out) {
            all += &std::fs::read_to_string(p).unwrap_or_default();
        }
        assert!(
            all.contains("AAAAAAAAAA") && all.contains("BBBBBBBBBB"),
            "{suite}: the lines are shown: {all}"
        );
        for head in [&SECRET[..4], "ghp_Q"] {
            assert!(!all.contains(head), "{suite}: `{head}` left behind: {all}");
        }
    }
}

#[test]
fn a_leaky_runtime_is_a_verdict_naming_the_variable_never_a_copy_of_the_secret() {
    let v = vectors_with(&["leaky-env"]);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let snaps = dir.path().join("snaps");
    let run = |runtime: &str| {
        hcpspec(
            &[
                "run",
                "--runtime",
                runtime,
                "--vectors",
                v.path().to_str().unwrap(),
                "--snapshots",
                snaps.to_str().unwrap(),
                "--accept",
                "--out",
                out.to_str().unwrap(),
            ],
            &[("HCPSPEC_HOSTILE_CANARY", CANARY)],
        )
    };
    let o = run("inproc:reference");
    assert_eq!(code(&o), 0, "the reference keeps the secret: {}", text(&o));
    let o = run("inproc:mutant:inherited-env");
    let t = text(&o);
    assert_eq!(code(&o), 1, "the leak is a failure: {t}");
    assert!(!t.contains(CANARY), "terminal: {t}");
    assert!(t.contains("[redacted: $HCPSPEC_HOSTILE_CANARY]"), "{t}");
    for d in [&out, &snaps] {
        for (p, _) in files(d) {
            let body = std::fs::read_to_string(d.join(&p)).unwrap();
            assert!(!body.contains(CANARY), "{} holds the secret", p.display());
        }
    }
    let result = std::fs::read_to_string(out.join("result.json")).unwrap();
    assert!(result.contains("[redacted: $HCPSPEC_HOSTILE_CANARY]"));
}

#[test]
fn numbers_past_their_bounds_are_one_clear_line() {
    for args in [
        vec!["run", "--timeout", "1e20"],
        vec![
            "run",
            "--timeout",
            "1.8e19",
            "--runtime",
            "stdio:python3 -c 0",
        ],
        vec!["run", "--timeout", "NaN"],
        vec!["run", "--jobs", "0"],
        vec!["run", "--jobs", "18446744073709551616"],
        vec!["fuzz", "--runtime", "inproc:reference", "--seconds", "1e20"],
        vec!["fuzz", "--runtime", "inproc:reference", "--jobs", "100000"],
        vec!["bench", "--iterations", "0"],
    ] {
        let o = hcpspec(&args, &[]);
        let t = text(&o);
        assert_eq!(code(&o), 2, "{args:?}: {t}");
        assert!(!t.contains("panicked"), "{args:?}: {t}");
        assert!(
            t.contains(args[args.len() - 2]) || t.contains("--"),
            "{args:?}: {t}"
        );
    }
}

#[test]
fn bad_folders_and_file_names_are_named() {
    let o = hcpspec(&["list", "--vectors", "/nonexistent/hcpspec-vectors"], &[]);
    assert_eq!(code(&o), 2);
    assert!(
        text(&o).contains("/nonexistent/hcpspec-vectors") && !text(&o).contains("denials.json:"),
        "{}",
        text(&o)
    );
    // A case file whose name is not UTF-8 is shown lossily, not as an empty name.
    use std::os::unix::ffi::OsStrExt;
    let v = vectors_with(&[]);
    let name = std::ffi::OsStr::from_bytes(b"bad\xff.json");
    std::fs::copy(
        root().join("tests/hostile-vectors/fixture-missing.json"),
        v.path().join("contract/99-hostile").join(name),
    )
    .unwrap();
    let o = hcpspec(&["list", "--vectors", v.path().to_str().unwrap()], &[]);
    assert_eq!(code(&o), 2);
    assert!(text(&o).contains("bad\u{fffd}"), "{}", text(&o));
}

#[test]
fn the_markdown_heading_and_cells_are_escaped() {
    let r = hcpspec::report::RunResult {
        schema: String::new(),
        hcpspec_version: "0".into(),
        suite: "x\n## injected <b>bold</b> [link](http://evil)".into(),
        sections: vec![],
        cases_hash: "0".into(),
        runtimes: vec![],
        parity: vec![],
        strict_expectations: false,
        ci: false,
    };
    let md = hcpspec::report::markdown(&hcpspec::report::Report::of(vec![r]));
    let first = md.lines().next().unwrap();
    assert!(first.starts_with("## hcpspec x"), "{first}");
    assert!(!md.contains("\n## injected") && !md.contains("<b>") && !md.contains(" [link](http"));
}

/// A shim whose answer is a line that never ends (it would be gigabytes): the adapter reads it in
/// bounded chunks, cuts it at the message cap and says so, in bounded memory and time.
#[test]
fn an_endless_answer_line_is_cut_at_the_cap_in_bounded_memory() {
    let shim = root().join("tests/fauxmplementations/hostile_line.py");
    let spec = format!("stdio:python3 {} endless-line", shim.display());
    let out = tempfile::tempdir().unwrap();
    let t = std::time::Instant::now();
    let o = hcpspec(
        &[
            "run",
            "--runtime",
            &spec,
            "--filter",
            "01-load::",
            "--out",
            out.path().to_str().unwrap(),
        ],
        &[],
    );
    assert!(
        t.elapsed() < std::time::Duration::from_secs(60),
        "took {:?}",
        t.elapsed()
    );
    assert_ne!(code(&o), 0, "{}", text(&o));
    assert!(
        text(&o).contains("8 MiB"),
        "the cap is not named: {}",
        text(&o)
    );
}

/// hcpspec with `args`, killed (and the test failed) past `limit`.
fn hcpspec_within(args: &[&str], limit: std::time::Duration) -> Output {
    common::hcpspec_within(args, limit).0
}

/// Hostile arguments naming files and folders: each one line naming the argument or the file,
/// exit 2, before anything runs (nothing written), never a panic, a hang or exit 4.
#[test]
fn hostile_file_arguments_are_one_line_and_exit_2_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let malformed = dir.path().join("malformed.json");
    std::fs::write(&malformed, "{\"expectations\": [{\"case\": 3}]").unwrap();
    let fifo = dir.path().join("fifo.json");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let d = dir.path().to_str().unwrap();
    let (m, f) = (malformed.to_str().unwrap(), fifo.to_str().unwrap());
    let cases: &[(&[&str], &str)] = &[
        (&["--partition", "0/0"], "--partition 0/0"),
        (&["--partition", "3/2"], "--partition 3/2"),
        (
            &["--snapshots", "/dev/null"],
            "--snapshots /dev/null: not a directory",
        ),
        (
            &["--out", "/dev/null/x"],
            "--out /dev/null/x: /dev/null is not a directory",
        ),
        (&["--expectations", m], "malformed.json: line 1 column"),
        (&["--expectations", d], "not a regular file (a directory)"),
        (
            &["--expectations", "/dev/zero"],
            "/dev/zero: cannot read: not a regular file",
        ),
        (
            &["--expectations", f],
            "fifo.json: cannot read: not a regular file (a FIFO)",
        ),
        (&["--vectors", "Cargo.toml"], "Cargo.toml"),
    ];
    for (extra, says) in cases {
        let out = dir.path().join("out");
        let mut args = vec!["run", "--suite", "host"];
        args.extend_from_slice(extra);
        if !extra.contains(&"--out") {
            args.extend(["--out", out.to_str().unwrap()]);
        }
        let o = hcpspec_within(&args, std::time::Duration::from_secs(30));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(code(&o), 2, "{extra:?}: {err}");
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{extra:?}: one line: {err}"
        );
        assert!(err.contains(says), "{extra:?}: `{says}` in {err}");
        assert!(!err.contains("panicked"), "{extra:?}: {err}");
        assert!(!out.exists(), "{extra:?}: nothing ran, nothing written");
    }
    // `fuzz --out` (where findings go) is checked before it fuzzes.
    let o = hcpspec_within(
        &[
            "fuzz",
            "--suite",
            "host",
            "--runtime",
            "inproc:reference",
            "--seconds",
            "1",
            "--out",
            "/dev/null/x",
        ],
        std::time::Duration::from_secs(30),
    );
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(
        text(&o).contains("--out /dev/null/x: /dev/null is not a directory"),
        "{}",
        text(&o)
    );
    // `report --out` is checked as `run --out` is.
    let o = hcpspec_within(
        &["report", "Cargo.toml", "--out", "/dev/null"],
        std::time::Duration::from_secs(30),
    );
    assert_eq!(code(&o), 2, "{}", text(&o));
    assert!(
        text(&o).contains("--out /dev/null: not a directory"),
        "{}",
        text(&o)
    );
}

/// A vectors folder with the real denials and fixture packs, suite `suite`'s suite.json and
/// only the given hostile cases (in a group of their own).
fn suite_vectors_with(suite: &str, cases: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let v = root().join("vectors");
    std::fs::copy(v.join("denials.json"), dir.path().join("denials.json")).unwrap();
    common::copy_dir(&v.join("packs"), &dir.path().join("packs"));
    let group = dir.path().join(suite).join("99-hostile");
    std::fs::create_dir_all(&group).unwrap();
    std::fs::copy(
        v.join(suite).join("suite.json"),
        dir.path().join(suite).join("suite.json"),
    )
    .unwrap();
    for c in cases {
        std::fs::copy(
            root()
                .join("tests/hostile-vectors")
                .join(format!("{c}.json")),
            group.join(format!("{c}.json")),
        )
        .unwrap();
    }
    dir
}

/// Schema-valid but type-invalid case content, found by mutating real cases to wrong types at
/// every JSON pointer: each was an `error` (or `unimplemented`) verdict mid-run, exit 1, or a
/// silent skip; each is now refused at load, one line naming the file and the pointer, exit 2,
/// nothing run.
const TYPE_INVALID: &[(&str, &str, &str)] = &[
    (
        "host",
        "host-session-number",
        "/host/steps/1/params/session",
    ),
    (
        "host",
        "host-tenant-number",
        "/host/steps/0/params/request/tenantId",
    ),
    ("host", "host-shape-empty", "/host/target/rigs/shape"),
    ("core-api", "core-discover-string", "/script/start/discover"),
    ("core-api", "core-policy-map", "/script/start/policy"),
    (
        "core-api",
        "core-connection-unopened",
        "/script/steps/5/request/on",
    ),
    ("core-api", "core-control-empty", "/script/steps/1/control"),
    // These two were no error but a silent skip (exit 0): the harness was offered no tool.
    (
        "harness-api",
        "harness-turn-mcp-string",
        "/scenario/turn/mcp",
    ),
    (
        "harness-api",
        "harness-http-tool-empty",
        "/scenario/model/0/toolCalls/0/http",
    ),
    // Steps without `expect` are arrangement: a case of nothing else would pass anything.
    ("host", "host-nothing-expected", "/host/steps"),
    ("core-api", "core-nothing-expected", "/script/steps"),
    // Judged against a cadence it was not told: a harness renewing every 5 s as told is dropped.
    (
        "harness-api",
        "harness-untold-cadence",
        "/scenario/timers/renewEveryMs",
    ),
];

#[test]
fn type_invalid_case_content_is_refused_at_load() {
    let mut wrong = Vec::new();
    for (suite, case, pointer) in TYPE_INVALID {
        let v = suite_vectors_with(suite, &[case]);
        let out = tempfile::tempdir().unwrap();
        let o = hcpspec_within(
            &[
                "run",
                "--suite",
                suite,
                "--vectors",
                v.path().to_str().unwrap(),
                "--out",
                out.path().to_str().unwrap(),
            ],
            std::time::Duration::from_secs(60),
        );
        let t = text(&o);
        let named = format!("99-hostile/{case}.json:{pointer}: ");
        if code(&o) != 2
            || t.trim_end().lines().count() != 1
            || !t.contains(&named)
            || !files(out.path()).is_empty()
        {
            wrong.push(format!(
                "{case}: exit {}, not one line naming {pointer} (or it ran): {}",
                code(&o),
                t.lines().last().unwrap_or("")
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
