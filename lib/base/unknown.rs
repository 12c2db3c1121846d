//! Keys in an agent file or config.toml that no setting takes: a typo
//! (`[memroy]`, `temprature`) that would otherwise leave a setting
//! silently off, or a key of a newer Go `axe`. They are warned of, never
//! refused, so that a file written for a newer release still loads.
//!
//! They are found as cargo finds a manifest's unused keys: the text is
//! deserialized into its serde struct through `serde_ignored`, which names
//! every key the struct passed over. No list is kept by hand, so a field
//! is known the moment it is declared, and a map (`headers`, `env`) or a
//! free-form value (`response_format`) takes any key. The near names for
//! "did you mean" are the struct's own fields there, which [`Probe`]
//! reads from serde's derive (the names it hands to `deserialize_struct`).

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::de::{self, DeserializeOwned, IntoDeserializer, Visitor};
use serde::{Serialize, Serializer};
use toml::Spanned;
use toml::de::{DeArray, DeTable, DeValue};

use crate::lock::Recover;
use crate::report::Report;
use crate::toml_read::{Bad, Top};

/// A key no setting takes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unknown {
    /// The file it is in.
    #[serde(serialize_with = "lossy")]
    pub file: PathBuf,
    /// 1-based, where the key is written.
    pub line: usize,
    /// Dotted from the top: `memroy`, `params.temprature`,
    /// `mcp_servers[0].comand`.
    pub key: String,
    /// Whether its value is a table (`[memroy]`), so it reads as a
    /// section.
    pub section: bool,
    /// The known name nearest to it, dotted the same way, when one is
    /// near enough to be what was meant.
    pub did_you_mean: Option<String>,
}

impl std::fmt::Display for Unknown {
    /// `unknown section [memroy], ignored (did you mean [memory]?)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let show = |key: &str| match self.section {
            true => format!("[{key}]"),
            false => key.to_owned(),
        };
        let kind = if self.section { "section" } else { "key" };
        write!(f, "unknown {kind} {}, ignored", show(&self.key))?;
        if let Some(near) = &self.did_you_mean {
            write!(f, " (did you mean {}?)", show(near))?;
        }
        Ok(())
    }
}

impl Unknown {
    /// The warning line: `<file>:<line>: unknown ...`.
    pub fn located(&self) -> String {
        format!("{}:{}: {self}", self.file.display(), self.line)
    }
}

fn lossy<S: Serializer>(path: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&path.to_string_lossy())
}

/// A TOML text parsed once, and the settings read from it: each read
/// deserializes through `serde_ignored`, so the value and the keys it
/// passed over come from one pass. (A plain `toml::from_str` beside the
/// probe compiled every settings struct twice, a third of each small
/// executable, and parsed the text twice a read.) The reader under it is
/// [`crate::toml_read`]'s, which compiles each struct once where toml's
/// compiled it three times.
pub struct Document<'a> {
    file: &'a Path,
    text: &'a str,
    root: Spanned<DeTable<'a>>,
}

impl<'a> Document<'a> {
    /// `text`, the TOML of `file`, parsed; its error is the parse's.
    pub fn parse(file: &'a Path, text: &'a str) -> Result<Self, Bad> {
        Ok(Document {
            file,
            text,
            root: DeTable::parse(text)?,
        })
    }

    /// `T` as the document holds it, and the keys `T` does not take, in
    /// the order they are written.
    pub fn read<T: DeserializeOwned>(&self) -> Result<(T, Vec<Unknown>), Bad> {
        let mut ignored = Vec::new();
        let top = Top(self.root.get_ref());
        let value = serde_ignored::deserialize(top, |at| ignored.push(steps(&at)))?;
        Ok((value, self.located::<T>(ignored)))
    }

