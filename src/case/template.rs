//! `${name.path}` templates of the script suites (core-api, host): a later step reads what an
//! earlier step saved.

use serde_json::{json, Map, Value};

/// `${name.path}` in strings: a string that is one whole template becomes the saved value (of any
/// type); a template inside a longer string becomes its text. An unknown name is `null` / "".
pub fn fill(vars: &Map<String, Value>, v: &Value) -> Value {
    match v {
        Value::String(s)
            if s.starts_with("${") && s.ends_with('}') && s.matches("${").count() == 1 =>
        {
            lookup(vars, &s[2..s.len() - 1]).unwrap_or(Value::Null)
        }
        Value::String(s) if s.contains("${") => {
            static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
            let re = RE.get_or_init(|| regex::Regex::new(r"\$\{([^}]+)\}").expect("static"));
            json!(
                re.replace_all(s, |c: &regex::Captures| match lookup(vars, &c[1]) {
                    Some(Value::String(t)) => t,
                    Some(other) => other.to_string(),
                    None => String::new(),
                })
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(|x| fill(vars, x)).collect()),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, x)| (k.clone(), fill(vars, x))).collect())
        }
        other => other.clone(),
    }
}

/// The saved value at `name.path.to.value` (array indices as numbers).
pub fn lookup(vars: &Map<String, Value>, path: &str) -> Option<Value> {
    let mut parts = path.split('.');
    let mut v = vars.get(parts.next()?)?;
    for p in parts {
        v = match v {
            Value::Array(a) => a.get(p.parse::<usize>().ok()?)?,
            _ => v.get(p)?,
        };
    }
    Some(v.clone())
}
