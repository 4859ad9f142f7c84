//! The view of a played scenario's log the checks read: the harness's requests, core's answers,
//! the gate calls, and what they carried.

use super::{Played, RunInfo};
use crate::suites::world::model::effect_id;
use serde_json::Value;

pub struct View<'a> {
    pub(super) p: &'a Played,
}

/// A harness request: log index, connection, the frame.
#[derive(Clone, Copy)]
pub struct Req<'a> {
    pub(super) at: usize,
    pub(super) conn: u64,
    pub(super) f: &'a Value,
}

impl<'a> View<'a> {
    pub(super) fn reqs(&self) -> impl Iterator<Item = Req<'a>> + 'a {
        self.p
            .log
            .iter()
            .enumerate()
            .filter(|(_, e)| {
                e["via"] == "frame" && e["from"] == "harness" && e["frame"]["t"] == "req"
            })
            .map(|(i, e)| Req {
                at: i,
                conn: e["conn"].as_u64().unwrap_or(0),
                f: &e["frame"],
            })
    }
    pub(super) fn reqs_of(&self, m: &'a str) -> impl Iterator<Item = Req<'a>> + 'a {
        self.reqs().filter(move |r| r.f["m"] == m)
    }
    /// Core's answer to a harness request.
    pub(super) fn answer(&self, r: &Req) -> Option<&'a Value> {
        self.answer_at(r).map(|(_, a)| a)
    }
    /// Core's answer to a harness request, with its log index.
    pub(super) fn answer_at(&self, r: &Req) -> Option<(usize, &'a Value)> {
        self.p.log.iter().enumerate().skip(r.at).find_map(|(i, e)| {
            (e["via"] == "frame"
                && e["from"] == "core"
                && e["conn"].as_u64() == Some(r.conn)
                && e["frame"]["t"] == "res"
                && e["frame"]["id"] == r.f["id"])
                .then_some((i, &e["frame"]))
        })
    }
    pub(super) fn run(&self, id: &str) -> Option<&'a RunInfo> {
        self.p.runs.iter().find(|r| r.id == id)
    }
    pub(super) fn run_of(&self, r: &Req) -> Option<&'a RunInfo> {
        r.f["p"]["runId"].as_str().and_then(|id| self.run(id))
    }
    pub(super) fn gates(&self) -> impl Iterator<Item = (usize, &'a Value)> + 'a {
        self.p
            .log
            .iter()
            .enumerate()
            .filter(|(_, e)| e["via"] == "gate")
    }
    pub(super) fn effect_gates(&self) -> impl Iterator<Item = (usize, &'a Value)> + 'a {
        self.gates().filter(|(_, e)| {
            matches!(
                e["route"].as_str(),
                Some("model-calls" | "tool-calls" | "http-calls")
            )
        })
    }
    /// Intents with their effect id and core's answer.
    pub(super) fn intents(&self) -> Vec<(Req<'a>, String, Option<&'a Value>)> {
        self.reqs_of("effect.intent")
            .map(|r| {
                let id = effect_id(&r.f["p"]["effect"]).unwrap_or_default();
                let a = self.answer(&r);
                (r, id, a)
            })
            .collect()
    }
}

pub(super) fn entries(output: &Value) -> Vec<&Value> {
    let mut out = Vec::new();
    for u in output["transcript"].as_array().into_iter().flatten() {
        out.extend(u["entries"].as_array().into_iter().flatten());
    }
    out
}

pub(super) fn offered<'a>(v: &View<'a>) -> Vec<&'a Value> {
    v.gates()
        .filter(|(_, g)| g["route"] == "model-calls")
        .flat_map(|(_, g)| g["body"]["call"]["tools"].as_array().into_iter().flatten())
        .collect()
}

/// A summary call's intent: `purpose: "summary"` beside the effect or on it (§ 6 says "on its
/// intent" and names no member).
pub(super) fn summary_call(q: &Req) -> bool {
    q.f["p"]["purpose"] == "summary" || q.f["p"]["effect"]["purpose"] == "summary"
}
