//! shields.io endpoint badges: `https://img.shields.io/endpoint?url=…/badges/<runtime>.json`.

use super::{RuntimeRun, Summary};
use crate::case::Level;
use serde_json::json;

pub fn badge(run: &RuntimeRun) -> String {
    let must: Vec<_> = run
        .cases
        .iter()
        .filter(|c| c.level == Level::MUST)
        .cloned()
        .collect();
    let s = Summary::of(&must);
    let color = if s.must_fail > 0 {
        "red"
    } else if s.expected_fail + s.skip + s.unimplemented > 0 {
        "yellow"
    } else {
        "brightgreen"
    };
    let v = json!({
        "schemaVersion": 1,
        "label": format!("hcp {}", run.name()),
        "message": format!("{}/{} MUST", s.pass, must.len()),
        "color": color,
    });
    serde_json::to_string_pretty(&v).unwrap_or_default()
}
