//! The reference core's role in the World: it decides by the spec what a scripted core reads
//! from its scenario (tool intents by the Agent's targets and policy, `tools.rs`), and its
//! knobs make it a mutant or a variant; a variant of other wire names reads and writes its own
//! (`wire_names.rs`).

use super::{freedom, tools, wire_names};
use crate::knob::Knobs;
use crate::suites::core_api::knobs::{Mutant, Variant};
use crate::suites::world::role::{Decision, Role, UnknownMember};
use crate::suites::world::scenario::Scenario;
use serde_json::Value;
use std::collections::BTreeMap;

pub struct Reference {
    knobs: Knobs<Mutant, Variant>,
}

impl Reference {
    pub fn new(knobs: Knobs<Mutant, Variant>) -> Reference {
        Reference { knobs }
    }
}

impl Role for Reference {
    fn knobs(&self) -> Knobs<Mutant, Variant> {
        self.knobs
    }
    fn strict(&self) -> bool {
        true
    }
    fn routes(&self) -> bool {
        true
    }
    fn replays(&self) -> bool {
        true
    }
    fn states_facts(&self) -> bool {
        true
    }
    fn decides_effects(&self) -> bool {
        true
    }
    fn keeps_transcript(&self) -> bool {
        true
    }
    fn redacts(&self) -> bool {
        true
    }
    fn decide(
        &self,
        sc: &Scenario,
        effect: &Value,
        memories: &mut BTreeMap<String, String>,
    ) -> Option<Decision> {
        let d = tools::decide(
            &sc.agent,
            &sc.policy,
            &sc.discover,
            effect,
            memories,
            &self.knobs,
        );
        Some(d)
    }
    fn read_names(&self, on: &str, p: &Value) -> Option<Result<Value, UnknownMember>> {
        freedom::decides(&self.knobs, Variant::OtherWireNames).then(|| wire_names::read(on, p))
    }
    fn word(&self, on: &str, answer: Value) -> Value {
        // A core of MCP-shaped failures answers a tool call's failure as an MCP error result.
        let answer = match freedom::decides(&self.knobs, Variant::McpShapedFailures) {
            true => tools::mcp_shaped(answer),
            false => answer,
        };
        match freedom::decides(&self.knobs, Variant::OtherWireNames) {
            true => wire_names::answer(on, answer),
            false => answer,
        }
    }
}