    fn located<T: DeserializeOwned>(&self, ignored: Vec<Vec<Step>>) -> Vec<Unknown> {
        let mut found: Vec<Unknown> = ignored
            .into_iter()
            .filter_map(|mut path| {
                let Some(Step::Key(name)) = path.pop() else {
                    return None;
                };
                let (line, section) = locate(self.text, self.root.get_ref(), &path, &name)?;
                let near = fields::<T>(&path)
                    .and_then(|known| crate::suggest::near(&name, known.iter().copied()));
                Some(Unknown {
                    file: self.file.to_owned(),
                    line,
                    key: dotted(&path, &name),
                    section,
                    did_you_mean: near.map(|near| dotted(&path, near)),
                })
            })
            .collect();
        found.sort_by(|a, b| (a.line, &a.key).cmp(&(b.line, &b.key)));
        found
    }
}

/// The keys of `text` (the TOML of `file`) that `T` does not take, in the
/// order they are written; none when it is not a `T`, whose error is what
/// a reader says.
pub fn find<T: DeserializeOwned>(file: &Path, text: &str) -> Vec<Unknown> {
    Document::parse(file, text)
        .and_then(|d| d.read::<T>())
        .map(|(_, unknown)| unknown)
        .unwrap_or_default()
}

/// `serde_ignored`'s path as keys and indexes from the top; what it adds
/// for an `Option` or a newtype is no step in the file.
fn steps(at: &serde_ignored::Path) -> Vec<Step> {
    use serde_ignored::Path as P;
    let mut out = match at {
        P::Root => return Vec::new(),
        P::Seq { parent, .. }
        | P::Map { parent, .. }
        | P::Some { parent }
        | P::NewtypeStruct { parent }
        | P::NewtypeVariant { parent } => steps(parent),
    };
    match at {
        P::Seq { index, .. } => out.push(Step::Index(*index)),
        P::Map { key, .. } => out.push(Step::Key(key.clone())),
        _ => {}
    }
    out
}

/// The line (from 1) where the key `name` of the table at `path` is
/// written, and whether its value is a table.
fn locate(text: &str, root: &DeTable, path: &[Step], name: &str) -> Option<(usize, bool)> {
    let (mut table, mut array) = (Some(root), None);
    for step in path {
        let next = match step {
            Step::Key(k) => table?.get(k.as_str())?.get_ref(),
            Step::Index(i) => array.and_then(|a: &DeArray| a.get(*i))?.get_ref(),
        };
        (table, array) = match next {
            DeValue::Table(t) => (Some(t), None),
            DeValue::Array(a) => (None, Some(a)),
            _ => (None, None),
        };
    }
    let (key, value) = table?.iter().find(|(k, _)| k.get_ref() == name)?;
    let before = &text[..key.span().start.min(text.len())];
    let section = matches!(value.get_ref(), DeValue::Table(_));
    Some((before.matches('\n').count() + 1, section))
}

/// The files one command has warned of already: a run loads an agent
/// once for itself and again for each call of it as a sub-agent, and
/// says its unknown keys once. Held by the command, not the process, so
/// two commands in one process each warn.
#[derive(Debug, Default)]
pub struct Warned(Mutex<Vec<PathBuf>>);

impl Warned {
    /// Warns `report` of `unknown`, one line each, the first time `file`
    /// is warned of here.
    pub fn warn(&self, report: &dyn Report, file: &Path, unknown: &[Unknown]) {
        if unknown.is_empty() {
            return;
        }
        let mut warned = self.0.lock().recover();
        if warned.iter().any(|f| f == file) {
            return;
        }
        warned.push(file.to_owned());
        for u in unknown {
            report.note(format_args!("Warning: {}", u.located()));
        }
    }
}

/// A step from a table to what it holds.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    /// An element of an array of tables (`[[mcp_servers]]`).
    Index(usize),
}

/// `path` and `key` as one would write them: `params.temprature`,
/// `mcp_servers[0].comand`; a key that is not bare is quoted.
fn dotted(path: &[Step], key: &str) -> String {
    let bare = |k: &str| match !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        true => k.to_owned(),
        false => format!("{k:?}"),
    };
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&bare(k));
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    if !out.is_empty() {
        out.push('.');
    }
    out.push_str(&bare(key));
    out
}

/// The field names `T` has at the table `path` (`[]` the top,
/// `["params"]`, `["providers", "openai"]`), when a struct is there: what
/// a template is held to, so it cannot drift from its struct.
pub fn fields_at<T: DeserializeOwned>(path: &[&str]) -> Option<&'static [&'static str]> {
    let path: Vec<Step> = path.iter().map(|k| Step::Key((*k).to_owned())).collect();
    fields::<T>(&path)
}

