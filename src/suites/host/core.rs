//! The Core library an adapter and its shim share: the bodies Core hands the adapter as bytes
//! (InputRequest, CreateRequest, the stored gate_response body). Spec 003 names each and puts
//! their decoding in the adapter, but prints no field of any, so their encoding is the adapter's
//! Core's own (vectors/host/ASSUMPTIONS.md A2, A3). [`Dialect::Reference`] is the reference's
//! Core, whose encoding is the one hcpspec uses for a shim without `host.encode`;
//! [`Dialect::Other`] encodes every body otherwise (variant `other-body-encoding`), so that the
//! suite proves it judges only what spec 003 fixes.
//!
//! A block is a `content.Block` rendered as the records render it (`{"type": "text", "text"}`):
//! each dialect carries blocks in its own form and decodes them back.

use serde_json::{json, Map, Value};

/// Bytes a Core cannot read as the body they are said to be, or a body it cannot encode: what
/// an adapter's decoder refuses them with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Undecodable(pub String);

impl From<String> for Undecodable {
    fn from(s: String) -> Undecodable {
        Undecodable(s)
    }
}

impl From<&str> for Undecodable {
    fn from(s: &str) -> Undecodable {
        Undecodable(s.into())
    }
}

impl From<Undecodable> for String {
    fn from(e: Undecodable) -> String {
        e.0
    }
}

/// Which Core the adapter (and its shim's fakes) are built on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// `{blocks, principal?, metadata?}`, `{blocks?, title?}`, `{interactionId, answer}`.
    Reference,
    /// `{content: [{kind, value | attrs}], from?, meta?}`, `{opening?, label?}`, and a gate body
    /// that is not JSON: `interaction ID\nanswer JSON`.
    Other,
}

fn object(bytes: &[u8], what: &str) -> Result<Map<String, Value>, Undecodable> {
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(o)) => Ok(o),
        Ok(_) => Err(format!("{what}: not an object").into()),
        Err(e) => Err(format!("{what}: {e}").into()),
    }
}

/// A `content.Block` as the Other Core carries it, and back.
fn other_block(b: &Value) -> Value {
    let mut rest = b.as_object().cloned().unwrap_or_default();
    let kind = rest.remove("type").unwrap_or(Value::Null);
    match (kind.as_str(), rest.get("text")) {
        (Some("text"), Some(t)) if rest.len() == 1 => json!({ "kind": "text", "value": t }),
        _ => json!({ "kind": kind, "attrs": rest }),
    }
}

