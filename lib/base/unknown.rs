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
//! "did you mean" are the struct's own fields there, which the reader
//! records from serde's derive (the names it hands to
//! `deserialize_struct`).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::de::DeserializeOwned;
use serde::{Serialize, Serializer};
use toml::Spanned;
use toml::de::{DeArray, DeTable, DeValue};

use crate::lock::Recover;
use crate::report::Report;
use crate::toml_read::{Bad, Structs, Top};

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
/// deserializes through `serde_ignored`, so the value, the keys it
/// passed over and the fields of each struct it read come from one pass.
/// (A plain `toml::from_str` beside the probe compiled every settings
/// struct twice, a third of each small executable, and parsed the text
/// twice a read.) The reader under it is [`crate::toml_read`]'s, which
/// compiles each struct once where toml's compiled it three times.
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

    /// `T` as the document holds it, the keys `T` does not take, and
    /// the field names of its top, all from the one read.
    pub fn read<T: DeserializeOwned>(&self) -> Result<Read<T>, Bad> {
        let root = self.root.get_ref();
        let (value, ignored, structs) = deserialize(root);
        Ok(Read {
            value: value?,
            unknown: self.located(ignored, &structs),
            fields: structs.of(root).unwrap_or_default(),
        })
    }

    fn located(&self, ignored: Vec<Vec<Step>>, structs: &Structs) -> Vec<Unknown> {
        let root = self.root.get_ref();
        let mut found: Vec<Unknown> = ignored
            .into_iter()
            .filter_map(|mut path| {
                let Some(Step::Key(name)) = path.pop() else {
                    return None;
                };
                let table = table_at(root, &path)?;
                let (key, value) = table.iter().find(|(k, _)| k.get_ref() == &name)?;
                let before = &self.text[..key.span().start.min(self.text.len())];
                let near = structs
                    .of(table)
                    .and_then(|known| crate::suggest::near(&name, known.iter().copied()));
                Some(Unknown {
                    file: self.file.to_owned(),
                    line: before.matches('\n').count() + 1,
                    key: dotted(&path, &name),
                    section: matches!(value.get_ref(), DeValue::Table(_)),
                    did_you_mean: near.map(|near| dotted(&path, near)),
                })
            })
            .collect();
        found.sort_by(|a, b| (a.line, &a.key).cmp(&(b.line, &b.key)));
        found
    }
}

/// What [`Document::read`] gives.
#[derive(Debug)]
pub struct Read<T> {
    /// The settings.
    pub value: T,
    /// The keys no field of `T` takes, in the order they are written.
    pub unknown: Vec<Unknown>,
    /// `T`'s own field names (none when `T` is not a struct): the names
    /// a key at the top may have.
    pub fields: &'static [&'static str],
}

/// `T` read from `root`, the paths of the keys it passed over, and the
/// structs it met. Both a document's read and [`fields_at`] come here,
/// so each `T` is compiled into one reading.
fn deserialize<T: DeserializeOwned>(root: &DeTable) -> (Result<T, Bad>, Vec<Vec<Step>>, Structs) {
    let (mut ignored, structs) = (Vec::new(), Structs::default());
    let value = serde_ignored::deserialize(Top(root, &structs), |at| ignored.push(steps(&at)));
    (value, ignored, structs)
}

/// The keys of `text` (the TOML of `file`) that `T` does not take, in the
/// order they are written; none when it is not a `T`, whose error is what
/// a reader says.
pub fn find<T: DeserializeOwned>(file: &Path, text: &str) -> Vec<Unknown> {
    Document::parse(file, text)
        .and_then(|d| d.read::<T>())
        .map(|read| read.unknown)
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

/// The table at `path` from `root`, when a table is there.
fn table_at<'a, 'i>(root: &'a DeTable<'i>, path: &[Step]) -> Option<&'a DeTable<'i>> {
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
    table
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
/// a template is held to, so it cannot drift from its struct. They are
/// learned by reading `T` from empty tables nested along `path`: serde's
/// derive names a struct's fields before it reads any.
pub fn fields_at<T: DeserializeOwned>(path: &[&str]) -> Option<&'static [&'static str]> {
    let mut root = DeTable::new();
    let mut table = &mut root;
    for &key in path {
        let entry = table
            .entry(Spanned::new(0..0, key.into()))
            .or_insert(Spanned::new(0..0, DeValue::Table(DeTable::new())));
        let DeValue::Table(inner) = entry.get_mut() else {
            return None;
        };
        table = inner;
    }
    // Missing fields are an error here, after the fields were met.
    let (_, _, structs) = deserialize::<T>(&root);
    let steps: Vec<Step> = path.iter().map(|k| Step::Key((*k).to_owned())).collect();
    structs.of(table_at(&root, &steps)?)
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
