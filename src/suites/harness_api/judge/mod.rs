//! The judge of a played scenario: the checks of every scenario (each the invariant of one
//! cited sentence of spec 004), then the checks the scenario asks for. Only what the text fixes
//! is asserted; a field the text does not list is a warning, never a failure.

// A failure carries its evidence (what was expected and seen); it ends the judging, so it is
// returned once a scenario, unboxed.
#![allow(clippy::result_large_err)]

mod again;
mod always;
mod asked;
mod host;
mod view;

use crate::suites::world::scenario::{Asked, Written};
use serde_json::Value;
use view::View;

/// What a played scenario left: the log, the runs core offered, how it ended.
pub struct Played {
    pub log: Vec<Value>,
    pub runs: Vec<RunInfo>,
    pub harness: String,
    pub deadline_hit: bool,
    /// The scenario's share of the process's budget of bytes: what the log holds, given back
    /// once it is dropped.
    pub hold: Option<std::sync::Arc<crate::suites::world::budget::Hold>>,
}

#[derive(Debug, Clone)]
pub struct RunInfo {
    pub id: String,
    pub turn_id: String,
    pub segment: u64,
    pub start: Value,
    pub ended: Option<(u64, String)>,
    /// The log index of its run-ended entry.
    pub ended_at: Option<usize>,
}

impl RunInfo {
    fn limit(&self, name: &str) -> u64 {
        self.start["limits"][name].as_u64().unwrap_or(u64::MAX)
    }
}

/// A failed check: which, the sentence it enforces, what was expected and seen.
#[derive(Debug, Clone)]
pub struct Fail {
    pub check: String,
    pub cite: &'static str,
    pub message: String,
    pub expected: Value,
    pub actual: Value,
}

const SPEC: &str = "004_0d5b24e47247e871.txt";

/// A check: its name (what a failure and a ledger row name), the sentence it enforces, and what
/// judges it.
pub struct Check {
    pub name: &'static str,
    /// Empty for a check a scenario asks for: its failure cites the case's own sentence.
    pub cite: &'static str,
    pub run: Run,
}

