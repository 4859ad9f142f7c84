//! A case's `patch` of a pack file: edits at JSON pointers (shared with the fuzzers' mutators).

use crate::error::BadInput;
use serde_json::Value;

/// Set (`Some`) or remove (`None`) at a JSON pointer; the parent must exist; `-` appends.
pub fn set(doc: &mut Value, pointer: &str, value: Option<Value>) -> Result<(), BadInput> {
    // Bounded: patches chained along ever deeper pointers built a document nested past what
    // printing and dropping it take on a thread's stack.
    crate::pointer::bounded_tokens(pointer)?;
    let (parent, last) = pointer
        .rsplit_once('/')
        .ok_or_else(|| format!("`{pointer}` is not a JSON pointer"))?;
    let last = crate::pointer::unescape(last).into_owned();
    let target = doc
        .pointer_mut(parent)
        .ok_or_else(|| format!("no parent at `{parent}`"))?;
    match target {
        Value::Object(m) => {
            match value {
                None => {
                    m.remove(&last);
                }
                Some(v) => {
                    m.insert(last, v);
                }
            }
            Ok(())
        }
        Value::Array(a) if last == "-" => {
            if let Some(v) = value {
                a.push(v);
            }
            Ok(())
        }
        Value::Array(a) => {
            let i: usize = last
                .parse()
                .map_err(|_| format!("`{last}` is not an index"))?;
            if i >= a.len() {
                return Err(BadInput(format!("index {i} is past the end")));
            }
            match value {
                None => {
                    a.remove(i);
                }
                Some(v) => a[i] = v,
            }
            Ok(())
        }
        _ => Err(BadInput(format!(
            "`{parent}` is neither an object nor an array"
        ))),
    }
}
