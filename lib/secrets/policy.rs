//! What memory writes do with credentials: whether they are redacted
//! (`[memory] redact`, on unless an agent file or config.toml says
//! `false`), the keys known to this process, and the report of what was
//! redacted where, for `-v` and `--json`.

use std::borrow::Cow;

use serde::Serialize;

use super::kind::Kind;
use super::scan::{self, Found, Redacted};

/// Whether a memory write redacts, and the keys it looks for as they
/// are.
#[derive(Debug, Clone, Default)]
pub struct Secrets {
    on: bool,
    keys: Vec<String>,
}

impl Secrets {
    /// Writes kept as given.
    pub fn off() -> Secrets {
        Secrets::default()
    }

    /// Redaction on, looking for `keys` beyond the shapes it knows.
    pub fn with_keys(keys: Vec<String>) -> Secrets {
        Secrets { on: true, keys }
    }

    /// The policy of an agent whose `[memory] redact` is `agent` (`None`
    /// when unset or for no agent), where config.toml says `default`: the
    /// agent's setting, else config.toml's, else on, looking for `keys`
    /// (those too short to tell from words are dropped).
    pub fn of(agent: Option<bool>, default: Option<bool>, keys: Vec<String>) -> Secrets {
        if !agent.or(default).unwrap_or(true) {
            return Secrets::off();
        }
        let mut keys = keys;
        keys.retain(|k| k.chars().count() >= scan::MIN_KEY_CHARS);
        keys.sort();
        keys.dedup();
        Secrets::with_keys(keys)
    }

    /// What [`Secrets::redact`] would take out of `text`: what a check
    /// before memory leaves the machine looks for.
    pub fn find(&self, text: &[u8]) -> Vec<Found> {
        match self.on {
            true => scan::find(text, &self.keys()),
            false => Vec::new(),
        }
    }

    /// `text` as memory keeps it.
    pub fn redact<'a>(&self, text: &'a [u8]) -> Redacted<'a> {
        if !self.on {
            return Redacted {
                text: Cow::Borrowed(text),
                kinds: Vec::new(),
            };
        }
        scan::redact(text, &self.keys())
    }

    fn keys(&self) -> Vec<&str> {
        self.keys.iter().map(String::as_str).collect()
    }

    /// [`Secrets::redact`] of a string, which stays a string: every range
    /// replaced starts and ends at an ASCII byte.
    pub fn redact_str<'a>(&self, text: &'a str) -> (Cow<'a, str>, Vec<Kind>) {
        let Redacted { text: out, kinds } = self.redact(text.as_bytes());
        let out = match out {
            Cow::Borrowed(_) => Cow::Borrowed(text),
            Cow::Owned(bytes) => Cow::Owned(
                String::from_utf8(bytes)
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
            ),
        };
        (out, kinds)
    }
}

/// Where in memory a secret was caught.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    RunLog,
    DailyLog,
    MemoryFile,
    Topic,
    State,
}

impl Place {
    /// Its stable name, as `-v` and `--json` give it.
    pub fn name(self) -> &'static str {
        match self {
            Place::RunLog => "run log",
            Place::DailyLog => "daily log",
            Place::MemoryFile => "MEMORY.md",
            Place::Topic => "world topic",
            Place::State => "state",
        }
    }
}

/// One secret redacted: `{"kind": "github token", "where": "run log"}`
/// in `--json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Redaction {
    pub kind: Kind,
    #[serde(rename = "where", serialize_with = "place_name")]
    pub place: Place,
}

fn place_name<S: serde::Serializer>(place: &Place, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(place.name())
}

/// One [`Redaction`] per kind in `kinds`, all in `place`.
pub fn at(place: Place, kinds: &[Kind]) -> Vec<Redaction> {
    kinds
        .iter()
        .map(|&kind| Redaction { kind, place })
        .collect()
}

/// The `-v` lines of `done`, one per place, in the order first met:
/// `redacted 2 secrets (github token, aws access key) from the run log`.
/// Never the secret itself.
pub fn lines(done: &[Redaction]) -> Vec<String> {
    let mut places: Vec<Place> = Vec::new();
    for r in done {
        if !places.contains(&r.place) {
            places.push(r.place);
        }
    }
    places
        .into_iter()
        .map(|place| {
            let mut kinds: Vec<&str> = Vec::new();
            let mut count = 0;
            for r in done.iter().filter(|r| r.place == place) {
                count += 1;
                if !kinds.contains(&r.kind.name()) {
                    kinds.push(r.kind.name());
                }
            }
            let noun = if count == 1 { "secret" } else { "secrets" };
            let from = match place {
                Place::MemoryFile => "",
                _ => "the ",
            };
            format!(
                "redacted {count} {noun} ({}) from {from}{}",
                kinds.join(", "),
                place.name()
            )
        })
        .collect()
}
