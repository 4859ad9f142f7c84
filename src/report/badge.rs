//! shields.io endpoint badges: `https://img.shields.io/endpoint?url=…/badges/<runtime>.json`.

use super::{Mark, RunResult, RuntimeRun, Summary};
use serde_json::json;

/// The same numbers as every other rendering: passes over all cases; red when the run fails
/// for this runtime, yellow when anything did not pass, green otherwise.
pub fn badge(result: &RunResult, run: &RuntimeRun) -> String {
    let s = Summary::of(&run.cases, result.rules());
    let color = color(&s);
    let v = json!({
        "schemaVersion": 1,
        "label": format!("{} {}", result.suite, run.name()),
        "message": format!("{}/{} pass", s.pass, s.total()),
        "color": color,
    });
    serde_json::to_string_pretty(&v).unwrap_or_default()
}

/// The color of a badge: red when the run fails for this runtime, yellow when something did
/// not pass that no expectation declares (or nothing ran), green otherwise ([`Summary::mark`]).
pub(super) fn color(s: &Summary) -> &'static str {
    match s.mark() {
        Mark::Fails => "red",
        Mark::Warn | Mark::NoneRan => "yellow",
        Mark::Ok => "brightgreen",
    }
}
