//! The World of a Harness API core: its runs, journal, transcript, artifacts and gates. It is
//! the model both suites are built on, told apart by the `Role` it plays (`role.rs`): the
//! harness-api suite's scripted core, where hcpspec plays core to the harness under test, and the
//! core-api suite's reference core. It imports no suite but the reference core's knob
//! declarations (`core_api::knobs`) and its freedom variant's choices (`core_api::freedom`),
//! two leaves that import nothing of either: its knob checks stay inline where they bite, behind
//! `World::breaks` and `World::decides`, false in the scripted role by construction (its knobs
//! are none, so its freedom is none too).

pub mod artifacts;
pub mod budget;
pub mod core;
pub mod folders;
pub mod gates;
pub mod model;
pub mod role;
pub mod scenario;
pub mod time;

/// Bytes as standard base64, as the Harness API carries them.
pub fn b64(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Standard base64 back to bytes, if it is base64.
pub fn unb64(s: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(s).ok()
}

/// The artifact a commit writes to and its new version: the next of `of` (its versions so far
/// kept in `older`, each with the members `keep`), or a new artifact's first.
pub(super) fn next_version(
    w: &model::World,
    of: Option<&str>,
    keep: &[&str],
) -> (String, u64, Vec<serde_json::Value>) {
    match of.and_then(|a| w.artifacts.get(a).map(|x| (a, x))) {
        Some((a, x)) => {
            let mut older = x["older"].as_array().cloned().unwrap_or_default();
            let kept: serde_json::Map<String, serde_json::Value> = keep
                .iter()
                .map(|k| (k.to_string(), x[*k].clone()))
                .collect();
            older.push(serde_json::Value::Object(kept));
            let version = x["meta"]["version"].as_u64().unwrap_or(1) + 1;
            (a.to_string(), version, older)
        }
        None => {
            let aid = format!("art-{}", w.artifacts.len() + 1);
            let aid = crate::suites::core_api::freedom::id(&w.knobs(), "artifactId", &aid);
            (aid, 1, vec![])
        }
    }
}