/// The field names `T` has at `path`, when a struct is there; `None` for
/// a map, a free-form value or anything else, which take any key.
fn fields<T: DeserializeOwned>(path: &[Step]) -> Option<&'static [&'static str]> {
    let found = Cell::new(None);
    // The probe always ends in an error once it has seen what is there.
    let _ = T::deserialize(Probe {
        path,
        found: &found,
    });
    found.get()
}

/// A deserializer that holds no data: it leads `T`'s `Deserialize` down
/// `path`, one key or element at a time, and records the fields of the
/// struct it reaches.
struct Probe<'a> {
    path: &'a [Step],
    found: &'a Cell<Option<&'static [&'static str]>>,
}

fn stop() -> de::value::Error {
    de::Error::custom("probed")
}

impl<'de> de::Deserializer<'de> for Probe<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(stop())
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        if self.path.is_empty() {
            self.found.set(Some(fields));
            return Err(stop());
        }
        self.deserialize_map(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.path.split_first() {
            Some((Step::Key(key), rest)) => visitor.visit_map(Entry {
                key: Some(key),
                value: Some(Probe {
                    path: rest,
                    found: self.found,
                }),
            }),
            _ => Err(stop()),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.path.split_first() {
            Some((Step::Index(_), rest)) => visitor.visit_seq(Element(Some(Probe {
                path: rest,
                found: self.found,
            }))),
            _ => Err(stop()),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_newtype_struct(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct tuple tuple_struct enum identifier
        ignored_any
    }
}

/// A map of one entry: the next key of the path, and the probe for the
/// rest.
struct Entry<'a> {
    key: Option<&'a str>,
    value: Option<Probe<'a>>,
}

impl<'de> de::MapAccess<'de> for Entry<'_> {
    type Error = de::value::Error;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        self.key
            .take()
            .map(|key| seed.deserialize(key.into_deserializer()))
            .transpose()
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, Self::Error> {
        seed.deserialize(self.value.take().ok_or_else(stop)?)
    }
}

/// A sequence of one element: the probe for the rest of the path.
struct Element<'a>(Option<Probe<'a>>);

impl<'de> de::SeqAccess<'de> for Element<'_> {
    type Error = de::value::Error;

    fn next_element_seed<T: de::DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Self::Error> {
        self.0
            .take()
            .map(|probe| seed.deserialize(probe))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Outer {
        name: String,
        inner: Inner,
        list: Vec<Inner>,
        map: std::collections::BTreeMap<String, String>,
    }

    #[derive(Deserialize)]
    #[allow(dead_code)]
    struct Inner {
        depth: i64,
    }

    #[test]
    fn a_structs_fields_are_what_is_known() {
        let text = "name = \"a\"\nnmae = 1\n[inner]\ndepth = 1\ndepht = 2\n[map]\nany = \"v\"\n\
                    [[list]]\ndepth = 1\n[[list]]\ndepth = 2\nother = 3\n";
        let got: Vec<_> = find::<Outer>(Path::new("f.toml"), text)
            .into_iter()
            .map(|u| (u.line, u.key, u.did_you_mean))
            .collect();
        let s = |x: &str| Some(x.to_owned());
        assert_eq!(
            got,
            [
                (2, "nmae".into(), s("name")),
                (5, "inner.depht".into(), s("inner.depth")),
                (12, "list[1].other".into(), None),
            ]
        );
    }

    #[test]
    fn each_warned_set_warns_once_of_a_file() {
        let file = Path::new("a.toml");
        let unknown = find::<Inner>(file, "depth = 1\ndpeth = 1\n");
        let (one, two) = (Warned::default(), Warned::default());
        let report = crate::report::Collected::default();
        one.warn(&report, file, &unknown);
        one.warn(&report, file, &unknown);
        two.warn(&report, file, &unknown);
        let line = "Warning: a.toml:2: unknown key dpeth, ignored (did you mean depth?)";
        assert_eq!(report.lines(), [line, line]);
    }
}
