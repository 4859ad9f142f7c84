//! Unit tests of the core-api runner's helpers.

use super::{default_harness, set_pointer};
use serde_json::json;

#[test]
fn the_default_harness_is_named_not_the_first_member() {
    // A Go shim's encoding/json writes map keys sorted: custom-x before nylorun.
    let h = json!({ "custom-x": "t1", "nylorun": "t2" });
    assert_eq!(default_harness(&h, "nylorun").as_deref(), Some("nylorun"));
    assert_eq!(default_harness(&h, "custom-x").as_deref(), Some("custom-x"));
    assert_eq!(
        default_harness(&json!({ "only": "t" }), "nylorun").as_deref(),
        Some("only")
    );
    assert_eq!(default_harness(&json!([]), "nylorun"), None);
}

/// The reference core, its core.start answering `member` as given (None: not at all): how a
/// shim declares what the reference would not.
pub(super) struct Answering(
    pub super::reference::ReferenceCore,
    pub &'static str,
    pub Option<serde_json::Value>,
);

impl crate::adapter::Adapter for Answering {
    fn call(
        &mut self,
        method: &str,
        params: serde_json::Value,
    ) -> Result<serde_json::Value, crate::adapter::CallError> {
        let mut r = self.0.call(method, params)?;
        if let (true, Some(o)) = (method == "core.start", r.as_object_mut()) {
            o.remove(self.1);
            if let Some(v) = &self.2 {
                o.insert(self.1.into(), v.clone());
            }
        }
        Ok(r)
    }
}

fn verdict_with_names(names: serde_json::Value, steps: &str) -> crate::run::Verdict {
    let case = super::script_case("names", steps).unwrap();
    let connect: super::Connector = Box::new(move || {
        let core = super::reference::ReferenceCore::named("reference").unwrap();
        Ok(Box::new(Answering(core, "names", Some(names.clone())))
            as Box<dyn crate::adapter::Adapter>)
    });
    super::run_case(&case, &connect).verdict
}

#[test]
fn bad_names_make_the_case_an_error_naming_them() {
    let hello = r#"[ { "hello": {}, "expect": { "ok": true } } ]"#;
    assert!(matches!(
        verdict_with_names(serde_json::Value::Null, hello),
        crate::run::Verdict::Pass
    ));
    let v = verdict_with_names(json!({ "lease": { "runId": "run" } }), hello);
    match v {
        crate::run::Verdict::Error { message } => {
            assert!(
                message.starts_with("core.start's names: `lease`"),
                "{message}"
            )
        }
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn declared_names_reach_the_core() {
    // The reference reads hcpspec's names: told its core calls `op` `action`, hcpspec sends
    // `action`, which the reference does not know ("unknown op").
    let steps = r#"[ { "hello": {} }, { "control": "session.open" },
        { "request": { "m": "lease", "p": {} }, "save": "lease" },
        { "request": { "m": "artifact.write", "p": { "runId": "${lease.r.run.runId}", "op": "begin", "name": "a" } },
          "expect": { "ok": true } } ]"#;
    assert!(matches!(
        verdict_with_names(serde_json::Value::Null, steps),
        crate::run::Verdict::Pass
    ));
    let v = verdict_with_names(json!({ "artifact.write": { "op": "action" } }), steps);
    match v {
        crate::run::Verdict::Fail(f) => {
            assert!(f.actual.to_string().contains("unknown op"), "{}", f.actual)
        }
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[test]
fn purpose_goes_where_the_pointer_says() {
    let mut p = json!({ "runId": "r", "effect": { "kind": "model" } });
    assert!(set_pointer(&mut p, "/effect/purpose", json!("summary")).unwrap());
    assert_eq!(p["effect"]["purpose"], "summary");
    assert!(p.get("purpose").is_none());
    assert!(
        !set_pointer(&mut p, "/runId/purpose", json!("summary")).unwrap(),
        "a string is no object"
    );
}

/// A case of vectors/core-api/05-gates with hcpspec starved right after it started its call in
/// flight (`{"wait": 2600}` put after the `async` gate step: longer than the fake tool or the
/// fixture model took to answer, as a machine at a load of 15 and more made it), on `core`.
fn starved_after_the_call(id: &str, core: &'static str) -> crate::run::Verdict {
    let file = std::path::Path::new("vectors/core-api/05-gates").join(format!("{id}.json"));
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join(&file)).unwrap();
    let mut case: serde_json::Value = serde_json::from_str(&text).unwrap();
    let steps = case["script"]["steps"].as_array_mut().unwrap();
    let at = steps
        .iter()
        .position(|s| s["gate"]["async"].is_string())
        .unwrap();
    steps.insert(at + 1, json!({ "wait": 2600 }));
    let denials = crate::case::load_denials(&root.join("vectors")).unwrap();
    let case =
        crate::suites::parse_case(&file, &case.to_string(), "core-api", "core", &denials).unwrap();
    let connect: super::Connector = Box::new(move || Ok(super::embedded(core).unwrap()));
    super::run_case(&case, &connect).verdict
}

#[test]
fn the_cancel_cases_do_not_bend_when_hcpspec_is_starved() {
    // § 5 "aborts": the reference passes and a core that ignores the cancel route fails, however
    // late the machine lets hcpspec send the cancel.
    let ids = ["http", "tool", "model"].map(|k| format!("{k}-call-cancel-route-aborts-it"));
    let runs: Vec<_> = ids
        .iter()
        .flat_map(|id| {
            [("reference", true), ("mutant:cancel-route-ignored", false)].map(|c| (id.clone(), c))
        })
        .map(|(id, (core, passes))| {
            std::thread::spawn(move || (starved_after_the_call(&id, core), id, core, passes))
        })
        .collect();
    for run in runs {
        let (verdict, id, core, passes) = run.join().unwrap();
        let passed = matches!(verdict, crate::run::Verdict::Pass);
        assert_eq!(passed, passes, "{id} on {core}: {verdict:?}");
    }
}
