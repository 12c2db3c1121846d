//! A tool call's arguments checked against the JSON schema its tool was
//! offered with: one check for every tool, so that no tool ever runs on a
//! guess. Models do leave out arguments, send `null`, misspell a name or
//! send a number as text; reading such a call as best it could, `reflect`
//! once rewrote MEMORY.md empty. Now the model gets an error naming the
//! argument and nothing runs.
//!
//! What is checked is what the tools declare: `properties` (each with a
//! `type`, and for numbers an optional `minimum`) and `required`. An
//! argument the schema does not name is an error, unless the schema says
//! `additionalProperties` (as an MCP server's tool may take more than it
//! names); an optional one sent as `null` counts as left out, as models
//! often send it so.

use crate::error::ToolError;
use serde_json::{Map, Value};

/// Every problem of `args` against `schema`, in one line; `Ok` when none.
pub fn check(schema: &Value, args: &Map<String, Value>) -> Result<(), ToolError> {
    let empty = Map::new();
    let properties = schema["properties"].as_object().unwrap_or(&empty);
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut problems = Vec::new();
    let open = matches!(
        schema.get("additionalProperties"),
        Some(Value::Bool(true) | Value::Object(_))
    );
    for name in args
        .keys()
        .filter(|k| !open && !properties.contains_key(*k))
    {
        let known: Vec<&str> = properties.keys().map(String::as_str).collect();
        problems.push(match known.is_empty() {
            true => format!("unknown argument \"{name}\" (it takes none)"),
            false => format!(
                "unknown argument \"{name}\" (it takes {})",
                known.join(", ")
            ),
        });
    }
    for (name, property) in properties {
        let wanted = property["type"].as_str();
        match args.get(name) {
            None if required.contains(&name.as_str()) => {
                // Go's wording.
                problems.push(format!("\"{name}\" argument is required"));
            }
            Some(Value::Null) if required.contains(&name.as_str()) => {
                let must = wanted.map_or(String::new(), |t| format!("; it must be {}", a(t)));
                problems.push(format!("\"{name}\" argument is null{must}"));
            }
            None | Some(Value::Null) => {}
            Some(value) => problems.extend(mistyped(name, property, value)),
        }
    }
    match problems.is_empty() {
        true => Ok(()),
        false => Err(problems.join("; ").into()),
    }
}

/// What is wrong with `value` as argument `name` of schema `property`.
fn mistyped(name: &str, property: &Value, value: &Value) -> Option<String> {
    let wanted = property["type"].as_str()?;
    let fits = match wanted {
        "string" => value.is_string(),
        "integer" => integer(value).is_some(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        // A type this check does not know is not held against the model.
        _ => true,
    };
    if !fits {
        return Some(format!(
            "\"{name}\" argument must be {}, not {}",
            a(wanted),
            a(json_type(value))
        ));
    }
    let (Some(min), Some(n)) = (property["minimum"].as_f64(), value.as_f64()) else {
        return None;
    };
    (n < min).then(|| format!("\"{name}\" argument must be at least {min}, not {value}"))
}

/// An integer argument's value: a JSON number without a fraction (`3`, or
/// `3.0` as some models write it), never one that is too large to hold.
pub fn integer(value: &Value) -> Option<i64> {
    if let Some(n) = value.as_i64() {
        return Some(n);
    }
    let f = value.as_f64()?;
    // Within i64's range, where every whole f64 converts exactly.
    (f.fract() == 0.0 && f.abs() < 9.0e18).then_some(f as i64)
}

/// The JSON type of `value`, as a schema names it.
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// `a string`, `an integer`.
fn a(kind: &str) -> String {
    match kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        true => format!("an {kind}"),
        false => format!("a {kind}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn problems(args: Value) -> String {
        let schema = json!({
            "type": "object",
            "properties": {
                "content": {"type": "string"},
                "days": {"type": "integer", "minimum": 0},
                "limit": {"type": "integer", "minimum": 1},
            },
            "required": ["content"],
        });
        match check(&schema, args.as_object().unwrap()) {
            Ok(()) => "ok".into(),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn each_problem_names_its_argument() {
        assert_eq!(problems(json!({"content": "x"})), "ok");
        assert_eq!(problems(json!({"content": "", "days": null})), "ok");
        assert_eq!(problems(json!({"content": "x", "days": 2.0})), "ok");
        assert_eq!(problems(json!({})), "\"content\" argument is required");
        assert_eq!(
            problems(json!({"content": null})),
            "\"content\" argument is null; it must be a string"
        );
        assert_eq!(
            problems(json!({"contents": "x"})),
            "unknown argument \"contents\" (it takes content, days, limit); \"content\" argument is required"
        );
        assert_eq!(
            problems(json!({"content": true, "days": "3", "limit": 0})),
            "\"content\" argument must be a string, not a boolean; \"days\" argument must be an integer, not a string; \"limit\" argument must be at least 1, not 0"
        );
        assert_eq!(
            problems(json!({"content": "x", "days": 1.5})),
            "\"days\" argument must be an integer, not a number"
        );
        assert_eq!(
            problems(json!({"content": "x", "days": -1})),
            "\"days\" argument must be at least 0, not -1"
        );
        assert_eq!(
            problems(json!({"content": "x", "days": 1e300})),
            "\"days\" argument must be an integer, not a number"
        );
    }

    #[test]
    fn an_open_schema_takes_arguments_it_does_not_name() {
        let schema = json!({"properties": {"a": {"type": "string"}}, "additionalProperties": true});
        let args = json!({"a": "x", "b": 1});
        assert!(check(&schema, args.as_object().unwrap()).is_ok());
        let args = json!({"a": 1});
        assert!(check(&schema, args.as_object().unwrap()).is_err());
    }
}
