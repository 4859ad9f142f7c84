//! What to do about a shim wiring mistake, in one clause added to the error it ends in
//! (docs/shim-protocol.md, "When the shim does not connect"). A hint never changes a verdict or
//! an exit code; it only says what the error most likely means.

use super::CallError;
use serde_json::{json, Value};
use std::path::Path;

/// After a line on stdout that is no JSON-RPC message (a log line, debug output).
pub const STRAY: &str = "hint: stdout is for JSON-RPC messages only, logs go to stderr";

/// After a deadline passed with not a byte ever read from the shim's stdout: most often its
/// answer sits in a block buffer (stdout to a pipe is block-buffered in most languages).
pub const FLUSH: &str = "hint: the shim never wrote to stdout: did it flush stdout? (python: print(..., flush=True) or -u)";

/// Each suite's first method and the protocol its answer states: how a shim of one suite run
/// under another is recognised.
const FIRST: &[(&str, &str, &str)] = &[
    ("initialize", "hcpspec-shim/", "contract"),
    ("core.describe", "hcpspec-core/", "core-api"),
    ("host.describe", "hcpspec-host/", "host"),
];

/// The suite whose protocol `stated` is a version of, when that is not the suite of
/// `first` (the first method it was asked).
pub fn suite_of(stated: &str, first: &str) -> Option<&'static str> {
    FIRST
        .iter()
        .find(|(m, p, _)| stated.starts_with(p) && *m != first)
        .map(|(_, _, suite)| *suite)
}

/// The hint for a shim stating `stated` to `first`, when that is another suite's protocol.
pub fn stated(stated: &str, first: &str) -> String {
    suite_of(stated, first).map_or(String::new(), |s| {
        format!("; hint: it looks like a shim of another suite: run it with --suite {s}")
    })
}

/// After a shim answered "method not found" to `asked`, its suite's first method: the other
/// suites' first methods, asked on the same connection (it still answers); the hint names the
/// suite of the first one answered with a protocol of that suite. None when none is.
pub fn other_suite(
    asked: &str,
    call: &mut dyn FnMut(&str, Value) -> Result<Value, CallError>,
) -> Option<String> {
    FIRST
        .iter()
        .filter(|(m, _, _)| *m != asked)
        .find_map(|(method, protocol, suite)| {
            let params = match *method {
                "initialize" => crate::shim::greeting(),
                _ => json!({}),
            };
            let said = call(method, params).ok()?;
            let said = said["protocol"].as_str().filter(|p| p.starts_with(protocol))?;
            Some(format!(
                "hint: it looks like a shim of another suite: run it with --suite {suite} (it answers {method} stating {})",
                crate::snapshot::contain_text(&json!(said).to_string())
            ))
        })
}

/// Why `program` could not be started, in words of what to do: `./` before a file of the
/// current folder, `chmod +x` or an interpreter, a `#!` line. None when there is nothing to add.
pub fn spawn(program: &str, e: &std::io::Error) -> Option<String> {
    let path = Path::new(program);
    let named = program.contains('/');
    match e.raw_os_error()? {
        libc::ENOENT if !named && path.is_file() => Some(format!(
            "hint: `{program}` is in the current folder, not on PATH: say `./{program}`"
        )),
        // The file is there: what is missing is the interpreter its `#!` line names.
        libc::ENOENT if named && path.is_file() => shebang(path).map(|line| {
            format!("hint: `{program}` is there, but the interpreter its `{line}` names is not")
        }),
        libc::EACCES if path.is_dir() => Some(format!(
            "hint: `{program}` is a folder; name the shim's program"
        )),
        libc::EACCES if path.is_file() => Some(format!(
            "hint: `{program}` is not executable: chmod +x {program}, or run it through its interpreter (stdio:{} {program})",
            interpreter(path)
        )),
        libc::ENOEXEC => Some(format!(
            "hint: `{program}` has no `#!` line: add one (`#!/usr/bin/env {0}`), or run it through its interpreter (stdio:{0} {program})",
            interpreter(path)
        )),
        _ => None,
    }
}

/// The file's `#!` line, if it has one (its first 200 bytes at most).
fn shebang(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut head = [0u8; 200];
    let n = std::fs::File::open(path).ok()?.read(&mut head).ok()?;
    let first = head[..n].split(|&b| b == b'\n').next()?;
    let line = String::from_utf8_lossy(first).trim_end().to_string();
    line.starts_with("#!").then_some(line)
}

/// The interpreter a script runs under: its `#!` line's (past `env` and its flags), else one
/// its extension names, else a placeholder.
fn interpreter(path: &Path) -> String {
    if let Some(line) = shebang(path) {
        let mut words = line[2..].split_whitespace();
        let first = words.next().unwrap_or_default();
        let name = first.rsplit('/').next().unwrap_or_default();
        let name = if name == "env" {
            words.find(|w| !w.starts_with('-')).unwrap_or_default()
        } else {
            name
        };
        if !name.is_empty() {
            return name.to_string();
        }
    }
    match path.extension().and_then(|x| x.to_str()) {
        Some("py") => "python3",
        Some("js" | "mjs" | "cjs") => "node",
        Some("ts") => "deno run",
        Some("rb") => "ruby",
        Some("pl") => "perl",
        Some("sh") => "sh",
        _ => "INTERPRETER",
    }
    .to_string()
}

/// Whether a line read from a shim's stdout can be a JSON-RPC message: an object naming
/// `jsonrpc` or an `id` (an answer that forgot `jsonrpc` is not a log line). A cheap look, for
/// the hint only; the line is judged elsewhere.
pub fn jsonrpc_like(line: &[u8]) -> bool {
    let names = |member: &[u8]| memchr::memmem::find(line, member).is_some();
    line.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
        && (names(b"\"jsonrpc\"") || names(b"\"id\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scripts_interpreter_is_its_shebangs_past_env() {
        let dir = tempfile::tempdir().unwrap();
        for (head, name, want) in [
            ("#!/usr/bin/env python3\n", "a", "python3"),
            ("#!/usr/bin/env -S node --flag\n", "b", "node"),
            ("#!/bin/bash -e\n", "c", "bash"),
            ("print(1)\n", "d.py", "python3"),
            ("x\n", "e", "INTERPRETER"),
        ] {
            let p = dir.path().join(name);
            std::fs::write(&p, head).unwrap();
            assert_eq!(interpreter(&p), want, "{head}");
        }
        assert!(jsonrpc_like(br#" {"jsonrpc":"2.0","id":1,"result":{}}"#));
        assert!(!jsonrpc_like(b"starting"));
        assert!(!jsonrpc_like(br#"{"level":"info"}"#));
        assert!(jsonrpc_like(br#"{"id":1,"result":{}}"#));
        assert_eq!(suite_of("hcpspec-host/2", "initialize"), Some("host"));
        assert_eq!(suite_of("hcpspec-shim/0", "initialize"), None);
    }
}
