//! `${name.path}` templates of the script suites (core-api, host): a later step reads what an
//! earlier step saved.

use crate::error::BadInput;
use serde_json::{json, Map, Value};

/// How large one expansion may grow: the bytes templates put in (a whole-value template counts
/// its value's JSON size). A case naming a large saved value many times is stopped here, with a
/// clear error, instead of multiplying it (docs/security.md).
pub const EXPANSION_CAP: usize = 8 << 20;

/// How much a case's saved values (`save`) may hold in all, their JSON size: templates read
/// them, so a case saving large values step after step is stopped here (docs/security.md).
pub const SAVED_CAP: usize = 32 << 20;

/// Keep `value` as `name` for later steps' templates. An error, and nothing kept, when the saved
/// values would hold more than [`SAVED_CAP`] bytes in all.
pub fn save(vars: &mut Map<String, Value>, name: &str, value: Value) -> Result<(), BadInput> {
    let old = vars.insert(name.to_string(), value);
    let mut total = 0usize;
    for v in vars.values() {
        total += size_of(v, SAVED_CAP + 1 - total);
        if total > SAVED_CAP {
            match old {
                Some(o) => vars.insert(name.to_string(), o),
                None => vars.remove(name),
            };
            return Err(BadInput(format!(
                "saved values past {} MiB (saving `{}`): a case's steps save too much",
                SAVED_CAP >> 20,
                name.chars().take(64).collect::<String>()
            )));
        }
    }
    Ok(())
}

/// `${name.path}` in strings: a string that is one whole template becomes the saved value (of any
/// type); a template inside a longer string becomes its text. An unknown name is `null` / "".
/// An error when the expansion would put more than [`EXPANSION_CAP`] bytes in.
pub fn fill(vars: &Map<String, Value>, v: &Value) -> Result<Value, BadInput> {
    let mut budget = EXPANSION_CAP;
    fill_within(vars, v, &mut budget).map_err(BadInput)
}

fn spend(budget: &mut usize, bytes: usize) -> Result<(), String> {
    *budget = budget.checked_sub(bytes).ok_or_else(|| {
        format!(
            "a template expansion past {} MiB: a step names saved values too large or too often",
            EXPANSION_CAP >> 20
        )
    })?;
    Ok(())
}

/// The JSON size of a value, stopping early once past `limit`.
fn size_of(v: &Value, limit: usize) -> usize {
    match v {
        Value::String(s) => s.len() + 2,
        Value::Array(a) => {
            let mut n = 2;
            for x in a {
                n += size_of(x, limit) + 1;
                if n > limit {
                    break;
                }
            }
            n
        }
        Value::Object(o) => {
            let mut n = 2;
            for (k, x) in o {
                n += k.len() + 4 + size_of(x, limit);
                if n > limit {
                    break;
                }
            }
            n
        }
        other => other.to_string().len(),
    }
}

fn fill_within(vars: &Map<String, Value>, v: &Value, budget: &mut usize) -> Result<Value, String> {
    Ok(match v {
        Value::String(s)
            if s.starts_with("${") && s.ends_with('}') && s.matches("${").count() == 1 =>
        {
            let found = lookup(vars, &s[2..s.len() - 1]).unwrap_or(Value::Null);
            spend(budget, size_of(&found, *budget + 1))?;
            found
        }
        Value::String(s) if s.contains("${") => {
            static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
            let re = RE.get_or_init(|| regex::Regex::new(r"\$\{([^}]+)\}").expect("static"));
            let mut out = String::new();
            let mut last = 0;
            for c in re.captures_iter(s) {
                let whole = c.get(0).expect("a match");
                let text = match lookup(vars, &c[1]) {
                    Some(Value::String(t)) => t,
                    Some(other) => {
                        // Measured before it is written out: a huge value is never serialised.
                        if size_of(&other, *budget + 1) > *budget {
                            spend(budget, *budget + 1)?;
                        }
                        other.to_string()
                    }
                    None => String::new(),
                };
                spend(budget, text.len())?;
                out.push_str(&s[last..whole.start()]);
                out.push_str(&text);
                last = whole.end();
            }
            out.push_str(&s[last..]);
            json!(out)
        }
        Value::Array(a) => Value::Array(
            a.iter()
                .map(|x| fill_within(vars, x, budget))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| Ok((k.clone(), fill_within(vars, x, budget)?)))
                .collect::<Result<_, String>>()?,
        ),
        other => other.clone(),
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_values_are_capped_in_all() {
        let mut vars = Map::new();
        let mb = json!("x".repeat(1 << 20));
        for i in 0..31 {
            save(&mut vars, &format!("v{i}"), mb.clone()).unwrap();
        }
        let e = save(&mut vars, "big", json!("x".repeat(2 << 20))).unwrap_err();
        assert!(e.0.contains("saved values past 32 MiB"), "{e}");
        assert!(!vars.contains_key("big"));
        // Saving again under a name replaces its value: no growth.
        save(&mut vars, "v0", json!("small")).unwrap();
        save(&mut vars, "big", mb).unwrap();
    }
}
