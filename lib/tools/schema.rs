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
//!
//! A caller that stands between the model and the schema may add
//! arguments of its own: Gemini CLI gives every tool `wait_for_previous`
//! and tells its model it MUST set it on a dependent call. For such a
//! caller (`axe-mcp`'s clients) [`undeclared`] names what to leave out
//! before the check: every undeclared argument but a near miss of a
//! declared one ([`near_miss`]), which stays an error with its "did you
//! mean", since a misspelt `content` or `if_match` left out would change
//! what the call does. A model shown axe's schema as it is (`axe-run`)
//! has no one adding arguments, so there any undeclared one is its own
//! mistake and an error.

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
        let meant = known
            .iter()
            .filter(|k| near_miss(name, k))
            .min_by_key(|k| axe_base::suggest::edit_distance(name, k))
            .map_or(String::new(), |k| format!("did you mean \"{k}\"? "));
        problems.push(match known.is_empty() {
            true => format!("unknown argument \"{name}\" (it takes none)"),
            false => format!(
                "unknown argument \"{name}\" ({meant}it takes {})",
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

/// The arguments of `args` that `schema` does not name and that are no
/// near miss of a name it does: what a caller that adds arguments of its
/// own leaves out before [`check`]. None when the schema takes arguments
/// it does not name.
pub fn undeclared<'a>(schema: &Value, args: &'a Map<String, Value>) -> Vec<&'a str> {
    if matches!(
        schema.get("additionalProperties"),
        Some(Value::Bool(true) | Value::Object(_))
    ) {
        return Vec::new();
    }
    let empty = Map::new();
    let properties = schema["properties"].as_object().unwrap_or(&empty);
    args.keys()
        .filter(|k| !properties.contains_key(*k))
        .filter(|k| !properties.keys().any(|p| near_miss(k, p)))
        .map(String::as_str)
        .collect()
}

/// Whether `name` is a near miss of the declared `declared`: compared
/// without ASCII case, `_` and `-` (so `Content`, `ifMatch` and
/// `if-match` are near misses), at most two edits away, and those edits
/// less than half of `declared` (so `contents`, `topics`, `day` and
/// `if_mach` are near misses of `content`, `topic`, `days` and `if_match`;
/// `wait_for_previous`, `extra` and `key` for `days` are not).
pub fn near_miss(name: &str, declared: &str) -> bool {
    let fold = |s: &str| -> String {
        s.chars()
            .filter(|c| !matches!(c, '_' | '-'))
            .map(|c| c.to_ascii_lowercase())
            .collect()
    };
    let (name, declared) = (fold(name), fold(declared));
    let edits = axe_base::suggest::edit_distance(&name, &declared);
    edits <= 2 && edits * 2 < declared.chars().count()
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
            "unknown argument \"contents\" (did you mean \"content\"? it takes content, days, limit); \"content\" argument is required"
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
    fn a_clients_own_arguments_are_left_out_and_near_misses_kept() {
        let schema = json!({
            "properties": {
                "content": {"type": "string"},
                "if_match": {"type": "string"},
                "days": {"type": "integer"},
            },
        });
        let args = json!({
            "content": "x", "wait_for_previous": true, "extra": 1, "key": 2,
            "contents": "y", "Content": "z", "ifMatch": "h", "if-match": "h",
            "if_mach": "h", "day": 1,
        });
        let mut left = undeclared(&schema, args.as_object().unwrap());
        left.sort_unstable();
        assert_eq!(left, ["extra", "key", "wait_for_previous"]);
        assert!(near_miss("contents", "content"));
        assert!(!near_miss("wait_for_previous", "if_match"));
        assert!(!near_miss("ab", "cd"));
        let open = json!({"properties": {}, "additionalProperties": true});
        assert!(undeclared(&open, args.as_object().unwrap()).is_empty());
        // What is left is still checked: a near miss stays an error.
        let mut rest = args.as_object().unwrap().clone();
        rest.retain(|k, _| !left.contains(&k.as_str()));
        let err = check(&schema, &rest).unwrap_err().to_string();
        assert!(
            err.contains("unknown argument \"ifMatch\" (did you mean \"if_match\"?"),
            "{err}"
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