/// What judges a check.
pub enum Run {
    /// A check of every scenario, judged in the table's order.
    Every(fn(&View, &mut Vec<String>) -> Result<(), Fail>),
    /// A check of every scenario judged in the named one's pass (hello's three rules, one pass
    /// over each connection's first request).
    In(&'static str),
    /// Warnings only, never a failure: no ledger row claims it.
    Warn(fn(&View, &mut Vec<String>)),
    /// A check a scenario asks for, with its parameters ([`Asked`]), after those of every
    /// scenario, in the scenario's order.
    Asked,
}

/// Every check, once: those of every scenario in the order they are judged, then those a
/// scenario may ask for (vectors/harness-api/CHECKS.md).
pub const CHECKS: &[Check] = &[
    Check {
        name: "within-caps",
        cite: "§ 1 Transport: \"One JSON text message per frame, at most 64 MiB (HARNESS_MAX_PAYLOAD).\" (and hcpspec's caps on what a harness sends in a scenario, docs/security.md)",
        run: Run::Every(always::within_caps),
    },
    // A refused upgrade is named by its headers first: `connects` is for a harness that never
    // got through for another reason.
    Check {
        name: "upgrade-headers",
        cite: "§ 1 Transport: \"Upgrade headers: Authorization: Bearer <token> and Nylorun-Harness-Api: 1.\"",
        run: Run::Every(always::upgrade_headers),
    },
    Check {
        name: "connects",
        cite: "§ 1 Transport: \"A WebSocket to core's harness listener (port 4200 by default), path /nylorun/harness/v1.\"",
        run: Run::Every(always::connects),
    },
    Check {
        name: "one-json-text-message",
        cite: "§ 1 Transport: \"One JSON text message per frame, at most 64 MiB (HARNESS_MAX_PAYLOAD).\"",
        run: Run::Every(always::one_json),
    },
    Check {
        name: "ids-per-sender",
        cite: "§ 1 Transport: \"Either end may send requests; ids are per sender.\"",
        run: Run::Every(always::ids_per_sender),
    },
    Check {
        name: "hello-first",
        cite: "§ 2 Work: \"hello {api: 5, name, version, features} is the first request.\"",
        run: Run::Every(always::hello),
    },
    Check {
        name: "hello-api-5",
        cite: "§ 11 Versioning: \"Core speaks one version: a harness that says api: 4 is refused.\"",
        run: Run::In("hello-first"),
    },
    Check {
        name: "hello-name",
        cite: "§ 2 Work: \"name is the harness id: ^[a-z][a-z0-9-]{1,62}$, and the one the credential is for.\"",
        run: Run::In("hello-first"),
    },
    // A call without its key is named by the key first: `journaled-first` is for a keyed call
    // no intent had answered execute.
    Check {
        name: "idempotency-key",
        cite: "§ 5 Gates: \"Send Authorization: Bearer <run token> and Idempotency-Key: <effect id> on every call.\"",
        run: Run::Every(always::idempotency_key),
    },
    Check {
        name: "journaled-first",
        cite: "§ 5 Gates: \"A tool call must be journaled first (effect.intent answered execute), or the gate refuses it\"; § 4: \"Every effect is journaled before it runs.\"",
        run: Run::Every(always::journaled_first),
    },
    Check {
        name: "run-token",
        cite: "§ 2 Work: \"lease.renew {runId} every renewEveryMs. It answers {ok: true, token?, tokenExpiresAt?} (switch to a new token when one comes)\"",
        run: Run::Every(always::run_token),
    },
    Check {
        name: "effect-id-shape",
        cite: "§ 4 Record: \"The effect id is <turnId>:<segment>:<kind>:<identity> (effectIdOf).\"",
        run: Run::Every(always::effect_id_shape),
    },
    Check {
        name: "model-intent-without-input",
        cite: "§ 4 Record: \"For a model effect, hash the intent with input set to its ModelCall, and send the intent without input.\"",
        run: Run::Every(always::model_without_input),
    },
    Check {
        name: "replay-without-asking",
        cite: "§ 3 Input: \"outcomes: the completed outcomes of this segment, with their request hashes. Replay them without asking core again.\"",
        run: Run::Every(always::replay_without_asking),
    },
    Check {
        name: "request-hash",
        cite: "§ 4 Record: \"The request hash is effectRequestHash(intent) over the whole request. [...] A replay that asks for the same id with another hash is effect_drift.\"",
        run: Run::Every(always::request_hash),
    },
    Check {
        name: "nothing-after-the-end",
        cite: "§ 2 Work: \"{ok: false} (the run is over: stop it)\"; § 2: \"lease.release {runId, reason} gives a run back without an output.\"",
        run: Run::Every(always::nothing_after_end),
    },
    Check {
        name: "runs-end",
        cite: "§ 7 Output: \"End each segment with one output request (TurnOutputSchema)\"",
        run: Run::Every(always::runs_end),
    },
    Check {
        name: "state-every-segment",
        cite: "§ 7 Output: \"Return some state on every segment.\"; \"A custom harness's state is at most limits.harnessStateBytes\"",
        run: Run::Every(always::state),
    },
    Check {
        name: "record-entry-bytes",
        cite: "§ 5b Tool results: \"Each effect.outcome value, and each transcript entry (section 6), is at most limits.recordEntryBytes as JSON.\"",
        run: Run::Every(always::record_entry),
    },
    Check {
        name: "transcript-kinds",
        cite: "§ 6 Transcript: \"Entries are one of five kinds (TranscriptEntrySchema)\"; \"write these kinds only.\"",
        run: Run::Every(always::transcript_kinds),
    },
    Check {
        name: "tool-names-64",
        cite: "§ 3 Input: \"Name each tool within 64 characters, the ceiling every provider accepts.\"",
        run: Run::Every(always::tool_names),
    },
    Check {
        name: "disabled-tools-skipped",
        cite: "§ 3 Input: \"enabled (false when the turn's manifest disables it: skip it, since core refuses its calls as tool.disabled)\"",
        run: Run::Every(always::disabled_tools),
    },
    Check {
        name: "model-call-bytes",
        cite: "§ 3 Input: \"modelCallBytes: a Model Gate call's body (default 32 MiB; past it, 400).\"; \"Keep within them, or core refuses what passes one\"",
        run: Run::Every(always::model_call_bytes),
    },
    Check {
        name: "chunk-bytes",
        cite: "§ 3 Input: \"chunkBytes: one definition.file range, artifact.read answer or artifact.write chunk (section 4b): ask for and send at most this many bytes\"",
        run: Run::Every(always::chunk_bytes),
    },
    Check {
        name: "traceparent",
        cite: "§ 3 Input: \"Send it as traceparent on your gate calls, and as TRACEPARENT to processes you start.\"",
        run: Run::Every(always::traceparent),
    },
    Check {
        name: "tool-targets",
        cite: "§ 3 Input: \"Offer sandbox tools, and write a note on the sandbox, only then.\"; § 4 Record: a sandbox call runs when \"The session has a sandbox and toolName is one of bash, read, write, edit, grep, glob\"",
        run: Run::Every(always::tool_targets),
    },
    Check {
        name: "memory-view-only",
        cite: "§ 3 Input: \"offer only view for read_only and to agents used as tools\"",
        run: Run::Every(always::memory_view_only),
    },
    Check {
        name: "compaction",
        cite: "§ 6 Transcript: \"compaction: a summary that replaced the older part. It is always first.\"; \"send each model call that writes a summary with purpose: \"summary\" on its intent\"; \"mark the edit that replaced the history kind: \"compaction\", with compaction: {trigger, tokensBefore, tokensAfter, summaryEffectIds}\"; \"summaryEffectIds are the completed summary calls of this turn that wrote it, in order\"",
        run: Run::Every(always::compaction),
    },
    Check {
        name: "field-warnings",
        cite: "",
        run: Run::Warn(always::field_warnings),
    },
    Check {
        name: "ends",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "waitsOn",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "gateCancelled",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "gateCalls",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "replaysSame",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "spilled",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "offered",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "frame",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "noFrame",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "notDropped",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "count",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "gate",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "answeredOk",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "inputEntries",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "renewals",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "modelSaw",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "entries",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "partsStored",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "noImageFile",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "askedAgain",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "sameBody",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "inputTexts",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "promptPinned",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "uniqueNames",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "noReference",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "readsPinned",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "noNewVersion",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "stopsOnCancel",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "invocationsByStep",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "callsTarget",
        cite: "",
        run: Run::Asked,
    },
    // issue 43, pod host (the launch contract's pod-host mode):
    Check {
        name: "hostBearer",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "hostRenews",
        cite: "",
        run: Run::Asked,
    },
    Check {
        name: "hostRejoins",
        cite: "",
        run: Run::Asked,
    },
];

/// The checks of every scenario, by name: what a ledger row may claim.
pub fn always() -> impl Iterator<Item = &'static str> {
    CHECKS
        .iter()
        .filter(|c| matches!(c.run, Run::Every(_) | Run::In(_)))
        .map(|c| c.name)
}

