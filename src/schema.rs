//! The JSON Schemas of `vectors/schemas/`, compiled once. They are embedded so that a release
//! binary validates packs and cases without the source tree beside it.

use jsonschema::Validator;
use serde_json::Value;
use std::sync::OnceLock;

macro_rules! schema {
    ($fn:ident, $file:literal) => {
        pub fn $fn() -> &'static Validator {
            static V: OnceLock<Validator> = OnceLock::new();
            V.get_or_init(|| compile(include_str!(concat!("../vectors/schemas/", $file)), $file))
        }
    };
}

schema!(surface, "surface.schema.json");
schema!(policy, "policy.schema.json");
schema!(case, "case.schema.json");
schema!(scenario, "harness-scenario.schema.json");
schema!(core_script, "core-script.schema.json");
schema!(host_case, "host-case.schema.json");
schema!(run_result, "run-result.schema.json");
schema!(site_api, "site-api.schema.json");

fn compile(text: &str, name: &str) -> Validator {
    // The schemas are part of this crate; a broken one is a build defect, caught by `cargo test`.
    let value: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("schema {name}: {e}"));
    jsonschema::validator_for(&value).unwrap_or_else(|e| panic!("schema {name}: {e}"))
}

/// Every violation as (JSON pointer, message), in document order.
pub fn violations(validator: &Validator, instance: &Value) -> Vec<(String, String)> {
    // `is_valid` short-circuits and builds no errors: the common case costs least.
    if validator.is_valid(instance) {
        return Vec::new();
    }
    validator
        .iter_errors(instance)
        .map(|e| (e.instance_path().to_string(), e.to_string()))
        .collect()
}
