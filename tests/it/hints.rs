//! Shim wiring mistakes a first shim makes (docs/shim-protocol.md, "When the shim does not
//! connect"): each ends in the error line the run already gives, with one hint that says what
//! to do, and the exit code the mistake always had.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn faux(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fauxmplementations")
        .join(name)
}

/// `hcpspec ARGS` run in `dir`.
fn hcpspec_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hcpspec"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("hcpspec runs")
}

/// `hcpspec run --runtime RUNTIME ARGS` in a fresh folder: its exit code and what it printed.
fn run(runtime: &str, args: &[&str]) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    run_in(dir.path(), runtime, args)
}

fn run_in(dir: &Path, runtime: &str, args: &[&str]) -> (i32, String) {
    let out = dir.join("out");
    let mut all = vec!["run", "--runtime", runtime, "--out", out.to_str().unwrap()];
    all.extend(args);
    let o = hcpspec_in(dir, &all);
    (o.status.code().unwrap_or(-1), super::cli::text(&o))
}

fn shim(mode: &str) -> String {
    format!("stdio:python3 {} {mode}", faux("miswired.py").display())
}

#[test]
fn a_log_line_on_stdout_says_logs_go_to_stderr() {
    let (code, said) = run(&shim("logs"), &["--suite", "contract"]);
    assert_eq!(code, 3, "{said}");
    assert!(said.contains("\"starting toy shim 0.3.0\""), "{said}");
    assert!(
        said.contains("stdout is for JSON-RPC messages only, logs go to stderr"),
        "{said}"
    );
}

/// Mid-run, the hint is in the case's error, so every rendering (result.json here) shows it.
#[test]
fn a_debug_line_among_answers_says_so_in_the_cases_error() {
    let dir = tempfile::tempdir().unwrap();
    let filter = "*01-load::duplicate-pack-id-rejected";
    let (code, said) = run_in(dir.path(), &shim("chatty"), &["--filter", filter]);
    assert_eq!(code, 1, "{said}");
    let result = std::fs::read_to_string(dir.path().join("out/result.json")).unwrap();
    assert!(
        // As JSON escapes the quote that ends the line quoted.
        result.contains(r#"debug: got runtime.create\"; hint: stdout is for JSON-RPC messages only, logs go to stderr"#),
        "{result}"
    );
}

#[test]
fn a_shim_that_never_flushes_is_asked_whether_it_flushed() {
    let (code, said) = run(&shim("noflush"), &["--suite", "contract", "--timeout", "1"]);
    // Only a hint: the verdict stays what it was, no answer within the deadline.
    assert_eq!(code, 3, "{said}");
    assert!(
        said.contains("no answer within 1 s (received nothing)"),
        "{said}"
    );
    assert!(
        said.contains("did it flush stdout? (python: print(..., flush=True) or -u)"),
        "{said}"
    );
}

#[test]
fn a_shim_named_without_its_folder_is_told_dot_slash() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(faux("miswired.py"), dir.path().join("toy.py")).unwrap();
    let (code, said) = run_in(dir.path(), "stdio:toy.py", &["--suite", "contract"]);
    assert_eq!(code, 3, "{said}");
    assert!(said.contains("No such file"), "{said}");
    assert!(
        said.contains("`toy.py` is in the current folder, not on PATH: say `./toy.py`"),
        "{said}"
    );
}

#[test]
fn a_shim_that_is_not_executable_is_told_chmod_or_its_interpreter() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let toy = dir.path().join("toy.py");
    std::fs::copy(faux("miswired.py"), &toy).unwrap();
    std::fs::set_permissions(&toy, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (code, said) = run_in(dir.path(), "stdio:./toy.py", &["--suite", "contract"]);
    assert_eq!(code, 3, "{said}");
    assert!(said.contains("Permission denied"), "{said}");
    assert!(
        said.contains(
            "`./toy.py` is not executable: chmod +x ./toy.py, or run it through its interpreter (stdio:python3 ./toy.py)"
        ),
        "{said}"
    );
}

#[test]
fn an_old_protocol_version_names_the_one_stated_and_those_spoken() {
    let (code, said) = run(&shim("old"), &["--suite", "contract"]);
    assert_eq!(code, 3, "{said}");
    assert!(
        said.contains(
            "initialize states protocol \"hcpspec-shim/0\"; hcpspec speaks hcpspec-shim/1, hcpspec-shim/2 (docs/CHANGELOG.md)"
        ),
        "{said}"
    );
}

