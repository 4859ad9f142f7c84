//! A host case's steps in types: each step one call on the host shim ([`Method`]), its params
//! (filled with `${…}` at play time), what is saved and expected. Parsed once, when the case is
//! loaded (or when the fuzzer has patched a step).

use serde::Deserialize;
use serde_json::Value;

/// The calls a step may make, with their names on the wire: one list, read by serde, by the
/// player and by the schema test.
macro_rules! methods {
    ($($arm:ident = $name:literal,)*) => {
        /// A call on the host shim (docs/host-protocol.md).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
        pub enum Method {
            $(#[serde(rename = $name)] $arm,)*
        }

        impl Method {
            /// Every call, in the schema's order.
            pub const ALL: &[Method] = &[$(Method::$arm,)*];

            /// Its name on the wire: `host.bind` …
            pub fn name(self) -> &'static str {
                match self {
                    $(Method::$arm => $name,)*
                }
            }
        }
    };
}

methods! {
    Describe = "host.describe",
    Target = "host.target",
    Bind = "host.bind",
    Apply = "host.apply",
    Subscribe = "host.subscribe",
    Live = "host.live",
    Drops = "host.drops",
    WaitIdle = "host.waitIdle",
    Done = "host.done",
    Release = "host.release",
    CloseAttempt = "host.closeAttempt",
    Capabilities = "host.capabilities",
    Id = "host.id",
    LeaseEpoch = "host.leaseEpoch",
    Registration = "host.registration",
    Recovery = "host.recovery",
    Records = "host.records",
}

/// One step: `{call, params?, save?, expect?, note?}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Step {
    pub call: Method,
    /// The call's params, `{}` when the step gives none (filled at play time).
    #[serde(default = "empty")]
    pub params: Value,
    /// The name the answer is saved under.
    #[serde(default)]
    pub save: Option<String>,
    /// What the answer must match (filled); `null` is an expectation too.
    #[serde(default, deserialize_with = "present")]
    pub expect: Option<Value>,
}

fn empty() -> Value {
    Value::Object(Default::default())
}

/// A member that is there, even as `null`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

impl Step {
    /// A step from its JSON; an error is (a JSON pointer under the step, why).
    pub fn parse(v: &Value) -> Result<Step, (String, String)> {
        if v.get("call").is_none() {
            return Err((
                String::new(),
                "a step makes one call (`call`): none given".into(),
            ));
        }
        Step::deserialize(v).map_err(|e| (String::new(), e.to_string()))
    }
}

/// A case's steps, `/host/steps` parsed; an error is (a JSON pointer under `/host`, why).
pub fn parse_steps(host: &Value) -> Result<Vec<Step>, (String, String)> {
    host.get("steps")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, s)| Step::parse(s).map_err(|(at, why)| (format!("/steps/{i}{at}"), why)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{Method, Step};
    use serde_json::{json, Value};

    #[test]
    fn the_schema_lists_the_calls_of_the_enum() {
        let schema: Value = serde_json::from_str(include_str!(
            "../../../vectors/schemas/host-case.schema.json"
        ))
        .unwrap();
        let listed = &schema["properties"]["host"]["properties"]["steps"]["items"]["properties"]
            ["call"]["enum"];
        let ours: Vec<&str> = Method::ALL.iter().map(|m| m.name()).collect();
        assert_eq!(listed, &json!(ours));
        for m in Method::ALL {
            let step = Step::parse(&json!({ "call": m.name() })).unwrap();
            assert_eq!(step.call, *m);
        }
    }

    #[test]
    fn a_step_makes_one_call() {
        let (at, why) = Step::parse(&json!({ "params": {} })).unwrap_err();
        assert_eq!(at, "");
        assert!(why.contains("none given"), "{why}");
        let step = Step::parse(&json!({ "call": "host.id", "expect": null })).unwrap();
        assert_eq!(step.expect, Some(Value::Null));
        assert_eq!(step.params, json!({}));
    }
}
