//! The state document's shape, written once for both of its readers: the
//! owned `State` that a save rewrites (strings owned, unknown fields kept)
//! and the borrowed `View` a block is built from (strings borrowed, unknown
//! fields skipped). One shape and one parser for both, so that a file
//! one of them takes the other cannot refuse: a view that skipped a field
//! a save then choked on showed a block for a state no command could
//! change.
//!
//! The parser is written by hand rather than derived. serde's derive
//! would also take a struct written as an array, which the owned state
//! (with its catch-all of unknown fields) never did; and that catch-all,
//! `#[serde(flatten)]` into a `Value` map, read every number as an `f64`
//! or an integer: `1e400` was refused, `123456789012345678901234567890`
//! came back as `1.2345678901234568e+29`, `1e5` as `100000.0`, `-0` as
//! `-0.0`. Here each field is read straight from the file, an unknown one
//! as its exact text ([`RawValue`]), so positions in errors are the
//! file's and a save writes back what it read, byte for byte.
//! (serde_json's `arbitrary_precision` was the other way out, but it
//! changes how every number in the crate is read, the provider wire
//! code's included, and through a flattened struct a number that is not a
//! plain integer still arrives as a map (serde-rs/json#721), so a bad
//! known number would be reported as "invalid type: map".)
//!
//! Nesting: serde_json stops at 128 levels when it builds values, but it
//! skips and copies a value whatever its depth, without recursion. Both
//! readers only ever skip or copy an unknown value, and the known fields
//! are a few levels deep, so they take and refuse the same files, and a
//! save writes back nothing deeper than it read. (The owned state used to
//! build unknown values, and refused past 128 levels what the view took.)

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// A string of the state, borrowed when the file holds it unescaped.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Text<'a>(pub Cow<'a, str>);

impl Deref for Text<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text<'a>, D::Error> {
        struct V<'a>(PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Text<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Text<'a>, E> {
                Ok(Text(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Text<'a>, E> {
                Ok(Text(Cow::Owned(s.to_owned())))
            }
        }
        d.deserialize_str(V(PhantomData))
    }
}

/// An agent's structured state, its strings `S`, its unknown fields `U`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(bound(serialize = "S: Serialize + Deref<Target = str>, U: Serialize"))]
pub struct StateOf<S, U> {
    pub version: u64,
    /// Runs recorded so far.
    pub iteration: u64,
    pub tasks: BTreeMap<S, TaskOf<S, U>>,
    pub decisions: Vec<DecisionOf<S, U>>,
    pub errors: Vec<ErrorOf<S, U>>,
    pub key_facts: Vec<S>,
    /// When a run last succeeded (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_checkpoint: Option<S>,
    /// Fields this version does not know.
    #[serde(flatten)]
    pub unknown: U,
}

/// One task's progress.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(bound(serialize = "S: Serialize + Deref<Target = str>, U: Serialize"))]
pub struct TaskOf<S, U> {
    pub id: S,
    pub phase: S,
    #[serde(skip_serializing_if = "blank")]
    pub branch: S,
    #[serde(skip_serializing_if = "blank")]
    pub pr_number: S,
    pub completed_steps: Vec<S>,
    pub pending_steps: Vec<S>,
    #[serde(skip_serializing_if = "blank")]
    pub blocked_reason: S,
    pub files_modified: Vec<S>,
    #[serde(flatten)]
    pub unknown: U,
}

/// A decision and when it was made.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(bound(serialize = "S: Serialize + Deref<Target = str>, U: Serialize"))]
pub struct DecisionOf<S, U> {
    pub iteration: u64,
    #[serde(skip_serializing_if = "blank")]
    pub task_id: S,
    pub description: S,
    #[serde(skip_serializing_if = "blank")]
    pub rationale: S,
    #[serde(flatten)]
    pub unknown: U,
}

