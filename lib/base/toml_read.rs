//! A parsed TOML document read into a serde struct, the way the toml
//! crate's own deserializer reads it (the same values, the same messages,
//! the error at the same place), but with no branch for `toml::Spanned`
//! and `toml_datetime::Datetime`, which no setting uses.
//!
//! Why not toml's: its deserializer takes those branches for every struct
//! it reads, so each settings struct's `visit_map` was compiled three
//! times for it (and a fourth for `unknown::Probe`). That was 60% of
//! axe-agent's code (`cargo llvm-lines`: 185k of 311k lines) and a fifth
//! of each whole program (290 KB of `axe-mem-append`'s 1.47 MB), for
//! branches that never run. `serde_ignored` still wraps this one, for the
//! unknown keys.
//!
//! Where it differs, on values no setting takes: a TOML datetime is
//! refused as a map is (toml's reads it as a map of one private key, so
//! a string setting says the same `invalid type: map`); an integer past
//! u64 is `integer number overflowed` (toml's goes on to 128 bits); a
//! tuple variant is an array of its length, not also a table keyed
//! `0`, `1`....
//!
//! It also records, in [`Structs`], the fields of each struct it reads
//! and the table it read it from: the known names a "did you mean"
//! offers for a key there. (serde's derive hands them to
//! `deserialize_struct`; before, a second deserializer led each struct
//! down to the table again to learn them, one more copy of every
//! `visit_map`.)

use std::cell::RefCell;
use std::fmt;
use std::ops::Range;

use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// What a document could not be read as: the message, and where in the
/// text it is when known.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Bad {
    message: String,
    span: Option<Range<usize>>,
}

impl Bad {
    /// The message alone, as toml's `Error::message` is.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The byte range of the text it is about.
    pub fn span(&self) -> Option<Range<usize>> {
        self.span.clone()
    }

    fn at(mut self, span: &Range<usize>) -> Self {
        if self.span.is_none() {
            self.span = Some(span.clone());
        }
        self
    }

    fn new(message: &str, span: &Range<usize>) -> Self {
        Bad {
            message: message.to_owned(),
            span: Some(span.clone()),
        }
    }
}

impl From<toml::de::Error> for Bad {
    fn from(e: toml::de::Error) -> Self {
        Bad {
            message: e.message().to_owned(),
            span: e.span(),
        }
    }
}

impl de::Error for Bad {
    fn custom<T: fmt::Display>(message: T) -> Self {
        Bad {
            message: message.to_string(),
            span: None,
        }
    }
}

/// `T` from the TOML `text`, as `toml::from_str` reads it: for a file no
/// unknown key is warned of (the team server's tokens deny them), so
/// that toml's own deserializer is not compiled in beside this one.
pub fn from_str<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, Bad> {
    let root = DeTable::parse(text)?;
    T::deserialize(Top(root.get_ref(), &Structs::default()))
}

/// The structs a read met: each one's fields, by the table it was read
/// from (the table's address, which the parsed document holds still).
#[derive(Debug, Default)]
pub(crate) struct Structs(RefCell<Vec<(usize, &'static [&'static str])>>);

impl Structs {
    fn met(&self, table: &DeTable, fields: &'static [&'static str]) {
        self.0.borrow_mut().push((address(table), fields));
    }

    /// The fields of the struct read from `table`, when one was.
    pub(crate) fn of(&self, table: &DeTable) -> Option<&'static [&'static str]> {
        let at = address(table);
        let met = self.0.borrow();
        met.iter()
            .find(|(t, _)| *t == at)
            .map(|&(_, fields)| fields)
    }
}

fn address(table: &DeTable) -> usize {
    std::ptr::from_ref(table).addr()
}

