//! A core-api script in types: `core.start`'s params and the steps, each step one [`Action`].
//! Parsed once, when the case is loaded (or when the fuzzer builds a script); the player matches
//! on the action. What a step fills with `${…}` at play time stays JSON until then.

use serde::Deserialize;
use serde_json::{json, Map, Value};

/// The members of a step that are not its action.
const NOT_ACTIONS: [&str; 4] = ["params", "save", "expect", "note"];

/// What a step does: exactly one per step. Its name is the step's member (`control`,
/// `gateResult` …), as the script schema lists them.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Action {
    /// A method of the control protocol; its params are the step's `params`.
    Control(String),
    /// Open a harness connection (`{path?, as?, token?, harness?, api?, silent?}`, filled).
    Connect(Value),
    /// Connect, then send `hello` (`connect`'s members and `{name?, features?}`, filled).
    Hello(Value),
    /// Send a request and await its answer (`{on?, m, p, id?, purpose?, padTo?, padAt?,
    /// binary?, append?, waitMs?}`, filled).
    Request(Value),
    /// A gate call (`{route, body?, token?, key?, async?}`, filled).
    Gate(Value),
    /// A POST to the core's harness listener (`{path, token?, body?}`, filled).
    Post(Value),
    /// The next message of a method core sends.
    Await(Await),
    /// Sleep so many ms (at most 10 s).
    Wait(u64),
    /// A raw frame.
    Send(Send),
    /// What the fake tools received (`{}`), or await a tool's call or release its held calls
    /// (`{await: NAME}`, `{release: NAME}`).
    Fakes(Value),
    /// Close a connection with no goodbye.
    Close(Close),
    /// The answer of a gate call started with `async`.
    GateResult(String),
    /// A value built from earlier observations (filled).
    Recall(Value),
}

/// `{on?, m, waitMs?}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Await {
    #[serde(default = "h")]
    pub on: String,
    pub m: String,
    pub wait_ms: Option<u64>,
}

/// `{on?, text}` or `{on?, binary}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Send {
    #[serde(default = "h")]
    pub on: String,
    pub text: Option<String>,
    pub binary: Option<String>,
}

/// `{on?}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Close {
    #[serde(default = "h")]
    pub on: String,
}

/// The connection a step names none of.
fn h() -> String {
    "h".into()
}

/// One step: its action, and what is done with the observation.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub action: Action,
    /// `control`'s params (filled).
    pub params: Option<Value>,
    /// The name the observation is saved under.
    pub save: Option<String>,
    /// What the observation must match (filled).
    pub expect: Option<Value>,
}

/// A script: `core.start`'s params and the steps.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Script {
    pub start: Value,
    pub steps: Vec<Step>,
}

impl Step {
    /// A step from its JSON: exactly one action. An error is (a JSON pointer under the step,
    /// why).
    pub fn parse(v: &Value) -> Result<Step, (String, String)> {
        let Some(o) = v.as_object() else {
            return Err((String::new(), "a step is an object".into()));
        };
        let mut actions = o.keys().filter(|k| !NOT_ACTIONS.contains(&k.as_str()));
        let (Some(key), None) = (actions.next(), actions.next()) else {
            let named: Vec<String> = o
                .keys()
                .filter(|k| !NOT_ACTIONS.contains(&k.as_str()))
                .map(|k| format!("`{k}`"))
                .collect();
            let why = match named.len() {
                0 => "a step takes one action (control, connect, request …): none given".into(),
                _ => format!("a step takes one action: {} given", named.join(" and ")),
            };
            return Err((String::new(), why));
        };
        let action = Action::deserialize(&Value::Object(Map::from_iter([(
            key.clone(),
            o[key].clone(),
        )])))
        .map_err(|e| (format!("/{key}"), e.to_string()))?;
        let save = match o.get("save") {
            None => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => return Err(("/save".into(), "`save` is a name".into())),
        };
        Ok(Step {
            action,
            params: o.get("params").cloned(),
            save,
            expect: o.get("expect").cloned(),
        })
    }
}

impl Script {
    /// A script from its JSON `{start?, steps?}`; an error is (a JSON pointer under the script,
    /// why).
    pub fn parse(v: &Value) -> Result<Script, (String, String)> {
        let steps = v
            .get("steps")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, s)| Step::parse(s).map_err(|(at, why)| (format!("/steps/{i}{at}"), why)))
            .collect::<Result<_, _>>()?;
        Ok(Script {
            start: v.get("start").cloned().unwrap_or(json!({})),
            steps,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{Action, Step, NOT_ACTIONS};
    use serde::Deserialize;
    use serde_json::{json, Value};

    /// The actions serde knows, as its error for an unknown one lists them: the enum's own list.
    fn actions() -> Vec<String> {
        let e = Action::deserialize(&json!({ "no-such-action": 1 })).unwrap_err();
        let e = e.to_string();
        let list = e
            .split("expected one of ")
            .nth(1)
            .expect("serde lists them");
        list.split(", ")
            .map(|s| s.trim_matches('`').to_string())
            .collect()
    }

    #[test]
    fn the_schema_lists_the_actions_of_the_enum() {
        let schema: Value = serde_json::from_str(include_str!(
            "../../../vectors/schemas/core-script.schema.json"
        ))
        .unwrap();
        let mut listed: Vec<String> = schema["properties"]["script"]["properties"]["steps"]
            ["items"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .filter(|k| !NOT_ACTIONS.contains(&k.as_str()))
            .cloned()
            .collect();
        let mut ours = actions();
        listed.sort();
        ours.sort();
        assert_eq!(listed, ours);
    }

    #[test]
    fn a_step_has_one_action() {
        let (at, why) = Step::parse(&json!({ "expect": { "ok": true } })).unwrap_err();
        assert_eq!(at, "");
        assert!(why.contains("none given"), "{why}");
        let (at, why) = Step::parse(&json!({ "connect": {}, "hello": {} })).unwrap_err();
        assert_eq!(at, "");
        assert!(why.contains("`connect` and `hello`"), "{why}");
        let step = Step::parse(&json!({ "close": {}, "save": "c" })).unwrap();
        assert_eq!(step.action, Action::Close(super::Close { on: "h".into() }));
        assert_eq!(step.save.as_deref(), Some("c"));
    }
}