/// An error met, and how it was resolved.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(bound(serialize = "S: Serialize + Deref<Target = str>, U: Serialize"))]
pub struct ErrorOf<S, U> {
    pub iteration: u64,
    #[serde(skip_serializing_if = "blank")]
    pub task_id: S,
    pub phase: S,
    pub error: S,
    #[serde(skip_serializing_if = "blank")]
    pub resolution: S,
    pub resolved: bool,
    #[serde(flatten)]
    pub unknown: U,
}

fn blank<S: Deref<Target = str>>(s: &S) -> bool {
    s.is_empty()
}

/// What a reader does with a field it does not know.
pub trait Extra<'de>: Default {
    /// Takes the value of the field `key` from `map`.
    fn keep<A: MapAccess<'de>>(&mut self, key: Text<'de>, map: &mut A) -> Result<(), A::Error>;
}

/// Fields this version does not know, each kept as the text it was read
/// as, and written back as that text: a newer version's numbers, however
/// large or precise, survive a save.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(transparent)]
pub struct Unknown(pub BTreeMap<String, Box<RawValue>>);

/// Equal when they hold the same fields written the same way.
impl PartialEq for Unknown {
    fn eq(&self, other: &Unknown) -> bool {
        self.0.len() == other.0.len()
            && self
                .0
                .iter()
                .zip(&other.0)
                .all(|((k, v), (l, w))| k == l && v.get() == w.get())
    }
}

impl<'de> Extra<'de> for Unknown {
    fn keep<A: MapAccess<'de>>(&mut self, key: Text<'de>, map: &mut A) -> Result<(), A::Error> {
        let value: Box<RawValue> = map.next_value()?;
        // A name given twice keeps its last value, as any JSON object does.
        self.0.insert(key.0.into_owned(), value);
        Ok(())
    }
}

/// Unknown fields checked to be JSON and skipped, by the same code of
/// serde_json that copies them for [`Unknown`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Skipped;

impl<'de> Extra<'de> for Skipped {
    fn keep<A: MapAccess<'de>>(&mut self, _: Text<'de>, map: &mut A) -> Result<(), A::Error> {
        map.next_value::<IgnoredAny>().map(|_| ())
    }
}

/// `Deserialize` for a struct of the document: from a JSON object only,
/// each known field at most once and of its type (a missing one is its
/// default), every other field given to its `unknown`.
macro_rules! from_object {
    ($name:ident, $what:literal, $($field:ident),+) => {
        impl<'de, S, U> Deserialize<'de> for $name<S, U>
        where
            S: Deserialize<'de> + Default + Ord,
            U: Extra<'de>,
        {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V<S, U>(PhantomData<(S, U)>);
                impl<'de, S, U> Visitor<'de> for V<S, U>
                where
                    S: Deserialize<'de> + Default + Ord,
                    U: Extra<'de>,
                {
                    type Value = $name<S, U>;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        f.write_str($what)
                    }
                    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                        $(let mut $field = None;)+
                        let mut unknown = U::default();
                        while let Some(key) = map.next_key::<Text<'de>>()? {
                            match &*key {
                                $(stringify!($field) => {
                                    if $field.is_some() {
                                        return Err(de::Error::duplicate_field(stringify!($field)));
                                    }
                                    $field = Some(map.next_value()?);
                                })+
                                _ => unknown.keep(key, &mut map)?,
                            }
                        }
                        Ok($name {
                            $($field: $field.unwrap_or_default(),)+
                            unknown,
                        })
                    }
                }
                d.deserialize_map(V(PhantomData))
            }
        }
    };
}

from_object!(
    StateOf,
    "a state (an object)",
    version,
    iteration,
    tasks,
    decisions,
    errors,
    key_facts,
    last_checkpoint
);
from_object!(
    TaskOf,
    "a task (an object)",
    id,
    phase,
    branch,
    pr_number,
    completed_steps,
    pending_steps,
    blocked_reason,
    files_modified
);
from_object!(
    DecisionOf,
    "a decision (an object)",
    iteration,
    task_id,
    description,
    rationale
);
from_object!(
    ErrorOf,
    "an error record (an object)",
    iteration,
    task_id,
    phase,
    error,
    resolution,
    resolved
);