fn block_of_other(b: &Value) -> Result<Value, Undecodable> {
    let kind = b.get("kind").cloned().unwrap_or(Value::Null);
    if kind == "text" {
        let Some(t) = b.get("value") else {
            return Err("content: a text block without value".into());
        };
        return Ok(json!({ "type": "text", "text": t }));
    }
    let mut out = b
        .get("attrs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    out.insert("type".into(), kind);
    Ok(Value::Object(out))
}

/// `blocks` of an object, the given member: absent or null is none.
fn list(o: &Map<String, Value>, member: &str, what: &str) -> Result<Vec<Value>, Undecodable> {
    match o.get(member) {
        Some(Value::Array(b)) => Ok(b.clone()),
        Some(Value::Null) | None => Ok(vec![]),
        Some(_) => Err(format!("{what}: {member} is not an array").into()),
    }
}

impl Dialect {
    /// InputRequest's members (a strict decoder refuses any other).
    fn input_members(self) -> [&'static str; 3] {
        match self {
            Dialect::Reference => ["blocks", "principal", "metadata"],
            Dialect::Other => ["content", "from", "meta"],
        }
    }

    /// An InputRequest carrying these, as bytes (what a create's blocks are re-presented in).
    pub fn input_request(self, blocks: &[Value], principal: &Value, metadata: &Value) -> Vec<u8> {
        let [b, p, m] = self.input_members();
        let blocks: Vec<Value> = match self {
            Dialect::Reference => blocks.to_vec(),
            Dialect::Other => blocks.iter().map(other_block).collect(),
        };
        let mut o = Map::new();
        o.insert(b.into(), Value::Array(blocks));
        if !principal.is_null() {
            o.insert(p.into(), principal.clone());
        }
        if !metadata.is_null() {
            o.insert(m.into(), metadata.clone());
        }
        Value::Object(o).to_string().into_bytes()
    }

    /// DecodeInputBlocks: an InputRequest's blocks (none when it has none). `strict`: a member
    /// InputRequest does not have is an error, as a strict decoder of Core's InputRequest has it.
    pub fn input_blocks(self, bytes: &[u8], strict: bool) -> Result<Vec<Value>, Undecodable> {
        let o = object(bytes, "input body")?;
        let members = self.input_members();
        if let Some(k) = o.keys().find(|k| strict && !members.contains(&k.as_str())) {
            return Err(format!("input body: unknown member {k:?}").into());
        }
        let blocks = list(&o, members[0], "input body")?;
        match self {
            Dialect::Reference => Ok(blocks),
            Dialect::Other => blocks.iter().map(block_of_other).collect(),
        }
    }

    /// A CreateRequest's blocks (its other members are the create's own). No bytes: none for
    /// the reference's Core; the Other Core says zero bytes are no CreateRequest (A24).
    pub fn create_blocks(self, bytes: &[u8]) -> Result<Vec<Value>, Undecodable> {
        if bytes.is_empty() {
            return match self {
                Dialect::Reference => Ok(vec![]),
                Dialect::Other => Err("create body: no bytes are no CreateRequest".into()),
            };
        }
        let o = object(bytes, "create body")?;
        match self {
            Dialect::Reference => list(&o, "blocks", "create body"),
            Dialect::Other => list(&o, "opening", "create body")?
                .iter()
                .map(block_of_other)
                .collect(),
        }
    }

    /// The stored gate_response body: the interaction it answers and the answer.
    pub fn gate_body(self, bytes: &[u8]) -> Result<(String, Value), Undecodable> {
        match self {
            Dialect::Reference => {
                let o = object(bytes, "gate_response body")?;
                let Some(id) = o.get("interactionId").and_then(Value::as_str) else {
                    return Err("gate_response body: no interactionId".into());
                };
                Ok((
                    id.to_string(),
                    o.get("answer").cloned().unwrap_or(Value::Null),
                ))
            }
            Dialect::Other => {
                let text = std::str::from_utf8(bytes).map_err(|e| format!("gate body: {e}"))?;
                let (first, second) = text.split_once('\n').unwrap_or((text, ""));
                let id = first.strip_prefix("interaction ").filter(|i| !i.is_empty());
                let answer = second
                    .strip_prefix("answer ")
                    .map(serde_json::from_str::<Value>);
                match (id, answer) {
                    (Some(id), Some(Ok(a))) => Ok((id.to_string(), a)),
                    _ => Err("gate body: not `interaction ID` and `answer JSON` lines".into()),
                }
            }
        }
    }

    /// `host.encode`: the abstract body of docs/host-protocol.md § 2 in this Core's bytes, as
    /// `{payload}` (JSON) or `{payloadText}`.
    pub fn encode(self, body: &Value) -> Result<Value, Undecodable> {
        let blocks = |v: &Value| -> Vec<Value> { v.as_array().cloned().unwrap_or_default() };
        let as_json = |bytes: Vec<u8>| -> Value {
            json!({ "payload": serde_json::from_slice::<Value>(&bytes).unwrap_or(Value::Null) })
        };
        match (body["type"].as_str().unwrap_or_default(), self) {
            ("input", d) => Ok(as_json(d.input_request(
                &blocks(&body["blocks"]),
                &body["principal"],
                &body["metadata"],
            ))),
            ("create", d) => {
                let (b, extra) = match d {
                    Dialect::Reference => ("blocks", "title"),
                    Dialect::Other => ("opening", "label"),
                };
                let mut o = Map::new();
                if let Some(bs) = body.get("blocks").filter(|v| !v.is_null()) {
                    let bs = blocks(bs);
                    let bs = match d {
                        Dialect::Reference => bs,
                        Dialect::Other => bs.iter().map(other_block).collect(),
                    };
                    o.insert(b.into(), Value::Array(bs));
                }
                if let Some(t) = body.get("createOnly").filter(|v| !v.is_null()) {
                    o.insert(extra.into(), t.clone());
                }
                Ok(json!({ "payload": o }))
            }
            ("gate_response", Dialect::Reference) => Ok(json!({ "payload": {
                "interactionId": body["interactionId"], "answer": body["answer"] } })),
            ("gate_response", Dialect::Other) => Ok(json!({ "payloadText": format!(
                "interaction {}\nanswer {}",
                body["interactionId"].as_str().unwrap_or_default(),
                body["answer"]
            ) })),
            ("undecodable", Dialect::Reference) => Ok(json!({ "payloadText": "not json" })),
            ("undecodable", Dialect::Other) => Ok(json!({ "payloadText": "not an input request" })),
            (other, _) => Err(format!(
                "type: no body {other:?} (input, create, gate_response, undecodable)"
            )
            .into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(encoded: &Value) -> Vec<u8> {
        match encoded.get("payloadText") {
            Some(t) => t.as_str().unwrap().as_bytes().to_vec(),
            None => encoded["payload"].to_string().into_bytes(),
        }
    }

    /// Each dialect decodes what it encodes: blocks, the gate's interaction and answer.
    #[test]
    fn each_dialect_reads_back_what_it_encodes() {
        let blocks = json!([{ "type": "text", "text": "hi" }, { "type": "image", "ref": "img-1" }]);
        for d in [Dialect::Reference, Dialect::Other] {
            let input = d
                .encode(&json!({ "type": "input", "blocks": blocks, "principal": { "id": "u" } }))
                .unwrap();
            assert_eq!(
                json!(d.input_blocks(&bytes(&input), true).unwrap()),
                blocks,
                "{d:?}"
            );
            let create = d
                .encode(&json!({ "type": "create", "blocks": blocks, "createOnly": "t" }))
                .unwrap();
            assert_eq!(
                json!(d.create_blocks(&bytes(&create)).unwrap()),
                blocks,
                "{d:?}"
            );
            // A strict InputRequest decoder refuses the create body: it has a create-only member.
            assert!(d.input_blocks(&bytes(&create), true).is_err(), "{d:?}");
            let gate = d
                .encode(&json!({ "type": "gate_response", "interactionId": "e-3", "answer": { "approve": true } }))
                .unwrap();
            assert_eq!(
                d.gate_body(&bytes(&gate)).unwrap(),
                ("e-3".to_string(), json!({ "approve": true }))
            );
            let bad = d.encode(&json!({ "type": "undecodable" })).unwrap();
            assert!(d.input_blocks(&bytes(&bad), false).is_err(), "{d:?}");
        }
        // The two really differ, in every body.
        let other = Dialect::Other
            .encode(&json!({ "type": "input", "blocks": blocks }))
            .unwrap();
        assert!(Dialect::Reference
            .input_blocks(&bytes(&other), false)
            .unwrap()
            .is_empty());
    }
}