pub fn cite(check: &str) -> &'static str {
    CHECKS
        .iter()
        .find(|c| c.name == check)
        .map_or("", |c| c.cite)
}

fn fail(check: &str, message: impl Into<String>, expected: Value, actual: Value) -> Fail {
    Fail {
        check: check.into(),
        cite: cite(check),
        message: message.into(),
        expected,
        actual,
    }
}

/// Judge a played scenario: the first failure, and the warnings.
pub fn judge(p: &Played, asked: &[Written<Asked>]) -> (Option<Fail>, Vec<String>) {
    judge_view(&View::new(p), asked)
}

fn judge_view(v: &View, asked: &[Written<Asked>]) -> (Option<Fail>, Vec<String>) {
    let mut warnings = Vec::new();
    for c in CHECKS {
        let failed = match c.run {
            Run::Every(run) => run(v, &mut warnings).err(),
            Run::Warn(run) => {
                run(v, &mut warnings);
                None
            }
            Run::In(_) | Run::Asked => None,
        };
        if failed.is_some() {
            return (failed, warnings);
        }
    }
    let failed = asked.iter().find_map(|c| c.read.judge(v, &c.text).err());
    (failed, warnings)
}

/// Only the named checks of every scenario (the fuzzer's invariants).
pub fn judge_only(p: &Played, names: &[&str]) -> Option<Fail> {
    let v = View::new(p);
    let mut warnings = Vec::new();
    CHECKS
        .iter()
        .filter(|c| names.contains(&c.name))
        .find_map(|c| match c.run {
            Run::Every(run) => run(&v, &mut warnings).err(),
            _ => None,
        })
}

