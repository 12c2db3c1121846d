//! A request body that borrows the conversation. A long tool conversation
//! sends its whole history every turn; building that history as
//! `serde_json::Value`s first copied every message, the system prompt
//! (context files and all) and every tool schema into new strings each
//! turn, only to write them out. [`Json`] points at the conversation's own
//! text instead, and is written straight to the request's bytes: what a
//! turn costs is the writing, which the wire format makes unavoidable.

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Map, Value};

/// JSON borrowed from a conversation, with what is made per call owned.
pub enum Json<'a> {
    Str(&'a str),
    /// A value of the conversation: a tool's schema, a response schema.
    Value(&'a Value),
    /// A tool call's arguments.
    Args(&'a Map<String, Value>),
    /// Made here: a number, a flag, a small object.
    Owned(Value),
    Object(Vec<(&'a str, Json<'a>)>),
    Array(Vec<Json<'a>>),
}

impl<'a> Json<'a> {
    /// An object of `fields`.
    pub fn object(fields: impl IntoIterator<Item = (&'a str, Json<'a>)>) -> Json<'a> {
        Json::Object(fields.into_iter().collect())
    }

    /// `self` with `field` added, when it is an object.
    pub fn with(mut self, key: &'a str, value: Json<'a>) -> Json<'a> {
        if let Json::Object(fields) = &mut self {
            fields.retain(|(k, _)| *k != key);
            fields.push((key, value));
        }
        self
    }

    /// Its bytes.
    pub fn to_vec(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("JSON values serialize")
    }
}

impl<'a> From<&'a str> for Json<'a> {
    fn from(s: &'a str) -> Json<'a> {
        Json::Str(s)
    }
}

impl<'a> From<&'a String> for Json<'a> {
    fn from(s: &'a String) -> Json<'a> {
        Json::Str(s)
    }
}

impl From<Value> for Json<'_> {
    fn from(v: Value) -> Self {
        Json::Owned(v)
    }
}

impl Serialize for Json<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Json::Str(text) => s.serialize_str(text),
            Json::Value(v) => v.serialize(s),
            Json::Args(map) => map.serialize(s),
            Json::Owned(v) => v.serialize(s),
            Json::Object(fields) => {
                let mut map = s.serialize_map(Some(fields.len()))?;
                for (key, value) in fields {
                    map.serialize_entry(key, value)?;
                }
                map.end()
            }
            Json::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borrowed_json_writes_as_values_do() {
        let args: Map<String, Value> = serde_json::from_str(r#"{"b":[1,"x"],"a":null}"#).unwrap();
        let text = "a \"quoted\"\nline".to_owned();
        let body = Json::object([
            ("text", Json::from(&text)),
            ("args", Json::Args(&args)),
            ("n", Json::Owned(Value::from(3))),
            (
                "list",
                Json::Array(vec![Json::Str("x"), Json::Owned(Value::Bool(true))]),
            ),
        ])
        .with("n", Json::Owned(Value::from(4)));
        let parsed: Value = serde_json::from_slice(&body.to_vec()).unwrap();
        assert_eq!(
            parsed,
            serde_json::json!({"text": text, "args": args, "n": 4, "list": ["x", true]})
        );
    }
}
