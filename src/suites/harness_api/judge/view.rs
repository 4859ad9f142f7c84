//! The view of a played scenario's log the checks read: the harness's requests, core's answers,
//! the gate calls, and what they carried.

use super::{Played, RunInfo};
use crate::suites::world::model::effect_id;
use serde_json::Value;
use std::cell::Cell;
use std::collections::HashMap;

/// The log read once, indexed: every check asks of it by run, connection and request id, so
/// judging stays near-linear in the log (it was a scan of the log per run and per request:
/// 1000 offers took a minute).
pub struct View<'a> {
    pub(super) p: &'a Played,
    reqs: Vec<Req<'a>>,
    gates: Vec<(usize, &'a Value)>,
    /// Core's answers, by connection and request id (its JSON text): their log indexes, in order.
    answers: HashMap<(u64, String), Vec<usize>>,
    runs: HashMap<&'a str, usize>,
    /// Each run's requests and gate calls, by `runId`: indexes into `reqs` and `gates`.
    reqs_by_run: HashMap<&'a str, Vec<usize>>,
    gates_by_run: HashMap<&'a str, Vec<usize>>,
    /// Entries the checks were handed, counted: what judging costs, for the tests.
    looked: Cell<u64>,
}

/// A harness request: log index, connection, the frame.
#[derive(Clone, Copy)]
pub struct Req<'a> {
    pub(super) at: usize,
    pub(super) conn: u64,
    pub(super) f: &'a Value,
}

impl<'a> View<'a> {
    pub(super) fn new(p: &'a Played) -> View<'a> {
        let mut v = View {
            p,
            reqs: vec![],
            gates: vec![],
            answers: HashMap::new(),
            runs: p
                .runs
                .iter()
                .enumerate()
                .map(|(i, r)| (r.id.as_str(), i))
                .rev()
                .collect(),
            reqs_by_run: HashMap::new(),
            gates_by_run: HashMap::new(),
            looked: Cell::new(0),
        };
        for (i, e) in p.log.iter().enumerate() {
            let conn = e["conn"].as_u64();
            if e["via"] == "gate" {
                if let Some(run) = e["run"].as_str() {
                    v.gates_by_run.entry(run).or_default().push(v.gates.len());
                }
                v.gates.push((i, e));
            } else if e["via"] == "frame" && e["from"] == "harness" && e["frame"]["t"] == "req" {
                let f = &e["frame"];
                if let Some(run) = f["p"]["runId"].as_str() {
                    v.reqs_by_run.entry(run).or_default().push(v.reqs.len());
                }
                v.reqs.push(Req {
                    at: i,
                    conn: conn.unwrap_or(0),
                    f,
                });
            } else if e["via"] == "frame" && e["from"] == "core" && e["frame"]["t"] == "res" {
                if let Some(conn) = conn {
                    let key = (conn, e["frame"]["id"].to_string());
                    v.answers.entry(key).or_default().push(i);
                }
            }
        }
        v
    }

    /// How many entries the checks were handed so far.
    #[cfg(test)]
    pub(super) fn looked(&self) -> u64 {
        self.looked.get()
    }

    fn count(&self) {
        self.looked.set(self.looked.get() + 1);
    }

    pub(super) fn reqs(&self) -> impl Iterator<Item = Req<'a>> + '_ {
        self.reqs.iter().copied().inspect(|_| self.count())
    }
    pub(super) fn reqs_of<'s>(&'s self, m: &'s str) -> impl Iterator<Item = Req<'a>> + 's {
        self.reqs().filter(move |r| r.f["m"] == m)
    }
    /// Intents about one run, with their effect id and core's answer.
    pub(super) fn intents_about(&self, run: &str) -> Vec<(Req<'a>, String, Option<&'a Value>)> {
        self.reqs_about(run)
            .filter(|r| r.f["m"] == "effect.intent")
            .map(|r| {
                let id = effect_id(&r.f["p"]["effect"]).unwrap_or_default();
                (r, id, self.answer(&r))
            })
            .collect()
    }
    /// The requests about one run (`p.runId`), in order.
    pub(super) fn reqs_about<'s>(&'s self, run: &str) -> impl Iterator<Item = Req<'a>> + 's {
        let at = self.reqs_by_run.get(run).map_or(&[][..], Vec::as_slice);
        at.iter().map(|i| self.reqs[*i]).inspect(|_| self.count())
    }
    /// Core's answer to a harness request.
    pub(super) fn answer(&self, r: &Req) -> Option<&'a Value> {
        self.answer_at(r).map(|(_, a)| a)
    }
    /// Core's answer to a harness request, with its log index: the first core sent on its
    /// connection with its id, after it.
    pub(super) fn answer_at(&self, r: &Req) -> Option<(usize, &'a Value)> {
        self.count();
        let at = self.answers.get(&(r.conn, r.f["id"].to_string()))?;
        let i = at[at.partition_point(|i| *i < r.at)..].first()?;
        Some((*i, &self.p.log[*i]["frame"]))
    }
    pub(super) fn run(&self, id: &str) -> Option<&'a RunInfo> {
        self.count();
        self.runs.get(id).map(|i| &self.p.runs[*i])
    }
    pub(super) fn run_of(&self, r: &Req) -> Option<&'a RunInfo> {
        r.f["p"]["runId"].as_str().and_then(|id| self.run(id))
    }
    pub(super) fn gates(&self) -> impl Iterator<Item = (usize, &'a Value)> + '_ {
        self.gates.iter().copied().inspect(|_| self.count())
    }
    /// The gate calls for one run, in order.
    pub(super) fn gates_about<'s>(
        &'s self,
        run: &str,
    ) -> impl Iterator<Item = (usize, &'a Value)> + 's {
        let at = self.gates_by_run.get(run).map_or(&[][..], Vec::as_slice);
        at.iter().map(|i| self.gates[*i]).inspect(|_| self.count())
    }
    pub(super) fn effect_gates(&self) -> impl Iterator<Item = (usize, &'a Value)> + '_ {
        self.gates().filter(|(_, e)| effect_gate(e))
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

/// A gate call for an effect (a model, tool or HTTP call).
pub(super) fn effect_gate(g: &Value) -> bool {
    matches!(
        g["route"].as_str(),
        Some("model-calls" | "tool-calls" | "http-calls")
    )
}