/// The whole document, whose top is a table. An error about the top
/// itself (a missing key) has no place, as toml's has none.
pub(crate) struct Top<'a, 'i>(pub(crate) &'a DeTable<'i>, pub(crate) &'a Structs);

/// One value of the document, read in place.
struct Value<'a, 'i>(&'a Spanned<DeValue<'i>>, &'a Structs);

impl<'de> de::Deserializer<'de> for Top<'_, '_> {
    type Error = Bad;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Bad> {
        visitor.visit_map(Entries::new(self.0, self.1))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Bad> {
        self.1.met(self.0, fields);
        self.deserialize_any(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Bad> {
        visitor.visit_some(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple tuple_struct
        map enum identifier ignored_any
    }
}

impl<'de> de::Deserializer<'de> for Value<'_, '_> {
    type Error = Bad;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Bad> {
        let span = self.0.span();
        match self.0.get_ref() {
            DeValue::String(s) => visitor.visit_str(s),
            DeValue::Integer(n) => match integer(n) {
                Ok(Int::Signed(n)) => visitor.visit_i64(n),
                Ok(Int::Unsigned(n)) => visitor.visit_u64(n),
                Err(e) => Err(e),
            },
            DeValue::Float(f) => float(f).and_then(|x| visitor.visit_f64(x)),
            DeValue::Boolean(b) => visitor.visit_bool(*b),
            DeValue::Datetime(_) => Err(de::Error::invalid_type(de::Unexpected::Map, &visitor)),
            DeValue::Array(a) => visitor.visit_seq(Elements(a.iter(), self.1)),
            DeValue::Table(t) => visitor.visit_map(Entries::new(t, self.1)),
        }
        .map_err(|e| e.at(&span))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Bad> {
        if let DeValue::Table(t) = self.0.get_ref() {
            self.1.met(t, fields);
        }
        self.deserialize_any(visitor)
    }

    // `None` is a missing key: a key that is there is `Some`.
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Bad> {
        let span = self.0.span();
        visitor.visit_some(self).map_err(|e| e.at(&span))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Bad> {
        let span = self.0.span();
        visitor.visit_newtype_struct(self).map_err(|e| e.at(&span))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Bad> {
        let span = self.0.span();
        match self.0.get_ref() {
            DeValue::String(s) => visitor.visit_enum(s.as_ref().into_deserializer()),
            DeValue::Table(t) => match t.len() {
                0 => Err(Bad::new(
                    "wanted exactly 1 element, found 0 elements",
                    &span,
                )),
                1 => visitor.visit_enum(Entries::new(t, self.1)),
                _ => Err(Bad::new(
                    "wanted exactly 1 element, more than 1 element",
                    &span,
                )),
            },
            _ => Err(Bad::new("wanted string or table", &span)),
        }
        .map_err(|e| e.at(&span))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map identifier
        ignored_any
    }
}

enum Int {
    Signed(i64),
    Unsigned(u64),
}

/// An integer as toml reads one, outside the generic code that visits it.
/// Past u64 toml's reader goes on to 128 bits: no setting holds one, and
/// each would be one more visit in every copy.
fn integer(n: &toml::de::DeInteger<'_>) -> Result<Int, Bad> {
    let (text, radix) = (n.as_str(), n.radix());
    if let Ok(n) = i64::from_str_radix(text, radix) {
        Ok(Int::Signed(n))
    } else if let Ok(n) = u64::from_str_radix(text, radix) {
        Ok(Int::Unsigned(n))
    } else {
        Err(de::Error::custom("integer number overflowed"))
    }
}

/// A float as toml reads one: `inf` written out is no overflow.
fn float(f: &toml::de::DeFloat<'_>) -> Result<f64, Bad> {
    match f.as_str().parse::<f64>() {
        Ok(x) if !x.is_infinite() || f.as_str().contains("inf") => Ok(x),
        _ => Err(de::Error::custom("floating-point number overflowed")),
    }
}

/// A table's keys and values, in the order written.
struct Entries<'a, 'i> {
    entries: toml::map::Iter<'a, Spanned<toml::de::DeString<'i>>, Spanned<DeValue<'i>>>,
    value: Option<&'a Spanned<DeValue<'i>>>,
    structs: &'a Structs,
}

impl<'a, 'i> Entries<'a, 'i> {
    fn new(table: &'a DeTable<'i>, structs: &'a Structs) -> Self {
        Entries {
            entries: table.iter(),
            value: None,
            structs,
        }
    }
}

impl<'de> de::MapAccess<'de> for Entries<'_, '_> {
    type Error = Bad;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, Bad> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        let name: de::value::StrDeserializer<'_, Bad> = key.get_ref().as_ref().into_deserializer();
        seed.deserialize(name)
            .map(Some)
            .map_err(|e| e.at(&key.span()))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Bad> {
        let value = self
            .value
            .take()
            .ok_or_else(|| <Bad as de::Error>::custom("a value asked for before its key"))?;
        seed.deserialize(Value(value, self.structs))
            .map_err(|e| e.at(&value.span()))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

impl<'de, 'a, 'i> de::EnumAccess<'de> for Entries<'a, 'i> {
    type Error = Bad;
    type Variant = Variant<'a, 'i>;

    fn variant_seed<V: DeserializeSeed<'de>>(
        mut self,
        seed: V,
    ) -> Result<(V::Value, Self::Variant), Bad> {
        let (key, value) = self.entries.next().ok_or_else(|| {
            <Bad as de::Error>::custom("expected table with exactly 1 entry, found empty table")
        })?;
        let name: de::value::StrDeserializer<'_, Bad> = key.get_ref().as_ref().into_deserializer();
        let variant = seed.deserialize(name).map_err(|e| e.at(&key.span()))?;
        Ok((variant, Variant(value, self.structs)))
    }
}

/// The value of `{ variant = value }`.
struct Variant<'a, 'i>(&'a Spanned<DeValue<'i>>, &'a Structs);

impl<'de> de::VariantAccess<'de> for Variant<'_, '_> {
    type Error = Bad;

    fn unit_variant(self) -> Result<(), Bad> {
        let span = self.0.span();
        match self.0.get_ref() {
            DeValue::Array(a) if a.is_empty() => Ok(()),
            DeValue::Table(t) if t.is_empty() => Ok(()),
            DeValue::Array(_) => Err(Bad::new("expected empty array", &span)),
            DeValue::Table(_) => Err(Bad::new("expected empty table", &span)),
            other => Err(Bad::new(
                &format!("expected table, found {}", other.type_str()),
                &span,
            )),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, Bad> {
        seed.deserialize(Value(self.0, self.1))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Bad> {
        match self.0.get_ref() {
            DeValue::Array(a) if a.len() == len => visitor.visit_seq(Elements(a.iter(), self.1)),
            _ => Err(Bad::new(
                &format!("expected tuple with length {len}"),
                &self.0.span(),
            )),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Bad> {
        de::Deserializer::deserialize_map(Value(self.0, self.1), visitor)
    }
}

/// An array's elements, in order.
struct Elements<'a, 'i>(std::slice::Iter<'a, Spanned<DeValue<'i>>>, &'a Structs);

impl<'de> de::SeqAccess<'de> for Elements<'_, '_> {
    type Error = Bad;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Bad> {
        let Some(value) = self.0.next() else {
            return Ok(None);
        };
        seed.deserialize(Value(value, self.1))
            .map(Some)
            .map_err(|e| e.at(&value.span()))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Deserialize;

    use super::*;

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Kind {
        Plain,
        Fancy,
    }

    #[derive(Debug, Default, PartialEq, Deserialize)]
    #[serde(default)]
    struct Inner {
        count: u64,
        signed: i64,
        ratio: f64,
        flag: bool,
        name: String,
        kind: Option<Kind>,
    }

    #[derive(Debug, Default, PartialEq, Deserialize)]
    #[serde(default)]
    struct Outer {
        name: String,
        list: Vec<String>,
        inner: Inner,
        many: Vec<Inner>,
        map: BTreeMap<String, u32>,
        free: Option<serde_json::Value>,
        required: Option<Required>,
        strict: Option<Strict>,
        either: Option<Either>,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Strict {
        a: u8,
    }

    #[derive(Debug, PartialEq, Deserialize)]
    #[serde(untagged)]
    enum Either {
        One(String),
        Many(Vec<String>),
    }

    #[derive(Debug, PartialEq, Deserialize)]
    struct Required {
        must: String,
    }

    type Read = Result<Outer, (String, Option<Range<usize>>)>;

    fn ours(text: &str) -> Read {
        let root = DeTable::parse(text).unwrap();
        Outer::deserialize(Top(root.get_ref(), &Structs::default()))
            .map_err(|e| (e.message, e.span))
    }

    fn toml_s(text: &str) -> Read {
        toml::from_str(text).map_err(|e: toml::de::Error| (e.message().to_owned(), e.span()))
    }

    /// Every value a setting can take, and every mistake in one, reads as
    /// toml's own deserializer reads it: the same value, or the same
    /// message at the same place.
    #[test]
    fn values_and_errors_are_toml_s() {
        for text in [
            "",
            "name = \"a\"\nlist = [\"x\", 'y']\n",
            "[inner]\ncount = 7\nsigned = -3\nratio = 1\nflag = true\nname = \"\"\"\nmulti\"\"\"\n",
            "inner = { ratio = 0.25, kind = \"fancy\" }\n",
            "inner.ratio = inf\ninner.signed = 0x7f\n",
            "[[many]]\ncount = 1\n[[many]]\nkind = \"plain\"\n",
            "[map]\na = 1\n\"b c\" = 2\n",
            "free = { a = [1, 2.5, \"s\", true], b = { c = {} } }\n",
            "required = { must = \"x\" }\n",
            "other = 1\n[inner]\nunknown = 2\n",
            "strict = { a = 1 }\n",
            "either = \"*\"\n",
            "either = [\"a\", \"b\"]\n",
            // Mistakes.
            "name = 5\n",
            "list = [\"x\", 2]\n",
            "[inner]\ncount = -1\n",
            "[inner]\ncount = \"1\"\n",
            "inner.signed = 9223372036854775808\n",
            "inner.ratio = \"x\"\n",
            "inner.ratio = 1e400\n",
            "inner.flag = 1\n",
            "inner.kind = \"other\"\n",
            "inner.kind = 3\n",
            "inner.kind = { plain = {} }\n",
            "inner.kind = { plain = [] }\n",
            "inner.kind = { plain = [1] }\n",
            "inner.kind = { plain = 1 }\n",
            "inner.kind = { other = {} }\n",
            "inner.kind = {}\n",
            "inner.kind = { plain = {}, fancy = {} }\n",
            "inner = 1\n",
            "[[many]]\ncount = 1\n[[many]]\ncount = true\n",
            "map.a = -1\n",
            "map = [1]\n",
            "required = {}\n",
            "required = { must = 1 }\n",
            "name = 1979-05-27T07:32:00Z\n",
            "strict = { a = 1, b = 2 }\n",
            "[strict]\na = 300\n",
            "either = 1\n",
            "either = [1]\n",
        ] {
            assert_eq!(ours(text), toml_s(text), "{text:?}");
        }
    }

    /// Past u64 toml's says what its 128-bit visit says; ours says the
    /// number is too large, at the same place.
    #[test]
    fn an_integer_past_u64_is_an_overflow_where_it_is() {
        let text = "[inner]\ncount = 99999999999999999999999\n";
        let (message, span) = ours(text).unwrap_err();
        assert_eq!(message, "integer number overflowed");
        assert_eq!(span, toml_s(text).unwrap_err().1);
    }

    #[test]
    fn nan_is_a_float() {
        assert!(ours("inner.ratio = nan\n").unwrap().inner.ratio.is_nan());
        assert!(toml_s("inner.ratio = nan\n").unwrap().inner.ratio.is_nan());
    }

    #[test]
    fn a_parse_error_keeps_toml_s_message_and_place() {
        let e: Bad = DeTable::parse("a = \n").unwrap_err().into();
        assert!(!e.message().is_empty());
        assert_eq!(e.span().map(|s| s.start), Some(4));
    }
}
