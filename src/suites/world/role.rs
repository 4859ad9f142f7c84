//! Which core a `World` plays. The harness-api suite's core is scripted: its scenario says what
//! core does, and it breaks no rule. The core-api suite's reference core (`core_api::reference`)
//! decides by the spec itself, and its knobs make it a mutant (one rule broken) or a variant
//! (one open point decided otherwise). Each method is one behaviour the two do differently; the
//! knobs (declared in `core_api::knobs`, a leaf) are read inline where they bite, through
//! `World::breaks` and `World::decides`. The reference's own code (its tool decisions and wire
//! names) is core-api's, reached through this trait, so the world imports nothing else of a
//! suite.

use super::scenario::Scenario;
use crate::knob::Knobs;
use crate::suites::core_api::knobs::{Mutant, Variant};
use serde_json::Value;
use std::collections::BTreeMap;

/// What core answers a tool intent it decides itself.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    Execute,
    /// Answered completed with this outcome, never run by the harness.
    Completed(Value),
    Pending,
}

/// A member a core does not know, in a request or a gate body: refused as invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{on}: unknown member {member}")]
pub struct UnknownMember {
    pub on: String,
    pub member: String,
}

pub trait Role: Send + Sync {
    /// The mutant or variant of the reference core this is, if any.
    fn knobs(&self) -> Knobs<Mutant, Variant>;
    /// Requests and gate bodies are held to v5's strict schemas and the run's limits, a token a
    /// renewal replaced is refused at the gates, and an upload ends with its run.
    fn strict(&self) -> bool;
    /// A session's runs go only to the harness it pinned (nylorun unless a manifest pins
    /// another) or to its pod's host (§ 1, § 2, § 9).
    fn routes(&self) -> bool;
    /// A segment a run left (its connection lost, or released) is offered again, and its new
    /// owner rejoins a gate call the old one left running.
    fn replays(&self) -> bool;
    /// TurnStart states the Agent's facts: its tools, skills, MCP discovery and the Tenant's
    /// limits with their defaults (§ 3, § 4's rows); a scripted turn says what the scenario says.
    fn states_facts(&self) -> bool;
    /// Core holds a tool call for a person's approval or runs it at its own gate (traced, its
    /// attempts capped, its MCP server declared), and fails a call whose fate the harness could
    /// not learn.
    fn decides_effects(&self) -> bool;
    /// The transcript is the outputs' edits folded, its cursor their count, and core writes the
    /// session's own events (context.compacted) from the model calls (§ 6).
    fn keeps_transcript(&self) -> bool;
    /// What a harness reports is recorded with every token core signed redacted.
    fn redacts(&self) -> bool;
    /// Core's own decision on a tool intent (the target table, the Tenant's policy); none
    /// when the scenario's rules decide.
    fn decide(
        &self,
        sc: &Scenario,
        effect: &Value,
        memories: &mut BTreeMap<String, String>,
    ) -> Option<Decision>;
    /// A request's params or a gate's body (`on` its method or route) in the reference's
    /// names, when this core reads names of its own; none when it reads the reference's.
    fn read_names(&self, on: &str, p: &Value) -> Option<Result<Value, UnknownMember>>;
    /// An answer to a request in this core's own words: its names, its shape of a failure.
    fn word(&self, on: &str, answer: Value) -> Value;
}

/// The harness-api suite's core: its scenario scripts what the reference core decides.
pub struct Scripted;

impl Role for Scripted {
    fn knobs(&self) -> Knobs<Mutant, Variant> {
        Knobs::default()
    }
    fn strict(&self) -> bool {
        false
    }
    fn routes(&self) -> bool {
        false
    }
    fn replays(&self) -> bool {
        false
    }
    fn states_facts(&self) -> bool {
        false
    }
    fn decides_effects(&self) -> bool {
        false
    }
    fn keeps_transcript(&self) -> bool {
        false
    }
    fn redacts(&self) -> bool {
        false
    }
    fn decide(
        &self,
        _: &Scenario,
        _: &Value,
        _: &mut BTreeMap<String, String>,
    ) -> Option<Decision> {
        None
    }
    fn read_names(&self, _: &str, _: &Value) -> Option<Result<Value, UnknownMember>> {
        None
    }
    fn word(&self, _: &str, answer: Value) -> Value {
        answer
    }
}
