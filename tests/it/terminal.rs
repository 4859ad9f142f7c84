//! What `hcpspec run` prints on a terminal, read as a user reads it (issue 46): the verdict
//! last (the table, at most 80 columns, then the exit's reason), each cause once with its
//! count, and for each failure a command that reruns that case alone.

use std::path::Path;
use std::process::{Command, Stdio};

/// A shim that answers `initialize` and `shutdown`, and -32601 to everything else.
const NOTHING: &str = r#"import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m: continue
    if m["method"] == "initialize":
        r = {"jsonrpc":"2.0","id":m["id"],"result":{"protocol":"hcpspec-shim/2","runtime":{"name":"toy","version":"0.3.0"},"features":[]}}
    elif m["method"] == "shutdown":
        r = {"jsonrpc":"2.0","id":m["id"],"result":{}}
    else:
        r = {"jsonrpc":"2.0","id":m["id"],"error":{"code":-32601,"message":"method not found"}}
    print(json.dumps(r), flush=True)
"#;

/// `hcpspec ARGS` with stdout and stderr into one file, as a terminal shows them: its exit
/// code and what it printed, in order.
fn run(args: &[String], dir: &Path) -> (i32, String) {
    let log = dir.join("log.txt");
    let file = std::fs::File::create(&log).unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_hcpspec"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::from(file.try_clone().unwrap()))
        .stderr(Stdio::from(file))
        .status()
        .expect("hcpspec runs");
    (
        status.code().unwrap_or(-1),
        std::fs::read_to_string(&log).unwrap(),
    )
}

fn words(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

/// The printed `rerun:` command of `name`, run with `--out` into `dir`: the names of the cases
/// it ran.
fn rerun(printed: &str, name: &str, dir: &Path) -> Vec<String> {
    let line = printed
        .lines()
        .skip_while(|l| !l.ends_with(&format!(" {name}")) && !l.contains(&format!(" {name} (")))
        .find(|l| l.trim_start().starts_with("rerun:"))
        .unwrap_or_else(|| panic!("no rerun command for {name}:\n{printed}"));
    let command = line.trim_start().strip_prefix("rerun:").unwrap().trim();
    let mut argv = shell_words::split(command).unwrap();
    assert_eq!(argv.remove(0), "hcpspec", "{command}");
    let out = dir.join("rerun");
    argv.extend(["--out".into(), out.display().to_string()]);
    let (_, text) = run(&argv, dir);
    let result: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("result.json"))
            .unwrap_or_else(|e| panic!("{command}: {e}\n{text}")),
    )
    .unwrap();
    result["suites"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["runtimes"].as_array().unwrap())
        .flat_map(|r| r["cases"].as_array().unwrap())
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_shim_answering_32601_is_one_cause_and_the_run_ends_with_its_table_and_exit() {
    let dir = tempfile::tempdir().unwrap();
    let shim = dir.path().join("nothing.py");
    std::fs::write(&shim, NOTHING).unwrap();
    let runtime = format!("stdio:python3 {}", shim.display());
    let out = dir.path().join("out");
    let (code, printed) = run(
        &words(&[
            "run",
            "--suite",
            "contract",
            "--runtime",
            &runtime,
            "--out",
            out.to_str().unwrap(),
        ]),
        dir.path(),
    );
    assert_eq!(code, 1, "{printed}");
    // One cause line, with its count, for every case the missing runtime.create stops.
    let causes: Vec<&str> = printed
        .lines()
        .filter(|l| l.contains("× runtime.create is not implemented"))
        .collect();
    assert_eq!(causes.len(), 1, "{printed}");
    let count: usize = causes[0].split('×').next().unwrap().trim().parse().unwrap();
    assert!(count > 185, "{}", causes[0]);
    // One block in full per cause, not one per case; the assumption not repeated.
    let blocks = printed.lines().filter(|l| l.starts_with("ERROR ")).count();
    assert_eq!(blocks, 1, "{printed}");
    assert!(printed.matches("  assumption: ").count() <= 2, "{printed}");
    // The counts agree with result.json.
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("result.json")).unwrap()).unwrap();
    let summary = &result["suites"][0]["runtimes"][0]["summary"];
    let failing = summary["must_fail"].as_u64().unwrap();
    assert!(
        printed.contains(&format!(
            "FAILED: {failing} of 265 case(s) fail the run (exit 1)"
        )),
        "{printed}"
    );
    // It ends with the table, then the exit's reason.
    let lines: Vec<&str> = printed.lines().collect();
    assert!(lines.last().unwrap().starts_with("FAILED: "), "{printed}");
    let header = lines
        .iter()
        .rposition(|l| l.starts_with("  section "))
        .unwrap();
    let tail = &lines[header..];
    assert!(
        tail.iter().any(|l| l.trim_start().starts_with("total ")),
        "{printed}"
    );
    let total: Vec<u64> = tail
        .iter()
        .find(|l| l.trim_start().starts_with("total "))
        .unwrap()
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    let heads: Vec<&str> = tail[0].split_whitespace().skip(1).collect();
    let error = heads.iter().position(|h| *h == "error").unwrap();
    assert_eq!(
        total[error],
        summary["error"].as_u64().unwrap(),
        "{printed}"
    );
    for l in tail {
        assert!(l.chars().count() <= 80, "a line wraps at 80 columns: {l}");
    }
    assert!(
        !tail
            .iter()
            .any(|l| l.starts_with("ERROR") || l.contains(" × ")),
        "nothing but the table and the exit after the table: {printed}"
    );
    // Without a terminal, no line per case.
    assert!(
        !printed.contains("hcpspec: stdio:"),
        "a progress line per case: {printed}"
    );
    // The printed rerun command runs that case alone.
    let first = printed
        .lines()
        .find(|l| l.starts_with("ERROR "))
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap();
    assert_eq!(rerun(&printed, first, dir.path()), vec![first.to_string()]);
}

/// A case whose name another case's name contains: the printed command reruns it alone, and
/// `hcpspec explain` explains it.
#[test]
fn the_rerun_command_selects_its_case_alone() {
    let dir = tempfile::tempdir().unwrap();
    let name = "contract::07-sandbox::sandbox-unlisted-bin-denied";
    let out = dir.path().join("out");
    let (code, printed) = run(
        &words(&[
            "run",
            "--suite",
            "contract",
            "--runtime",
            "inproc:mutant:unknown-bin-allowed",
            "--name",
            "loose",
            "--filter",
            &format!("*{name}"),
            "--out",
            out.to_str().unwrap(),
        ]),
        dir.path(),
    );
    assert_eq!(code, 1, "{printed}");
    // `--filter NAME` alone would run two cases: this and the one whose name contains it.
    assert!(
        !printed.contains(&format!("{name}-for-confirmed-write")),
        "{printed}"
    );
    assert_eq!(rerun(&printed, name, dir.path()), vec![name.to_string()]);
    assert!(
        printed.contains("--name loose"),
        "the rerun keeps the runtime's label: {printed}"
    );
    let explain = printed
        .lines()
        .find(|l| l.trim_start().starts_with("explain:"))
        .unwrap();
    let mut argv =
        shell_words::split(explain.trim_start().strip_prefix("explain:").unwrap()).unwrap();
    assert_eq!(argv.remove(0), "hcpspec");
    let (code, said) = run(&argv, dir.path());
    assert_eq!(code, 0, "{said}");
}
