//! The check every core-api case runs on the listener's answers, whatever its steps expect
//! (docs/core-protocol.md, "The check every case runs"): a ledger row may claim it by name.

use crate::run::Failure;
use crate::suites::Judged;
use serde_json::{json, Value};

/// Every `{ok: false}` answer to a request carries a code of HARNESS_ERROR_CODES (limit_exceeded
/// with them) and a message (§ 1: `{t: "res", id, ok: false, e: {code, message}}`).
pub const LISTED_REFUSAL: &str = "listed-refusal";

/// The checks, by name.
pub const CHECKS: [&str; 1] = [LISTED_REFUSAL];

/// A refusal the listener answered to a `hello` or `request` step without a listed code or a
/// message: the step's failure, named after the check.
pub fn refusal(step: usize, action: &str, observed: &Value, shown: &Value) -> Option<Failure> {
    let answer = action == "hello" || action.starts_with("request ");
    if !answer || observed.get("ok") != Some(&json!(false)) {
        return None;
    }
    let e = &observed["e"];
    let code = e["code"].as_str();
    let (path, why, expected) = if !code.is_some_and(|c| super::fuzz::CODES.contains(&c)) {
        let why = format!("its code {} is not one of HARNESS_ERROR_CODES", e["code"]);
        ("/e/code", why, json!({ "$anyOf": super::fuzz::CODES }))
    } else if !e["message"].is_string() {
        let why = "it carries no message (e: {code, message})".to_string();
        ("/e/message", why, json!({ "$type": "string" }))
    } else {
        return None;
    };
    Some(Failure {
        step,
        action: action.to_string(),
        path: path.into(),
        message: format!("{LISTED_REFUSAL}: the listener refused the request, but {why}"),
        expected,
        actual: shown.clone(),
    })
}

/// What a failure of this check is judged as: the check, by name.
pub fn judged(f: &Failure) -> Option<Judged> {
    f.message
        .starts_with(&format!("{LISTED_REFUSAL}:"))
        .then(|| Judged::Check(LISTED_REFUSAL.into()))
}

#[cfg(test)]
mod tests {
    use super::refusal;
    use serde_json::json;

    #[test]
    fn a_refusal_needs_a_listed_code_and_a_message() {
        let ok = json!({ "ok": false, "e": { "code": "invalid", "message": "m" } });
        assert!(refusal(0, "request lease", &ok, &ok).is_none());
        let unlisted = json!({ "ok": false, "e": { "code": "run_over", "message": "m" } });
        let f = refusal(1, "request output", &unlisted, &unlisted).expect("a failure");
        assert_eq!((f.step, f.path.as_str()), (1, "/e/code"));
        let bare = json!({ "ok": false, "e": { "code": "invalid" } });
        assert_eq!(
            refusal(0, "hello", &bare, &bare).expect("a failure").path,
            "/e/message"
        );
        // Not an answer of the listener: a gate call's body is judged by its own steps.
        assert!(refusal(0, "gate model-calls", &unlisted, &unlisted).is_none());
    }
}
