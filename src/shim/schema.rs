//! The schemas of the shim protocol, `vectors/schemas/shim/`: one file per method with
//! `$defs/params` and `$defs/result`, shared values in `common.schema.json`, the JSON-RPC
//! frames in `jsonrpc.schema.json`. Embedded, compiled once, used by every adapter to check
//! both directions of every call.

use jsonschema::{Resource, Validator};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::OnceLock;

const BASE: &str = "https://hcpspec.dev/schemas/shim/";

macro_rules! files {
    ($($name:literal),+ $(,)?) => {
        /// (file name, text) of every schema of the protocol.
        pub const FILES: &[(&str, &str)] = &[$(($name, include_str!(concat!("../../vectors/schemas/shim/", $name)))),+];
    };
}

files!(
    "common.schema.json",
    "jsonrpc.schema.json",
    "initialize.schema.json",
    "runtime.create.schema.json",
    "runtime.activate.schema.json",
    "runtime.connect.schema.json",
    "runtime.exec.schema.json",
    "runtime.listPacks.schema.json",
    "runtime.getPack.schema.json",
    "runtime.skill.schema.json",
    "runtime.cli.schema.json",
    "runtime.availability.schema.json",
    "runtime.sense.schema.json",
    "runtime.senseSink.schema.json",
    "runtime.audit.schema.json",
    "runtime.setSense.schema.json",
    "runtime.grants.schema.json",
    "runtime.dispose.schema.json",
    "pack.check.schema.json",
    "shutdown.schema.json",
);

/// The methods of `hcpspec-shim/1`, in the order the protocol document lists them.
pub const METHODS: &[&str] = &[
    "initialize",
    "runtime.create",
    "runtime.activate",
    "runtime.connect",
    "runtime.exec",
    "runtime.listPacks",
    "runtime.getPack",
    "runtime.skill",
    "runtime.cli",
    "runtime.availability",
    "runtime.sense",
    "runtime.senseSink",
    "runtime.audit",
    "runtime.setSense",
    "runtime.grants",
    "runtime.dispose",
    "pack.check",
    "shutdown",
];

/// The methods every shim must implement: answering -32601 to one of these is a broken shim
/// (an error verdict), not an optional feature left out (a skip).
pub const REQUIRED: &[&str] = &[
    "initialize",
    "runtime.create",
    "runtime.activate",
    "runtime.connect",
    "runtime.exec",
    "runtime.dispose",
    "shutdown",
];

/// Which half of a call a schema describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Part {
    Params,
    Result,
}

impl Part {
    fn def(self) -> &'static str {
        match self {
            Part::Params => "params",
            Part::Result => "result",
        }
    }
}

struct Compiled {
    calls: BTreeMap<(&'static str, Part), Validator>,
    response: Validator,
}

fn compiled() -> &'static Compiled {
    static C: OnceLock<Compiled> = OnceLock::new();
    C.get_or_init(|| {
        // The schemas are part of this crate; a broken one is a build defect, caught by `cargo test`.
        let resources: Vec<(String, Value)> = FILES
            .iter()
            .map(|(name, text)| {
                let v: Value = serde_json::from_str(text)
                    .unwrap_or_else(|e| panic!("shim schema {name}: {e}"));
                (format!("{BASE}{name}"), v)
            })
            .collect();
        let build = |target: String| -> Validator {
            jsonschema::options()
                .with_draft(jsonschema::Draft::Draft202012)
                .with_resources(
                    resources
                        .iter()
                        .map(|(uri, v)| (uri.clone(), Resource::from_contents(v.clone()))),
                )
                .build(&json!({ "$ref": target }))
                .unwrap_or_else(|e| panic!("shim schema {target}: {e}"))
        };
        let mut calls = BTreeMap::new();
        for &m in METHODS {
            for part in [Part::Params, Part::Result] {
                calls.insert(
                    (m, part),
                    build(format!("{BASE}{m}.schema.json#/$defs/{}", part.def())),
                );
            }
        }
        Compiled {
            calls,
            response: build(format!("{BASE}jsonrpc.schema.json#/$defs/response")),
        }
    })
}

/// The first violation of `value` as the `params` or `result` of `method`: (JSON pointer,
/// message). A method outside the protocol has no schema and passes.
pub fn check(method: &str, part: Part, value: &Value) -> Option<(String, String)> {
    let v = compiled().calls.get(&(method, part))?;
    first(v, value)
}

/// The first violation of a JSON-RPC 2.0 response frame.
pub fn check_response(frame: &Value) -> Option<(String, String)> {
    first(&compiled().response, frame)
}

fn first(v: &Validator, value: &Value) -> Option<(String, String)> {
    // The fast path: `is_valid` short-circuits and builds no errors; most messages are valid.
    if v.is_valid(value) {
        return None;
    }
    v.iter_errors(value).next().map(|e| {
        let p = e.instance_path().to_string();
        (
            if p.is_empty() { "/".to_string() } else { p },
            e.to_string(),
        )
    })
}

/// Compile every schema now (a broken schema panics here rather than mid-run).
pub fn warm() {
    compiled();
}
