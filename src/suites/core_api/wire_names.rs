//! The core-api variant `other-wire-names`: a core whose schema names the members spec 004
//! names a format for but does not print (artifact.write's steps, an output's type, a transcript
//! entry, the http-calls body, session.mcp's snapshot) its own way. As v5's schemas are strict, it knows only its own
//! names there: a request carrying hcpspec's is refused as an unknown member. core.start answers
//! them as `names` (docs/core-protocol.md), so hcpspec speaks them. The rest of the reference
//! reads the reference's names: this is the edge that translates, written apart from hcpspec's
//! own renaming (`core_api::names`) so that neither can hide the other's mistake.

use crate::suites::world::role::UnknownMember;
use serde_json::{json, Map, Value};

/// (method or gate route, the path to the objects, `*` each item of a list, [(the reference's
/// name, this core's)]).
type Place = (
    &'static str,
    &'static [&'static str],
    &'static [(&'static str, &'static str)],
);

const WRITE: &[(&str, &str)] = &[
    ("op", "action"),
    ("uploadId", "upload"),
    ("offset", "at"),
    ("base64", "data"),
    ("size", "totalBytes"),
    // A folder upload's file step.
    ("path", "filePath"),
    ("sha256", "digest"),
];
const ENTRY: &[(&str, &str)] = &[("kind", "type"), ("text", "content")];

/// What this core reads in requests and gate bodies.
const READS: &[Place] = &[
    ("artifact.write", &[], WRITE),
    ("output", &[], &[("type", "end")]),
    ("output", &["transcript", "*", "entries", "*"], ENTRY),
    // The envelope first: the servers' path is in the reference's names once it is read.
    (
        "session.mcp",
        &["snapshot"],
        &[
            ("snapshotSchemaVersion", "schemaVersion"),
            ("servers", "connected"),
        ],
    ),
    (
        "session.mcp",
        &["snapshot", "servers", "*"],
        &[("name", "server"), ("tools", "listed")],
    ),
    (
        "http-calls",
        &[],
        &[
            ("effectId", "effect"),
            ("tool", "toolName"),
            ("arguments", "input"),
        ],
    ),
];

/// What it writes in its answers.
const WRITES: &[Place] = &[
    ("artifact.write", &[], &[("uploadId", "upload")]),
    ("transcript.read", &["entries", "*"], ENTRY),
];

/// core.start's `names`: by method or route, the reference's (hcpspec's) name → this core's.
pub fn declared() -> Value {
    let mut names = json!({});
    for (on, _, pairs) in READS.iter().chain(WRITES) {
        for (ours, theirs) in *pairs {
            names[*on][*ours] = json!(theirs);
        }
    }
    names
}

fn each_at(v: &mut Value, at: &[&str], f: &mut dyn FnMut(&mut Map<String, Value>)) {
    match (at.split_first(), v) {
        (None, Value::Object(o)) => f(o),
        (Some((&"*", rest)), Value::Array(xs)) => xs.iter_mut().for_each(|x| each_at(x, rest, f)),
        (Some((k, rest)), Value::Object(o)) => {
            if let Some(x) = o.get_mut(*k) {
                each_at(x, rest, f)
            }
        }
        _ => {}
    }
}

/// A request's params (or a gate's body) in the reference's names, for the reference to read;
/// the first of the reference's names found where this core has its own, refused.
pub fn read(on: &str, p: &Value) -> Result<Value, UnknownMember> {
    let mut p = p.clone();
    let mut unknown = None;
    for (_, at, pairs) in READS.iter().filter(|(o, _, _)| *o == on) {
        each_at(&mut p, at, &mut |o| {
            if let Some((ours, _)) = pairs.iter().find(|(ours, _)| o.contains_key(*ours)) {
                unknown.get_or_insert_with(|| ours.to_string());
                return;
            }
            for (ours, theirs) in *pairs {
                if let Some(x) = o.remove(*theirs) {
                    o.insert(ours.to_string(), x);
                }
            }
        });
    }
    match unknown {
        Some(member) => Err(UnknownMember {
            on: on.to_string(),
            member,
        }),
        None => Ok(p),
    }
}

/// An answer of the reference's, in this core's names.
pub fn answer(on: &str, mut r: Value) -> Value {
    for (_, at, pairs) in WRITES.iter().filter(|(o, _, _)| *o == on) {
        each_at(&mut r, at, &mut |o| {
            for (ours, theirs) in *pairs {
                if let Some(x) = o.remove(*ours) {
                    o.insert(theirs.to_string(), x);
                }
            }
        });
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn it_reads_its_names_and_refuses_the_references() {
        let p = json!({ "runId": "r", "end": "turn.completed", "transcript": [{ "keep": 0, "entries": [{ "type": "final", "content": "done" }], "length": 1 }] });
        let read = read("output", &p).unwrap();
        assert_eq!(read["type"], "turn.completed");
        assert_eq!(
            read["transcript"][0]["entries"][0],
            json!({ "kind": "final", "text": "done" })
        );
        let e = super::read("artifact.write", &json!({ "runId": "r", "op": "begin" })).unwrap_err();
        assert_eq!(e.to_string(), "artifact.write: unknown member op");
        let e = super::read("output", &json!({ "end": "turn.completed", "transcript": [{ "entries": [{ "kind": "final" }] }] })).unwrap_err();
        assert!(e.to_string().ends_with("unknown member kind"), "{e}");
    }

    #[test]
    fn it_answers_in_its_names_and_declares_them() {
        assert_eq!(
            answer("artifact.write", json!({ "uploadId": "u", "maxBytes": 1 })),
            json!({ "upload": "u", "maxBytes": 1 })
        );
        assert_eq!(
            answer(
                "transcript.read",
                json!({ "entries": [{ "kind": "input", "text": "hi" }] })
            ),
            json!({ "entries": [{ "type": "input", "content": "hi" }] })
        );
        let d = declared();
        assert_eq!(d["artifact.write"]["uploadId"], "upload");
        assert_eq!(d["output"]["kind"], "type");
        assert_eq!(d["transcript.read"]["text"], "content");
        assert_eq!(d["http-calls"]["tool"], "toolName");
        assert_eq!(d["session.mcp"]["servers"], "connected");
        let p = json!({ "runId": "r", "snapshot": { "schemaVersion": 2, "connected": [{ "server": "docs", "listed": [] }] } });
        let read = read("session.mcp", &p).unwrap();
        assert_eq!(
            read["snapshot"],
            json!({ "snapshotSchemaVersion": 2, "servers": [{ "name": "docs", "tools": [] }] })
        );
    }
}
