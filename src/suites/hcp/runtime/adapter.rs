//! Contract point 6 (execute the Adapter) and the process half of point 7 (sandbox): render
//! the argv from the command's template, resolve the wrap bin, spawn it without a shell.
//! Shared by the reference and the stub; the reference's mutants choose other inputs here.

use super::Denied;
use crate::suites::hcp::pack::Pack;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Arguments that drive the confirm gate; they never reach an adapter (assumption).
pub const GATE_ARGS: &[&str] = &["confirm", "apply"];

/// Longest an adapter may run before it is killed and the exec fails.
const ADAPTER_DEADLINE: Duration = Duration::from_secs(10);
const OUTPUT_CAP: usize = 1 << 20;

static SPAWNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Adapter processes spawned by this process so far (the bench reports them apart).
pub fn spawns() -> u64 {
    SPAWNS.load(std::sync::atomic::Ordering::Relaxed)
}

/// The argv for `verb_key`: each template element becomes exactly one argument, `{name}`
/// replaced by the exec arg of that name. With `pass_through`, `verb_key` then `--key=value`
/// for each arg in key order (assumption: the spec does not fix pass-through rendering).
pub fn render_argv(
    pack: &Pack,
    verb_key: &str,
    args: &Map<String, Value>,
) -> Result<Vec<String>, Denied> {
    if let Some(cmd) = pack.command(verb_key) {
        for (name, spec) in &cmd.args {
            if spec.required && !args.contains_key(name) {
                return Err(Denied(format!("invalid args: missing {name}")));
            }
        }
    }
    let wrap = &pack.surface.wrap;
    if let Some(named) = wrap.commands.get(verb_key) {
        return named
            .argv
            .iter()
            .map(|t| fill(t, args))
            .collect::<Result<_, String>>()
            .map_err(Denied);
    }
    if wrap.pass_through {
        let mut keys: Vec<&String> = args
            .keys()
            .filter(|k| !GATE_ARGS.contains(&k.as_str()))
            .collect();
        keys.sort();
        let mut argv = vec![verb_key.to_string()];
        argv.extend(
            keys.into_iter()
                .map(|k| format!("--{k}={}", text(&args[k]))),
        );
        return Ok(argv);
    }
    Err(Denied(format!("no wrap command for {verb_key}")))
}

fn fill(template: &str, args: &Map<String, Value>) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            break;
        };
        let name = &rest[open + 1..open + close];
        let value = args
            .get(name)
            .ok_or_else(|| format!("invalid args: missing {name}"))?;
        out.push_str(&rest[..open]);
        out.push_str(&text(value));
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Find a wrap bin on the runtime's bin path. A name with a path separator or `..` is unknown:
/// the allow-list names bins, never paths.
pub fn resolve_bin(name: &str, path: &[PathBuf]) -> Result<PathBuf, Denied> {
    if name.is_empty() || name.contains('/') || name.contains('\\') || name == "." || name == ".." {
        return Err(Denied(format!("denied: unknown bin {name}")));
    }
    path.iter()
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .ok_or_else(|| Denied(format!("denied: unknown bin {name}")))
}

/// The environment a sandboxed adapter gets: nothing inherited, only what it needs.
pub fn sandbox_env(
    path: &[PathBuf],
    pack_id: &str,
    verb_key: &str,
    token: Option<&str>,
) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    let joined = std::env::join_paths(path)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    env.insert("PATH".into(), joined);
    env.insert("HCP_PACK_ID".into(), pack_id.into());
    env.insert("HCP_VERB_KEY".into(), verb_key.into());
    if let Some(token) = token {
        // assumption: the minted Binding reaches the adapter as HCP_BINDING, and nowhere else.
        env.insert("HCP_BINDING".into(), token.into());
    }
    env
}

/// Spawn `program` with exactly `argv`, in `cwd`, with exactly `env`; no shell anywhere.
/// The result is `{exit_code, stdout}` with stdout parsed as JSON when it is JSON.
pub fn spawn(
    program: &Path,
    argv: &[String],
    cwd: &Path,
    env: &BTreeMap<String, String>,
) -> Result<Value, Denied> {
    SPAWNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut child = Command::new(program)
        .args(argv)
        .current_dir(cwd)
        .env_clear()
        .envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| Denied(format!("adapter failed to start: {e}")))?;
    let mut stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = (&mut stdout).take(OUTPUT_CAP as u64).read_to_end(&mut buf);
        let _ = tx.send(buf);
    });
    // stdout reaches EOF when the adapter exits (or closes it); past the deadline it is killed.
    let out = match rx.recv_timeout(ADAPTER_DEADLINE) {
        Ok(out) => out,
        Err(_) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err("adapter timed out".into());
        }
    };
    let status = child
        .wait()
        .map_err(|e| Denied(format!("adapter wait failed: {e}")))?;
    let text = String::from_utf8_lossy(&out);
    let stdout = serde_json::from_str::<Value>(text.trim())
        .unwrap_or_else(|_| Value::String(text.into_owned()));
    let code = status.code().unwrap_or(-1);
    let result = json!({ "exit_code": code, "stdout": stdout });
    if status.success() {
        Ok(result)
    } else {
        Err(Denied(format!("adapter exited with {code}")))
    }
}

/// In-process adapters the embedded runtimes register by name (`wrap.inproc`).
pub const INPROC: &[&str] = &["echo"];

pub fn inproc_known(handler: &str) -> Result<(), Denied> {
    if INPROC.contains(&handler) {
        Ok(())
    } else {
        Err(Denied(format!(
            "denied: unknown in-process adapter {handler}"
        )))
    }
}

/// The `echo` handler; any other name is unknown (the caller checks with `inproc_known`).
pub fn call_inproc(argv: &[String], bound: bool) -> Value {
    json!({ "argv": argv, "bound": bound })
}
