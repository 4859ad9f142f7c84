//! The probe (`hcpspec-probe`): the wrap bin of the fixture packs. It writes what it saw
//! (program name, argv, cwd, environment, and the contents of small files its variables name)
//! as JSON to the path given by its `report` option, and prints the
//! same JSON on stdout, so cases can check the rendered argv, the cwd jail and credential
//! isolation from outside the runtime. `exit` makes it exit with N after writing its report; `escape PATH` makes it try to write PATH and report whether it could (`escape.written`). An option may come as `--key VALUE`,
//! `--key=VALUE` or `key=VALUE`; the first `report` wins.
//! Every start also leaves a mark in its case's temp dir (`spawns/`), whatever its argv, so a
//! case sees that a bin ran during a step that expected a denial (a denial runs nothing).
//!
//! The same code answers as the `hcpspec-probe` binary and as `hcpspec` itself when started
//! under a name ending in `probe` (the runner links it so), so that `cargo run -- run` needs
//! no second binary built.

use std::collections::BTreeMap;

/// Run the probe with the process's argv; returns the exit code.
pub fn main() -> i32 {
    let mut args = std::env::args();
    let program = args.next().unwrap_or_default();
    let argv: Vec<String> = args.collect();
    let mut report_path = None;
    let mut escape_path = None;
    let mut exit = 0;
    // Options as `--key VALUE`, `--key=VALUE` or `key=VALUE`, so that the probe understands
    // any of the usual pass-through renderings.
    let option = |key: &str, i: usize, a: &str| -> Option<String> {
        if a == format!("--{key}") {
            return argv.get(i + 1).cloned();
        }
        a.strip_prefix(&format!("--{key}="))
            .or_else(|| a.strip_prefix(&format!("{key}=")))
            .map(String::from)
    };
    for (i, a) in argv.iter().enumerate() {
        if let Some(p) = option("report", i, a) {
            report_path.get_or_insert(p);
        } else if let Some(p) = option("escape", i, a) {
            escape_path.get_or_insert(p);
        } else if let Some(n) = option("exit", i, a) {
            exit = n.parse().unwrap_or(1);
        }
    }
    let env: BTreeMap<String, String> = std::env::vars_os()
        .map(|(k, v)| {
            (
                k.to_string_lossy().into_owned(),
                v.to_string_lossy().into_owned(),
            )
        })
        .collect();
    let cwd = std::env::current_dir()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let name = std::path::Path::new(&program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or(program);
    // A credential may come as a file the runtime names in a variable: report small files
    // that a variable points at, so a case can find a minted token however it was handed.
    let files: BTreeMap<&String, String> = env
        .iter()
        .filter(|(_, v)| v.starts_with('/'))
        .filter_map(|(k, v)| {
            let meta = std::fs::metadata(v).ok()?;
            (meta.is_file() && meta.len() <= 64 * 1024)
                .then(|| std::fs::read(v).ok())
                .flatten()
                .map(|b| (k, String::from_utf8_lossy(&b).into_owned()))
        })
        .collect();
    let mut report = serde_json::json!({ "program": name, "argv": argv, "cwd": cwd, "env": env });
    if !files.is_empty() {
        report["files"] = serde_json::json!(files);
    }
    if let Some(path) = escape_path {
        report["escape"] = escape(&path);
    }
    let text = report.to_string();
    record_spawn(&cwd, report_path.as_deref(), &text);
    if let Some(path) = report_path {
        if let Err(why) = writable(std::path::Path::new(&path)) {
            eprintln!("hcpspec-probe: will not write a report to {path}: {why}");
            return 3;
        }
        // Write then rename, so a reader never sees half a report.
        let tmp = format!("{path}.tmp{}", std::process::id());
        if std::fs::write(&tmp, &text)
            .and_then(|_| std::fs::rename(&tmp, &path))
            .is_err()
        {
            eprintln!("hcpspec-probe: cannot write report to {path}");
            return 3;
        }
    }
    println!("{text}");
    exit
}

/// The folder of a case's temp dir where every start of the probe leaves one file, whatever its
/// argv: a denial runs nothing, and a case sees a spawn even when no report was asked for.
pub const SPAWNS_DIR: &str = "spawns";

/// Leave a mark of this start in the case's temp dir, found from the cwd (the jail is under it)
/// or else the report's path; outside any case dir, nothing.
fn record_spawn(cwd: &str, report: Option<&str>, text: &str) {
    let case_dir = |p: &std::path::Path| -> Option<std::path::PathBuf> {
        let real = p.canonicalize().ok()?;
        real.ancestors()
            .find(|a| {
                a.file_name().is_some_and(|n| {
                    n.to_string_lossy()
                        .starts_with(crate::suites::hcp::CASE_DIR_PREFIX)
                })
            })
            .map(std::path::Path::to_path_buf)
    };
    let dir = case_dir(std::path::Path::new(cwd)).or_else(|| {
        let parent = std::path::Path::new(report?).parent()?;
        case_dir(parent)
    });
    if let Some(dir) = dir {
        let spawns = dir.join(SPAWNS_DIR);
        let _ = std::fs::create_dir_all(&spawns);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let _ = std::fs::write(
            spawns.join(format!("{}-{nanos}.json", std::process::id())),
            text,
        );
    }
}

/// The spawns recorded in a case's temp dir so far: each start's report (program, argv …).
pub fn spawns(case_dir: &std::path::Path) -> Vec<serde_json::Value> {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(case_dir.join(SPAWNS_DIR))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    files
        .iter()
        .filter_map(|f| serde_json::from_slice(&std::fs::read(f).ok()?).ok())
        .collect()
}

/// `escape`: try to write a file at `path` (outside the jail, as a case names it) and say whether
/// the write landed; a file written is removed again, so the case leaves nothing behind.
fn escape(path: &str) -> serde_json::Value {
    let p = std::path::Path::new(path);
    if let Err(why) = writable(p) {
        return serde_json::json!({ "path": path, "written": false, "error": why.to_string() });
    }
    match std::fs::write(p, "written by hcpspec-probe from inside the jail\n") {
        Ok(()) => {
            let _ = std::fs::remove_file(p);
            serde_json::json!({ "path": path, "written": true })
        }
        Err(e) => serde_json::json!({ "path": path, "written": false, "error": e.to_string() }),
    }
}

/// The probe writes only inside a case's temp dir (`hcpspec-case…`, made by the runner): a
/// case's exec args reach the probe's argv through the runtime, and `--report ~/.bashrc` must
/// not overwrite anything.
pub fn writable(path: &std::path::Path) -> Result<(), crate::error::BadInput> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    let real = parent
        .canonicalize()
        .map_err(|e| crate::error::BadInput(format!("{}: {e}", parent.display())))?;
    let in_case = real.components().any(|c| {
        c.as_os_str()
            .to_string_lossy()
            .starts_with(crate::suites::hcp::CASE_DIR_PREFIX)
    });
    if !in_case {
        return Err(crate::error::BadInput(format!(
            "{} is not inside a case's temp dir ({}…)",
            real.display(),
            crate::suites::hcp::CASE_DIR_PREFIX
        )));
    }
    if path.file_name().is_none() {
        return Err("no file name".into());
    }
    Ok(())
}

/// Was this process started as the probe (argv[0] ends in `probe`)?
pub fn invoked_as_probe() -> bool {
    std::env::args_os()
        .next()
        .and_then(|a| {
            std::path::Path::new(&a)
                .file_name()
                .map(|n| n.to_string_lossy().ends_with("probe"))
        })
        .unwrap_or(false)
}