pub fn spec_file() -> &'static str {
    SPEC
}

/// A failed asked check, named as the scenario wrote it (it cites the case's sentence).
pub(super) fn miss(c: &Value, message: String, expected: Value, actual: Value) -> Fail {
    fail(
        c["check"].as_str().unwrap_or_default(),
        message,
        expected,
        actual,
    )
}

/// A media part anywhere in `v` whose reference names the artifact `id` (§ 5 "A media part's
/// reference names an artifact version ({artifactId, version})"); a note naming it is free.
pub(super) fn names_artifact(v: &Value, id: &str) -> bool {
    match v {
        Value::Object(o) => {
            o.get("reference").is_some_and(|r| r["artifactId"] == id)
                || o.values().any(|x| names_artifact(x, id))
        }
        Value::Array(a) => a.iter().any(|x| names_artifact(x, id)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeSet;

    fn frame(conn: u64, from: &str, f: Value) -> Value {
        json!({ "via": "frame", "conn": conn, "from": from, "frame": f })
    }

    /// A run whose token a renewal switched, and a model call with the old token that reached
    /// the gate after the harness answered a ping core sent after the switch. `execute_first`:
    /// core answered the call's intent `execute` before the switch (the harness began the call
    /// before it read the switch), or after it.
    fn played(execute_first: bool) -> Played {
        let intent = frame(
            1,
            "harness",
            json!({ "t": "req", "id": "3", "m": "effect.intent",
                    "p": { "runId": "run-1", "effect": { "effectId": "turn-1:0:model:0", "kind": "model" } } }),
        );
        let execute = frame(
            1,
            "core",
            json!({ "t": "res", "id": "3", "ok": true, "r": { "status": "execute" } }),
        );
        let renew = frame(
            1,
            "harness",
            json!({ "t": "req", "id": "4", "m": "lease.renew", "p": { "runId": "run-1" } }),
        );
        let switch = frame(
            1,
            "core",
            json!({ "t": "res", "id": "4", "ok": true, "r": { "ok": true, "token": "t2" } }),
        );
        let mut log = vec![intent];
        match execute_first {
            true => log.extend([execute, renew, switch]),
            false => log.extend([renew, switch, execute]),
        }
        log.push(frame(1, "core", json!({ "t": "ping" })));
        log.push(frame(1, "harness", json!({ "t": "ping" })));
        log.push(json!({ "via": "pong", "conn": 1 }));
        log.push(
            json!({ "via": "gate", "route": "model-calls", "auth": "old", "run": "run-1",
                         "key": "turn-1:0:model:0", "replacedBy": 1 }),
        );
        Played {
            log,
            runs: vec![],
            harness: String::new(),
            deadline_hit: false,
            hold: None,
        }
    }

    /// The entries the checks are handed judging a scenario of `n` offers the reference harness
    /// played (all played, within the deadline, passing).
    fn judged(n: usize) -> u64 {
        use crate::suites::world::scenario::Scenario;
        let sc: Scenario = serde_json::from_value(json!({
            "deadlineMs": 60000,
            "model": [{ "text": "done" }],
            "offers": vec!["turn"; n],
            "checks": [
                { "check": "ends", "with": "turn.completed" },
                { "check": "count", "m": "output", "min": n },
                { "check": "renewals" }
            ]
        }))
        .unwrap();
        let harness = crate::suites::harness_api::Harness::parse("inproc:reference").unwrap();
        let (p, _, _) =
            crate::suites::harness_api::play(std::sync::Arc::new(sc.clone()), &harness).unwrap();
        assert!(!p.deadline_hit, "{n} offers: the deadline was hit");
        assert_eq!(p.runs.len(), n, "{n} offers: every run played");
        let v = View::new(&p);
        let (fail, _) = judge_view(&v, &sc.checks);
        assert!(fail.is_none(), "{n} offers: {fail:?}");
        v.looked()
    }

    /// Judging is near-linear in the log: each check reads it by run and request id, never once
    /// per run or per request (1000 offers took a minute to judge against a 5 s deadline). Work
    /// counted, not timed: three times the offers is about three times the entries looked at.
    #[test]
    fn judging_grows_linearly_with_the_offers() {
        let (small, large) = (judged(60), judged(180));
        eprintln!("entries looked at: {small} for 60 offers, {large} for 180");
        assert!(
            large < 5 * small,
            "judging 180 offers looked at {large} entries, 60 offers {small}: quadratic"
        );
    }

    #[test]
    fn an_old_token_is_late_only_on_a_call_made_after_the_switch_came() {
        let p = played(true);
        always::run_token(&View::new(&p), &mut vec![])
            .expect("a call begun before the switch came");
        let p = played(false);
        let f =
            always::run_token(&View::new(&p), &mut vec![]).expect_err("made after the switch came");
        assert_eq!(f.check, "run-token");
    }

    #[test]
    fn a_gate_call_begun_before_a_refused_renewal_crosses_it() {
        // The same log, the renewal refused: the run ended at the refusal.
        let mut p = played(true);
        let refusal = p
            .log
            .iter()
            .position(|e| e["frame"]["r"]["token"] == "t2")
            .unwrap();
        p.log[refusal]["frame"]["r"] = json!({ "ok": false });
        p.runs = vec![RunInfo {
            id: "run-1".into(),
            turn_id: "turn-1".into(),
            segment: 0,
            start: json!({}),
            ended: Some((1, "renew-refused".into())),
            ended_at: Some(refusal),
        }];
        always::nothing_after_end(&View::new(&p), &mut vec![])
            .expect("a call begun before the refusal");
        // A request on the socket after the harness answered the ping is late.
        p.log.push(frame(
            1,
            "harness",
            json!({ "t": "req", "id": "5", "m": "effect.intent", "p": { "runId": "run-1" } }),
        ));
        let f =
            always::nothing_after_end(&View::new(&p), &mut vec![]).expect_err("a request after it");
        assert_eq!(f.check, "nothing-after-the-end");
    }

    /// The check names the harness-api case schema accepts are the asked checks of the table,
    /// and each reads as an [`Asked`] of that name (the schema, the table and the type agree).
    #[test]
    fn the_schemas_checks_are_the_asked_checks() {
        let schema: Value = serde_json::from_str(include_str!(
            "../../../../vectors/schemas/harness-scenario.schema.json"
        ))
        .unwrap();
        let names = &schema["properties"]["scenario"]["properties"]["checks"]["items"]
            ["properties"]["check"]["enum"];
        let asked: Vec<&str> = CHECKS
            .iter()
            .filter(|c| matches!(c.run, Run::Asked))
            .map(|c| c.name)
            .collect();
        assert_eq!(names, &json!(asked));
        for name in asked {
            let read = serde_json::from_value::<Asked>(json!({ "check": name }));
            if let Err(e) = read {
                assert!(e.to_string().starts_with("missing field"), "{name}: {e}");
            }
        }
        let unknown = serde_json::from_value::<Asked>(json!({ "check": "nope" }));
        assert!(unknown.unwrap_err().to_string().contains("unknown variant"));
    }

    #[test]
    fn each_check_is_in_the_table_once_and_in_calls_a_check_of_every_scenario() {
        let names: BTreeSet<&str> = CHECKS.iter().map(|c| c.name).collect();
        assert_eq!(names.len(), CHECKS.len());
        for c in CHECKS {
            if let Run::In(by) = c.run {
                assert!(CHECKS
                    .iter()
                    .any(|k| k.name == by && matches!(k.run, Run::Every(_))));
            }
        }
    }
}
