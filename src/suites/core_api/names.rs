//! core.start's `names`: the members spec 004 names a format for but does not print belong to
//! the core's own schema, so its control shim may say what its core calls them
//! (docs/core-protocol.md, "names"). hcpspec renames them in what it sends on a method or gate
//! route, and back in what it reads of the answers, so cases stay written in hcpspec's names.
//! Only the members of [`PLACES`] may be renamed, and only at their places: a member the spec
//! prints, or one inside a payload carried through (`state`, a tool's `arguments`, a candidate's
//! output blocks), keeps its name.

use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Whether a place is in what hcpspec sends (request params, a gate body) or in the core's
/// answer (a request's `r`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Side {
    Sent,
    Answered,
}

/// Where renameable members sit: on `on` (a method or a gate route), `side`, at the objects
/// `at` leads to (a member's name, or `*` for each item of a list), the members `members`.
pub struct Place {
    pub on: &'static str,
    pub side: Side,
    pub at: &'static [&'static str],
    pub members: &'static [&'static str],
}

/// Every member a core may rename: the formats vectors/core-api/ASSUMPTIONS.md lists as named
/// but not printed. The TranscriptUpdate's `{keep, entries, length}` and the compaction mark
/// (`kind: "compaction"`, `compaction` on the edit's first event) are printed in § 6, an output
/// answer's `{cursor}` in § 7, a gate's `{ok, result | error}` in § 5: none of them is here.
pub const PLACES: &[Place] = &[
    Place {
        on: "artifact.write",
        side: Side::Sent,
        at: &[],
        members: &[
            "op", "uploadId", "offset", "base64", "size", "path", "sha256",
        ],
    },
    Place {
        on: "artifact.write",
        side: Side::Answered,
        at: &[],
        members: &[
            "op", "uploadId", "offset", "base64", "size", "path", "sha256",
        ],
    },
    Place {
        on: "output",
        side: Side::Sent,
        at: &[],
        members: &["type"],
    },
    Place {
        on: "output",
        side: Side::Sent,
        at: &["transcript", "*", "entries", "*"],
        members: &["kind", "text"],
    },
    Place {
        on: "transcript.read",
        side: Side::Answered,
        at: &["entries", "*"],
        members: &["kind", "text"],
    },
    // McpSnapshotSchema is named (§ 3, snapshotSchemaVersion: 2) but not printed: its servers'
    // members first, then the envelope, since a place's path is in hcpspec's names.
    Place {
        on: "session.mcp",
        side: Side::Sent,
        at: &["snapshot", "servers", "*"],
        members: &["name", "instructions", "tools"],
    },
    Place {
        on: "session.mcp",
        side: Side::Sent,
        at: &["snapshot"],
        members: &["snapshotSchemaVersion", "servers"],
    },
    Place {
        on: "http-calls",
        side: Side::Sent,
        at: &[],
        members: &["effectId", "tool", "arguments"],
    },
];

/// A core's names: by method or gate route, hcpspec's member name → the core's. Empty (every
/// member keeps hcpspec's name) for a shim that answers no `names`.
#[derive(Default, Clone, Debug, PartialEq)]
pub struct Names(BTreeMap<String, BTreeMap<String, String>>);

/// A name from the shim, fit for a one-line message.
fn shown(s: &str) -> String {
    crate::snapshot::excerpt_text(&s.escape_debug().to_string(), 80)
}

fn shown_value(v: &Value) -> String {
    crate::snapshot::excerpt_text(&v.to_string(), 80)
}

/// What core.start's `names` says that hcpspec cannot honour: the case is an error naming it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("core.start's names: {0}")]
pub struct BadNames(String);

