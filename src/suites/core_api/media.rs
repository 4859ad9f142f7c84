//! Media parts at the Model Gate (spec 004 § 5). ModelCallSchema's prompt and its media parts
//! are not printed, so a core says how its prompt holds one: `core.start` answers `mediaPrompt`
//! (docs/core-protocol.md), a ModelCall `prompt` in its own form with one media part, in which the
//! string `{{artifactId}}` stands for the artifact's id and `{{version}}` for its version. A case
//! writes `{"$media": {artifactId, version}}` where a prompt goes; a core that answered no
//! `mediaPrompt` has those cases `unimplemented`.

use serde_json::{json, Value};

const ID: &str = "{{artifactId}}";
const VERSION: &str = "{{version}}";

/// core.start's `mediaPrompt`, checked: absent (null), or a JSON value holding `{{artifactId}}`.
pub(super) fn template(said: Option<&Value>) -> Result<Value, String> {
    let Some(t) = said.filter(|v| !v.is_null()) else {
        return Ok(Value::Null);
    };
    if !t.to_string().contains(ID) {
        return Err(format!(
            "core.start's mediaPrompt is `{}`, not a prompt whose media part names {ID}",
            crate::snapshot::contain_text(&crate::snapshot::excerpt_text(&t.to_string(), 200))
        ));
    }
    Ok(t.clone())
}

/// Whether a value holds a `{"$media": …}` to fill.
pub fn wanted(v: &Value) -> bool {
    match v {
        Value::Object(m) if m.len() == 1 && m.contains_key("$media") => true,
        Value::Object(m) => m.values().any(wanted),
        Value::Array(a) => a.iter().any(wanted),
        _ => false,
    }
}

/// Replace each `{"$media": {artifactId, version}}` with the core's template, filled.
pub fn fill(v: &Value, template: &Value) -> Value {
    match v {
        Value::Object(m) if m.len() == 1 && m.contains_key("$media") => {
            let r = &m["$media"];
            put(template, &r["artifactId"], &r["version"])
        }
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), fill(x, template)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|x| fill(x, template)).collect()),
        other => other.clone(),
    }
}

/// The template with its placeholders replaced: a string that is one placeholder takes the value
/// itself (a number stays a number), one that holds it takes its text.
fn put(t: &Value, id: &Value, version: &Value) -> Value {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match t {
        Value::String(s) if s == ID => id.clone(),
        Value::String(s) if s == VERSION => version.clone(),
        Value::String(s) => json!(s.replace(ID, &text(id)).replace(VERSION, &text(version))),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), put(x, id, version)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|x| put(x, id, version)).collect()),
        other => other.clone(),
    }
}

/// The reference core's media parts: `{type: "file", artifactId, version}` anywhere in a prompt.
pub fn parts(prompt: &Value) -> Vec<(String, Option<u64>)> {
    let mut out = Vec::new();
    fn walk(v: &Value, out: &mut Vec<(String, Option<u64>)>) {
        match v {
            Value::Object(m) => {
                if let (Some("file"), Some(id)) = (
                    m.get("type").and_then(Value::as_str),
                    m.get("artifactId").and_then(Value::as_str),
                ) {
                    out.push((id.to_string(), m.get("version").and_then(Value::as_u64)));
                }
                m.values().for_each(|x| walk(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    walk(prompt, &mut out);
    out
}

/// The reference core's `mediaPrompt`.
pub fn reference_template() -> Value {
    json!([{ "role": "user", "content": [
        { "type": "text", "text": "What is in this file?" },
        { "type": "file", "artifactId": ID, "version": VERSION }
    ] }])
}

#[cfg(test)]
mod tests {
    use super::{fill, put, template};
    use serde_json::json;

    #[test]
    fn a_template_is_filled_in_place() {
        let t = json!([{ "part": { "id": "{{artifactId}}", "v": "{{version}}", "uri": "art://{{artifactId}}@{{version}}" } }]);
        let body =
            json!({ "call": { "prompt": { "$media": { "artifactId": "a1", "version": 2 } } } });
        let filled = fill(&body, &t);
        assert_eq!(
            filled["call"]["prompt"],
            json!([{ "part": { "id": "a1", "v": 2, "uri": "art://a1@2" } }])
        );
        assert_eq!(put(&json!("x"), &json!("a"), &json!(1)), json!("x"));
        assert!(template(Some(&json!({ "type": "image" }))).is_err());
        assert_eq!(template(None).unwrap(), serde_json::Value::Null);
    }

    fn verdict(said: serde_json::Value) -> crate::run::Verdict {
        let steps = r#"[ { "hello": {} }, { "control": "session.open" },
            { "request": { "m": "lease", "p": {} }, "save": "lease" },
            { "gate": { "route": "model-calls", "token": "${lease.r.run.token}", "key": "k",
              "body": { "call": { "prompt": { "$media": { "artifactId": "a", "version": 1 } } } } },
              "expect": { "status": 200 } } ]"#;
        let case = super::super::script_case("media", steps).unwrap();
        let connect: super::super::Connector = Box::new(move || {
            let core = super::super::reference::ReferenceCore::named("reference").unwrap();
            let said = Some(said.clone()).filter(|v| !v.is_null());
            let core = super::super::tests::Answering(core, "mediaPrompt", said);
            Ok(Box::new(core) as Box<dyn crate::adapter::Adapter>)
        });
        super::super::run_case(&case, &connect).verdict
    }

    #[test]
    fn no_media_prompt_is_unimplemented_never_a_pass() {
        assert!(matches!(
            verdict(serde_json::Value::Null),
            crate::run::Verdict::Unimplemented { .. }
        ));
        match verdict(json!("a prompt")) {
            crate::run::Verdict::Error { message } => {
                assert!(message.starts_with("core.start's mediaPrompt"), "{message}")
            }
            other => panic!("expected an error, got {other:?}"),
        }
    }
}