fn embedded(runtime: &str) -> String {
    format!(
        "stdio:{} shim --transport stdio --runtime {runtime}",
        env!("CARGO_BIN_EXE_hcpspec")
    )
}

#[test]
fn a_shim_of_another_suite_is_told_which_suite_it_looks_like() {
    for (runtime, suite, want) in [
        ("host:reference", "contract", "--suite host"),
        ("core:reference", "contract", "--suite core-api"),
        ("reference", "host", "--suite contract"),
        ("host:reference", "core-api", "--suite host"),
    ] {
        let (code, said) = run(&embedded(runtime), &["--suite", suite]);
        assert_eq!(code, 3, "{runtime} under {suite}: {said}");
        assert!(
            said.contains(&format!(
                "it looks like a shim of another suite: run it with {want}"
            )),
            "{runtime} under {suite}: {said}"
        );
    }
}

#[test]
fn fuzz_given_a_harness_names_the_runtimes_it_takes() {
    let dir = tempfile::tempdir().unwrap();
    let o = hcpspec_in(
        dir.path(),
        &["fuzz", "--runtime", "exec:./harness", "--cases", "1"],
    );
    let said = super::cli::text(&o);
    assert_eq!(o.status.code(), Some(2), "{said}");
    assert!(
        said.contains("--runtime exec:./harness: exec: names a harness, fuzzed with --suite harness-api; the contract's fuzzer (and core-api's and host's) takes inproc:NAME, stdio:'CMD ARGS', http://HOST:PORT or ws://HOST:PORT/PATH"),
        "{said}"
    );
}

/// `run` given a harness's `exec:` under a suite that drives a shim says which suite launches
/// it, and what this one takes.
#[test]
fn run_given_a_harness_under_a_shim_suite_says_which_suite_launches_it() {
    let dir = tempfile::tempdir().unwrap();
    for suite in ["contract", "core-api", "host"] {
        let o = hcpspec_in(
            dir.path(),
            &["run", "--suite", suite, "--runtime", "exec:./harness"],
        );
        let said = super::cli::text(&o);
        assert_eq!(o.status.code(), Some(2), "{suite}: {said}");
        assert!(
            said.contains("exec: launches a harness, certified with --suite harness-api"),
            "{suite}: {said}"
        );
    }
}

#[test]
fn a_filter_glob_that_matches_no_whole_name_suggests_one_that_does() {
    let dir = tempfile::tempdir().unwrap();
    let o = hcpspec_in(dir.path(), &["list", "--filter", "01-load*"]);
    let said = super::cli::text(&o);
    assert_eq!(o.status.code(), Some(2), "{said}");
    assert!(
        said.contains("--filter 01-load* matches no case: a glob matches the whole name (contract::01-load::…); --filter '*01-load*' matches "),
        "{said}"
    );
    // A typo: the closest names, each a filter that matches.
    let o = hcpspec_in(dir.path(), &["list", "--filter", "01-lood"]);
    let said = super::cli::text(&o);
    assert_eq!(o.status.code(), Some(2), "{said}");
    assert!(
        said.contains("--filter 01-lood matches no case; closest: 01-load"),
        "{said}"
    );
}

#[test]
fn a_shim_without_a_working_shebang_is_told_what_its_first_line_lacks() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let body = std::fs::read_to_string(faux("miswired.py")).unwrap();
    let rest = body.split_once('\n').unwrap().1;
    for (name, head, want) in [
        (
            "bare.py",
            String::new(),
            "hint: `./bare.py` has no `#!` line: add one (`#!/usr/bin/env python3`), or run it through its interpreter (stdio:python3 ./bare.py)",
        ),
        (
            "gone.py",
            "#!/nonexistent/python9\n".to_string(),
            "hint: `./gone.py` is there, but the interpreter its `#!/nonexistent/python9` names is not",
        ),
    ] {
        let p = dir.path().join(name);
        std::fs::write(&p, format!("{head}{rest}")).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        // The core-api suite's shim is started the same way (one process per case).
        for suite in ["contract", "core-api"] {
            let (code, said) = run_in(dir.path(), &format!("stdio:./{name}"), &["--suite", suite]);
            assert_eq!(code, 3, "{name} {suite}: {said}");
            assert!(said.contains(want), "{name} {suite}: {said}");
        }
    }
}