impl Names {
    /// core.start's `names` member, checked: absent or null is no renaming; anything the table
    /// does not allow is a one-line error naming the bad entry.
    pub fn from_start(v: Option<&Value>) -> Result<Names, BadNames> {
        let why = BadNames;
        let Some(v) = v.filter(|v| !v.is_null()) else {
            return Ok(Names::default());
        };
        let Some(by_on) = v.as_object() else {
            return Err(why(format!(
                "`{}` is not an object of methods and gate routes",
                shown_value(v)
            )));
        };
        let mut names = BTreeMap::new();
        for (on, members) in by_on {
            let places: Vec<&Place> = PLACES.iter().filter(|p| p.on == on).collect();
            if places.is_empty() {
                let mut ons: Vec<&str> = PLACES.iter().map(|p| p.on).collect();
                ons.dedup();
                return Err(why(format!(
                    "`{}` is no method or gate route hcpspec sends with members a core may name (only {})",
                    shown(on),
                    ons.join(", ")
                )));
            }
            let Some(members) = members.as_object() else {
                return Err(why(format!(
                    "`{}` is `{}`, not an object of member names",
                    shown(on),
                    shown_value(members)
                )));
            };
            let mut allowed: Vec<&str> = vec![];
            for m in places.iter().flat_map(|p| p.members.iter().copied()) {
                if !allowed.contains(&m) {
                    allowed.push(m);
                }
            }
            let mut map = BTreeMap::new();
            for (member, name) in members {
                if !allowed.contains(&member.as_str()) {
                    return Err(why(format!(
                        "`{}`'s `{}` is no member a core may name there (only {})",
                        shown(on),
                        shown(member),
                        allowed.join(", ")
                    )));
                }
                let Some(name) = name.as_str().filter(|n| !n.is_empty()) else {
                    return Err(why(format!(
                        "`{}`'s `{}` is `{}`, not a non-empty string",
                        shown(on),
                        shown(member),
                        shown_value(name)
                    )));
                };
                map.insert(member.clone(), name.to_string());
            }
            // A name stands for one member of a place, or renaming back could not tell them apart
            // (members the core leaves alone keep theirs).
            for p in &places {
                let mut of: BTreeMap<&str, &str> = BTreeMap::new();
                for m in p.members {
                    let n = map.get(*m).map_or(*m, String::as_str);
                    if let Some(first) = of.insert(n, m) {
                        return Err(why(format!(
                            "`{}` names `{}` twice (`{first}` and `{m}`)",
                            shown(on),
                            shown(n)
                        )));
                    }
                }
            }
            if !map.is_empty() {
                names.insert(on.clone(), map);
            }
        }
        Ok(Names(names))
    }

    /// What hcpspec sends on `on` (a request's params, a gate's body), renamed into the core's
    /// names in place. An error when a renamed member meets a member the object already has.
    pub fn sent(&self, on: &str, v: &mut Value) -> Result<(), BadNames> {
        let Some(map) = self.0.get(on) else {
            return Ok(());
        };
        for p in PLACES.iter().filter(|p| p.on == on && p.side == Side::Sent) {
            let map: BTreeMap<&str, &str> = p
                .members
                .iter()
                .filter_map(|m| map.get(*m).map(|n| (*m, n.as_str())))
                .collect();
            let mut clash = None;
            each_at(v, p.at, &mut |o| {
                if clash.is_none() {
                    clash = rename(o, &map, false).err();
                }
            });
            if let Some(k) = clash {
                return Err(BadNames(format!(
                    "`{on}`'s `{}` meets a member `{}` the case sends already",
                    map.iter().find(|(_, n)| **n == k).map_or("?", |(m, _)| m),
                    shown(&k)
                )));
            }
        }
        Ok(())
    }

    /// What the core answered on `on` (a request's `r`), renamed back into hcpspec's names in
    /// place.
    pub fn answered(&self, on: &str, v: &mut Value) {
        let Some(map) = self.0.get(on) else {
            return;
        };
        for p in PLACES
            .iter()
            .filter(|p| p.on == on && p.side == Side::Answered)
        {
            let back: BTreeMap<&str, &str> = p
                .members
                .iter()
                .filter_map(|m| map.get(*m).map(|n| (n.as_str(), *m)))
                .collect();
            each_at(v, p.at, &mut |o| {
                let _ = rename(o, &back, true);
            });
        }
    }
}

/// Call `f` on every object `at` leads to in `v` (`*`: each item of a list). A step that finds
/// no object or list there leads nowhere: the shape is the case's or the core's, not ours.
fn each_at(v: &mut Value, at: &[&str], f: &mut dyn FnMut(&mut Map<String, Value>)) {
    match (at.split_first(), v) {
        (None, Value::Object(o)) => f(o),
        (Some((&"*", rest)), Value::Array(items)) => {
            for x in items {
                each_at(x, rest, f);
            }
        }
        (Some((k, rest)), Value::Object(o)) if *k != "*" => {
            if let Some(x) = o.get_mut(*k) {
                each_at(x, rest, f);
            }
        }
        _ => {}
    }
}

