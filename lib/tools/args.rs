//! A tool's arguments as a typed struct, declared once with [`args!`]: the
//! declaration yields the struct, the JSON schema the tool is offered
//! with, and the reading of a call's arguments into the struct, so the
//! schema a model sees and what the tool reads cannot drift apart.
//!
//! A field is required unless its type is an `Option`. Arguments are read
//! only after [`crate::schema::check`] passed them against the same
//! schema, so reading cannot meet a wrong type: `null` for an optional
//! argument reads as left out, as the check lets it through, and an
//! integer sent as `3.0` reads as 3, as the check takes it.
//!
//! Hand-written rather than `schemars`: these schemas are a few flat
//! objects of strings, integers and booleans, which the macro below says
//! in full, and they must stay byte for byte what models and MCP clients
//! were offered before (no `$schema`, `title` or `["string", "null"]`,
//! which strict clients refuse).

use crate::error::ToolError;
use serde_json::{Map, Value};

/// What a field's type says in a schema, and how its value is read.
pub trait Param: Sized {
    /// Its JSON schema type.
    const TYPE: &'static str;
    /// Whether a call must give it.
    const REQUIRED: bool = true;
    /// The least value the schema takes, for the integers that have one.
    const MINIMUM: Option<u64> = None;
    /// The value of an argument given as `value` (`None` when left out):
    /// `None` when it is not one of this type.
    fn read(value: Option<&Value>) -> Option<Self>;
}

impl Param for String {
    const TYPE: &'static str = "string";
    fn read(value: Option<&Value>) -> Option<Self> {
        value?.as_str().map(str::to_owned)
    }
}

impl Param for bool {
    const TYPE: &'static str = "boolean";
    fn read(value: Option<&Value>) -> Option<Self> {
        value?.as_bool()
    }
}

/// An integer as given, negative included.
impl Param for i64 {
    const TYPE: &'static str = "integer";
    fn read(value: Option<&Value>) -> Option<Self> {
        crate::schema::integer(value?)
    }
}

/// An integer the schema keeps at 0 or more: its type says `minimum`, so
/// a negative one is refused before it is read.
impl Param for u64 {
    const TYPE: &'static str = "integer";
    const MINIMUM: Option<u64> = Some(0);
    fn read(value: Option<&Value>) -> Option<Self> {
        i64::read(value).map(|n| u64::try_from(n).unwrap_or(0))
    }
}

impl<T: Param> Param for Option<T> {
    const TYPE: &'static str = T::TYPE;
    const REQUIRED: bool = false;
    const MINIMUM: Option<u64> = T::MINIMUM;
    fn read(value: Option<&Value>) -> Option<Self> {
        Some(T::read(value.filter(|v| !v.is_null())))
    }
}

/// A tool's arguments, read from a call whose arguments passed the
/// schema.
pub trait Args: Sized {
    fn parse(args: &Map<String, Value>) -> Result<Self, ToolError>;
}

/// One property of a schema; `minimum` raises its type's least value.
pub fn property<T: Param>(description: String, minimum: Option<u64>) -> Value {
    let mut p = Map::new();
    p.insert("type".into(), T::TYPE.into());
    p.insert("description".into(), description.into());
    if let Some(min) = T::MINIMUM.max(minimum) {
        p.insert("minimum".into(), min.into());
    }
    Value::Object(p)
}

/// The schema of an object of `properties`, of which `required` must be
/// given.
pub fn object(properties: Map<String, Value>, required: Vec<&str>) -> Value {
    serde_json::json!({"type": "object", "properties": properties, "required": required})
}

/// The value of the argument `name` as a `T`; an error only if a call
/// that did not pass the schema was read.
pub fn field<T: Param>(args: &Map<String, Value>, name: &str) -> Result<T, ToolError> {
    T::read(args.get(name)).ok_or_else(|| format!("\"{name}\" argument is required").into())
}

/// Declares a tool's argument struct: each field with its type (`u64`
/// for a count, whose schema says `minimum: 0`), an optional `[min N]`
/// above that, and its description (an expression, which may use
/// the schema function's own parameters, declared after the struct's
/// name). Yields the struct, `fn schema(..) -> Value` and [`Args`].
///
/// ```ignore
/// args! {
///     pub struct Recall {
///         days: Option<u64> = "Days of daily logs to read",
///         limit: Option<u64> [min 1] = "How many results",
///     }
/// }
/// ```
#[macro_export]
macro_rules! args {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident $(($($p:ident: $pt:ty),* $(,)?))? {
            $($field:ident: $ty:ty $([min $min:literal])? = $desc:expr),* $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone)]
        $vis struct $name {
            $(pub $field: $ty,)*
        }

        impl $name {
            /// The JSON schema the tool is offered with.
            #[allow(clippy::vec_init_then_push, unused_mut)]
            pub fn schema($($($p: $pt),*)?) -> serde_json::Value {
                let mut properties = serde_json::Map::new();
                let mut required: Vec<&str> = Vec::new();
                $(
                    let minimum: Option<u64> = None $(.or(Some($min)))?;
                    properties.insert(
                        stringify!($field).into(),
                        $crate::args::property::<$ty>(String::from($desc), minimum),
                    );
                    if <$ty as $crate::args::Param>::REQUIRED {
                        required.push(stringify!($field));
                    }
                )*
                $crate::args::object(properties, required)
            }
        }

        impl $crate::args::Args for $name {
            #[allow(unused_variables)]
            fn parse(
                args: &serde_json::Map<String, serde_json::Value>,
            ) -> Result<Self, $crate::ToolError> {
                Ok($name {
                    $($field: $crate::args::field(args, stringify!($field))?,)*
                })
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Args;

    crate::args! {
        struct Sample(what: &str) {
            content: String = format!("The {what}"),
            days: Option<u64> = "Days",
            limit: Option<u64> [min 1] = "Limit",
            offset: Option<i64> = "Offset",
            all: Option<bool> = "All",
        }
    }

    #[test]
    fn the_schema_and_the_reading_come_from_one_declaration() {
        assert_eq!(
            Sample::schema("text"),
            json!({"type": "object", "properties": {
                "content": {"type": "string", "description": "The text"},
                "days": {"type": "integer", "minimum": 0, "description": "Days"},
                "limit": {"type": "integer", "minimum": 1, "description": "Limit"},
                "offset": {"type": "integer", "description": "Offset"},
                "all": {"type": "boolean", "description": "All"},
            }, "required": ["content"]})
        );
        let args = json!({"content": "x", "days": 2.0, "limit": 5, "offset": -3, "all": null});
        let read = Sample::parse(args.as_object().unwrap()).unwrap();
        assert_eq!(read.content, "x");
        assert_eq!(read.days, Some(2));
        assert_eq!(read.limit, Some(5));
        assert_eq!(read.offset, Some(-3));
        assert_eq!(read.all, None);
        let missing = json!({});
        assert_eq!(
            Sample::parse(missing.as_object().unwrap())
                .unwrap_err()
                .to_string(),
            "\"content\" argument is required"
        );
    }
}