/// Rename `o`'s keys by `map`, keeping their order. Two keys that end up one: sending, an error
/// (the name it clashes on); reading (`renamed_wins`), the renamed key is the member the core
/// declared, and the other, a member of the core's own that hcpspec has no name for, is dropped.
fn rename(
    o: &mut Map<String, Value>,
    map: &BTreeMap<&str, &str>,
    renamed_wins: bool,
) -> Result<(), String> {
    if map.is_empty() || !o.keys().any(|k| map.contains_key(k.as_str())) {
        return Ok(());
    }
    let mut out = Map::new();
    let mut renamed = std::collections::BTreeSet::new();
    for (k, x) in std::mem::take(o) {
        let (k, is_renamed) = match map.get(k.as_str()) {
            Some(n) => (n.to_string(), true),
            None => (k, false),
        };
        if out.contains_key(&k) {
            if !renamed_wins {
                return Err(k);
            }
            if renamed.contains(&k) && !is_renamed {
                continue;
            }
        }
        if is_renamed {
            renamed.insert(k.clone());
        }
        out.insert(k, x);
    }
    *o = out;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::Names;
    use serde_json::{json, Value};

    fn names(v: Value) -> Result<Names, String> {
        Names::from_start(Some(&v)).map_err(|e| e.to_string())
    }

    #[test]
    fn no_names_renames_nothing() {
        let n = Names::from_start(None).unwrap();
        assert_eq!(n, Names::default());
        assert_eq!(
            Names::from_start(Some(&Value::Null)).unwrap(),
            Names::default()
        );
        let mut p = json!({ "op": "begin", "runId": "r" });
        n.sent("artifact.write", &mut p).unwrap();
        assert_eq!(p, json!({ "op": "begin", "runId": "r" }));
    }

    #[test]
    fn sent_members_take_the_cores_names_at_their_places_only() {
        let n = names(json!({
            "output": { "type": "end", "kind": "type", "text": "content" }
        }))
        .unwrap();
        let mut p = json!({
            "runId": "r", "type": "turn.completed", "state": { "type": "mine", "text": "mine" },
            "transcript": [{ "keep": 0, "kind": "compaction", "entries": [
                { "kind": "final", "text": "done", "output": [{ "type": "text", "text": "x" }] }
            ], "length": 1 }]
        });
        n.sent("output", &mut p).unwrap();
        assert_eq!(
            p,
            json!({
                "runId": "r", "end": "turn.completed", "state": { "type": "mine", "text": "mine" },
                "transcript": [{ "keep": 0, "kind": "compaction", "entries": [
                    { "type": "final", "content": "done", "output": [{ "type": "text", "text": "x" }] }
                ], "length": 1 }]
            }),
            "state, the update's printed kind and nested blocks keep their names; values never change"
        );
        // The order of members is kept (a case's frame reads as it was written).
        let keys: Vec<&String> = p.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["runId", "end", "state", "transcript"]);
    }

    #[test]
    fn a_snapshots_servers_and_their_members_are_renamed_both() {
        let n = names(json!({ "session.mcp": { "servers": "connected", "name": "server", "snapshotSchemaVersion": "v" } }))
            .unwrap();
        let mut p = json!({ "runId": "r", "snapshot": { "snapshotSchemaVersion": 2, "servers": [{ "name": "docs", "tools": [{ "name": "search" }] }] } });
        n.sent("session.mcp", &mut p).unwrap();
        assert_eq!(
            p,
            json!({ "runId": "r", "snapshot": { "v": 2, "connected": [{ "server": "docs", "tools": [{ "name": "search" }] }] } })
        );
    }

    #[test]
    fn a_method_not_declared_is_sent_as_it_is() {
        let n = names(json!({ "http-calls": { "tool": "name" } })).unwrap();
        let mut p = json!({ "runId": "r", "tool": "t" });
        n.sent("artifact.write", &mut p).unwrap();
        assert_eq!(p, json!({ "runId": "r", "tool": "t" }));
        let mut b = json!({ "effectId": "e", "tool": "t", "arguments": { "tool": "kept" } });
        n.sent("http-calls", &mut b).unwrap();
        assert_eq!(
            b,
            json!({ "effectId": "e", "name": "t", "arguments": { "tool": "kept" } })
        );
    }

    #[test]
    fn answers_are_renamed_back() {
        let n = names(json!({
            "artifact.write": { "uploadId": "upload", "op": "action" },
            "transcript.read": { "kind": "type", "text": "content" }
        }))
        .unwrap();
        let mut r = json!({ "upload": "u1", "maxBytes": 10 });
        n.answered("artifact.write", &mut r);
        assert_eq!(r, json!({ "uploadId": "u1", "maxBytes": 10 }));
        let mut t = json!({ "cursor": "c", "entries": [{ "type": "input", "content": "hi" }] });
        n.answered("transcript.read", &mut t);
        assert_eq!(
            t,
            json!({ "cursor": "c", "entries": [{ "kind": "input", "text": "hi" }] })
        );
        // A member of the core's own that hcpspec's name would also name: the declared one wins.
        let mut both = json!({ "uploadId": "stray", "upload": "u2" });
        n.answered("artifact.write", &mut both);
        assert_eq!(both, json!({ "uploadId": "u2" }));
        // Answers of an output or a gate call are printed: nothing is renamed back there.
        let n = names(json!({ "http-calls": { "arguments": "ok" } })).unwrap();
        let mut g = json!({ "ok": true, "result": {} });
        n.answered("http-calls", &mut g);
        assert_eq!(g, json!({ "ok": true, "result": {} }));
    }

    #[test]
    fn a_swap_is_a_renaming_and_a_clash_is_an_error() {
        let n = names(json!({ "artifact.write": { "op": "size", "size": "op" } })).unwrap();
        let mut p = json!({ "op": "begin", "size": 3 });
        n.sent("artifact.write", &mut p).unwrap();
        assert_eq!(p, json!({ "size": "begin", "op": 3 }));
        let n = names(json!({ "artifact.write": { "op": "name" } })).unwrap();
        let mut p = json!({ "op": "begin", "name": "a.txt" });
        let e = n.sent("artifact.write", &mut p).unwrap_err().to_string();
        assert!(e.contains("`op`") && e.contains("`name`"), "{e}");
    }

    #[test]
    fn shapes_that_lead_nowhere_are_left_alone() {
        let n = names(json!({ "output": { "text": "content" } })).unwrap();
        for mut p in [
            json!({ "transcript": 5 }),
            json!({ "transcript": [{ "entries": "x" }, 3, { "entries": [null, [1]] }] }),
            json!([]),
            json!("text"),
        ] {
            let before = p.clone();
            n.sent("output", &mut p).unwrap();
            assert_eq!(p, before);
        }
    }

    #[test]
    fn bad_names_are_one_line_errors_naming_the_entry() {
        let cases = [
            (json!(["artifact.write"]), "not an object of methods"),
            (
                json!({ "lease": { "runId": "run" } }),
                "`lease` is no method",
            ),
            (
                json!({ "tool-calls": { "name": "tool" } }),
                "`tool-calls` is no method",
            ),
            (
                json!({ "output": "type" }),
                "`output` is `\"type\"`, not an object",
            ),
            (
                json!({ "output": { "keep": "kept" } }),
                "`output`'s `keep` is no member",
            ),
            (
                json!({ "output": { "runId": "run" } }),
                "`output`'s `runId` is no member",
            ),
            (
                json!({ "transcript.read": { "type": "t" } }),
                "`transcript.read`'s `type` is no member",
            ),
            (
                json!({ "http-calls": { "tool": 5 } }),
                "`http-calls`'s `tool` is `5`, not a non-empty string",
            ),
            (
                json!({ "http-calls": { "tool": "" } }),
                "not a non-empty string",
            ),
            (
                json!({ "artifact.write": { "op": "x", "size": "x" } }),
                "`artifact.write` names `x` twice",
            ),
            (
                json!({ "artifact.write": { "op": "size" } }),
                "names `size` twice (`op` and `size`)",
            ),
            (
                json!({ "output": { "kind": "text" } }),
                "`output` names `text` twice",
            ),
        ];
        for (v, want) in cases {
            let e = names(v.clone()).unwrap_err();
            assert!(e.starts_with("core.start's names: "), "{e}");
            assert!(e.contains(want), "{v}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        // Different places of one method may share a name: output's type and an entry's kind.
        assert!(names(json!({ "output": { "type": "kind" } })).is_ok());
        let long = "k\n".repeat(500);
        let e = names(json!({ long.clone(): {} })).unwrap_err();
        assert!(!e.contains('\n') && e.len() < 300, "{e}");
    }
}
