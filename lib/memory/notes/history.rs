//! What a consolidation keeps: one record per run, in
//! `agents/<agent>/history/<UTC time>-<8 hex>.json` (`20261124T210000123Z-…`), holding the entries
//! it consolidated (the marker) and the previous text of every file it
//! rewrote, so that nothing it replaced is lost and the last one can be
//! undone.
//!
//! One file per consolidation, never edited by another machine: a sync
//! carries each as it is and two machines' records never merge, so the set
//! of entries consolidated is the union of every record's, whichever
//! machine made it. The name starts with the time, so the newest sorts
//! last; the hex part keeps two machines' records of one second apart. The
//! records are JSON, not markdown: recall, search and the memory kinds
//! never take one for a note.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};
use time::{Date, OffsetDateTime};

use super::workspace::Workspace;
use crate::error::io_error;
use crate::hash::sha256_hex;
use crate::lock::Wait;
use crate::secrets::Secrets;
use axe_base::error::Result;

/// One file a consolidation wrote: the bytes it held just before the
/// consolidation's first write of it (read under its lock at that write,
/// not at the start of the run: what someone else wrote meanwhile is
/// theirs, kept as the text replaced) and the hash of what the
/// consolidation left in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "KeptJson", into = "KeptJson")]
pub struct Kept {
    /// Relative to the workspace, `/` between components.
    pub path: String,
    /// Its bytes before; `None`: it did not exist.
    pub before: Option<Vec<u8>>,
    pub sha256_before: String,
    /// Its hash once the consolidation wrote it; `None` in a record of a
    /// consolidation that did not say (older ones, until they finished).
    pub sha256_after: Option<String>,
}

/// [`Kept`] as the record holds it: a text that is UTF-8 as a JSON
/// string, readable and as records always had it; bytes that are not as
/// base64, since a JSON string would carry them only as U+FFFD.
#[derive(Serialize, Deserialize)]
struct KeptJson {
    path: String,
    before: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    before_base64: Option<String>,
    sha256_before: String,
    sha256_after: Option<String>,
}

impl From<Kept> for KeptJson {
    fn from(k: Kept) -> KeptJson {
        let (before, before_base64) = match k.before.map(String::from_utf8) {
            None => (None, None),
            Some(Ok(text)) => (Some(text), None),
            Some(Err(e)) => (None, Some(BASE64.encode(e.as_bytes()))),
        };
        KeptJson {
            path: k.path,
            before,
            before_base64,
            sha256_before: k.sha256_before,
            sha256_after: k.sha256_after,
        }
    }
}

impl TryFrom<KeptJson> for Kept {
    type Error = String;

    fn try_from(k: KeptJson) -> std::result::Result<Kept, String> {
        let before =
            match (k.before, k.before_base64) {
                (_, Some(b64)) => Some(BASE64.decode(b64.as_bytes()).map_err(|e| {
                    format!("the previous bytes of {} are not base64: {e}", k.path)
                })?),
                (text, None) => text.map(String::into_bytes),
            };
        Ok(Kept {
            path: k.path,
            before,
            sha256_before: k.sha256_before,
            sha256_after: k.sha256_after,
        })
    }
}

/// A consolidation's record: exactly what the consolidation itself wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// When it started, RFC 3339.
    pub at: String,
    /// Whether it finished: a record written while it runs keeps the
    /// previous bytes should the run die; its entries are only marked
    /// once it did finish.
    pub done: bool,
    /// The ids of the entries it consolidated (see `entries`).
    pub entries: Vec<String>,
    pub files: Vec<Kept>,
    /// Each file's `before` was read under its lock at the consolidation's
    /// own write, and a file it names with none is one it created. Older
    /// records (false) kept the texts as the run started, so theirs may
    /// be another writer's, and their "did not exist" may be wrong.
    #[serde(default)]
    pub at_write: bool,
}

/// A record and where it is.
#[derive(Debug, Clone)]
pub struct Stored {
    pub path: PathBuf,
    pub record: Record,
}

/// `agents/<agent>/history`.
pub fn dir(ws: &Workspace, agent: &str) -> PathBuf {
    ws.agent_dir(agent).join("history")
}

/// The path of a new record of `agent` started `at`.
pub fn new_path(ws: &Workspace, agent: &str, at: OffsetDateTime) -> PathBuf {
    let at = at.to_offset(time::UtcOffset::UTC);
    let salt =
        sha256_hex(format!("{} {}", std::process::id(), at.unix_timestamp_nanos()).as_bytes());
    // Milliseconds too: two consolidations of one second on one machine
    // (an undo and a run again) still sort in the order they ran.
    dir(ws, agent).join(format!(
        "{:04}{:02}{:02}T{:02}{:02}{:02}{:03}Z-{}.json",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second(),
        at.millisecond(),
        &salt[..8]
    ))
}

/// Every record of `agent`, oldest first. A record that cannot be read or
/// is not one (edited by hand, a conflict file a sync left) is passed
/// over: it marks nothing and is never undone.
pub fn list(ws: &Workspace, agent: &str) -> Result<Vec<Stored>> {
    let mut stored = Vec::new();
    for file in names(ws, agent)? {
        if let Ok(record) = read(ws, &file) {
            stored.push(Stored { path: file, record });
        }
    }
    Ok(stored)
}

/// The newest file named as a record of `agent`, and the record it holds
/// or why it holds none: what an undo would take back must be the newest,
/// not the one before a record torn or not one.
pub fn newest(
    ws: &Workspace,
    agent: &str,
) -> Result<Option<(PathBuf, std::result::Result<Record, String>)>> {
    Ok(names(ws, agent)?.pop().map(|file| {
        let record = read(ws, &file);
        (file, record)
    }))
}

/// The paths of the files named as records of `agent`, oldest first.
fn names(ws: &Workspace, agent: &str) -> Result<Vec<PathBuf>> {
    let path = dir(ws, agent);
    let Some(dir) = ws.dir(&path, false)? else {
        return Ok(Vec::new());
    };
    let mut names: Vec<String> = dir
        .list()
        .map_err(|e| io_error("", "read", &path, e))?
        .into_iter()
        .filter_map(|(n, _)| n.into_string().ok())
        .filter(|n| stamp_date(n).is_some() && n.ends_with(".json"))
        .collect();
    names.sort();
    Ok(names.into_iter().map(|n| path.join(n)).collect())
}

/// The record at `file`, or why it is none.
fn read(ws: &Workspace, file: &Path) -> std::result::Result<Record, String> {
    match ws.read(file) {
        Ok(Some(bytes)) => serde_json::from_slice(&bytes).map_err(|e| e.to_string()),
        Ok(None) => Err("it is gone".to_owned()),
        Err(e) => Err(e.to_string()),
    }
}

/// The ids of every entry a finished consolidation of `agent` took in.
pub fn consolidated(records: &[Stored]) -> BTreeSet<String> {
    records
        .iter()
        .filter(|s| s.record.done)
        .flat_map(|s| s.record.entries.iter().cloned())
        .collect()
}

/// Writes `record` at `path`, replacing what is there, atomically under
/// the file's lock; the texts go through `secrets` as every notes write's
/// do (each as itself, then the JSON), so a sync never refuses the record
/// for a key in an old text.
pub fn write(
    ws: &Workspace,
    path: &Path,
    record: &Record,
    secrets: &Secrets,
    wait: Wait,
) -> Result<()> {
    let json = encode(record, secrets);
    super::rewrite(
        ws,
        path,
        &json,
        None,
        (usize::MAX, "history"),
        secrets,
        wait,
    )?;
    Ok(())
}

/// `record` as JSON, each text redacted as itself: the scanner knows a
/// credential by its shape in the text (`KEY="…"`, a PEM block's lines),
/// which JSON's escapes (`\"`, `\n`) hide, so a record redacted only as
/// JSON kept such a key.
fn encode(record: &Record, secrets: &Secrets) -> Vec<u8> {
    let mut record = record.clone();
    for k in &mut record.files {
        if let Some(bytes) = k.before.as_mut() {
            // Bytes, not a string: a text that is not UTF-8 keeps every
            // byte the redaction does not replace.
            *bytes = secrets.redact(bytes).text.into_owned();
        }
    }
    // A record of strings, bools and lists always serialises.
    serde_json::to_vec_pretty(&record).unwrap_or_default()
}

/// Removes the record at `path`.
pub fn remove(ws: &Workspace, path: &Path) -> Result<()> {
    if let Some((dir, name)) = ws.file(path, false)? {
        dir.remove(&name)
            .map_err(|e| io_error("", "remove", path, e))?;
    }
    Ok(())
}

/// Removes the notes file at `path` (a file a consolidation created) if it
/// still hashes to `expected`, checked under its lock, so a write that
/// came after the check is never removed; `false` when it does not, or
/// is gone.
pub fn remove_if(ws: &Workspace, path: &Path, expected: &str, wait: Wait) -> Result<bool> {
    use std::io::Read;
    let Some((dir, name)) = ws.file(path, false)? else {
        return Ok(false);
    };
    let fail = |op: &'static str, e: std::io::Error| io_error("failed to remove", op, path, e);
    let how = axe_base::beneath::Open::Read;
    let locked = crate::lock::open_locked(&dir, &name, how, crate::lock::Mode::Exclusive, wait);
    let Some(mut file) = locked.map_err(|e| fail("open", e))? else {
        return Ok(false);
    };
    let mut now = Vec::new();
    file.read_to_end(&mut now).map_err(|e| fail("read", e))?;
    if !sha256_hex(&now).eq_ignore_ascii_case(expected) {
        return Ok(false);
    }
    dir.remove(&name).map_err(|e| fail("remove", e))?;
    Ok(true)
}

/// The day of a record named `<YYYYMMDD>T…`, for a prune.
pub fn stamp_date(name: &str) -> Option<Date> {
    let digits = name.get(..8)?;
    if !digits.bytes().all(|b| b.is_ascii_digit()) || name.as_bytes().get(8) != Some(&b'T') {
        return None;
    }
    let month = time::Month::try_from(digits[4..6].parse::<u8>().ok()?).ok()?;
    Date::from_calendar_date(digits[..4].parse().ok()?, month, digits[6..].parse().ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::stamp_date;

    #[test]
    fn records_are_dated_by_their_name() {
        assert!(stamp_date("20261124T210000Z-0123abcd.json").is_some());
        for other in [
            "2026112T210000Z.json",
            "x.json",
            "20261324T000000Z.json",
            "",
        ] {
            assert!(stamp_date(other).is_none(), "{other}");
        }
    }
}

#[cfg(test)]
mod redacted {
    use super::{Kept, Record};
    use crate::secrets::Secrets;

    /// Texts with a credential in each shape the scanner knows, as a
    /// MEMORY.md written by hand may hold them, and the credential.
    const TEXTS: &[(&str, &str)] = &[
        (
            "export OPENROUTER_API_KEY=\"sk-or-v1-0a1b2c3d4e5f6a7b8c9d0e1f2a3b\"",
            "0a1b2c3d4e5f6a7b8c9d0e1f2a3b",
        ),
        (
            "\"SecretAccessKey\": \"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\"",
            "wJalrXUtnFEMI/K7MDENG",
        ),
        (
            "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl' x",
            "eyJhbGciOiJIUzI1NiJ9",
        ),
        (
            "Authorization: Basic dXNlcjpwYXNzd29yZA==\r\nHost: x",
            "dXNlcjpwYXNzd29yZA",
        ),
        (
            "{\"api_key\": \"ZxY9wV8uT7sR6qP5oN4m\"}",
            "ZxY9wV8uT7sR6qP5oN4m",
        ),
        (
            "OAUTH_CLIENT_SECRET: \"Xy7pQ2rS9tU4vW1zA8bC\"",
            "Xy7pQ2rS9tU4vW1zA8bC",
        ),
        (
            "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nabc+/=\n-----END RSA PRIVATE KEY-----\nb",
            "MIIEowIBAAKCAQEA7",
        ),
        (
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----",
            "lQOYBF",
        ),
        (
            "db at postgres://app:s3cr3t-Pa55@db.internal:5432/app",
            "s3cr3t-Pa55",
        ),
        (
            "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
            "wJalrXUtnFEMI/K7MDENG",
        ),
    ];

    #[test]
    fn a_record_redacted_stays_a_record_and_keeps_no_credential() {
        let secrets = Secrets::with_keys(Vec::new());
        for (text, key) in TEXTS {
            let record = Record {
                at: "2026-11-24T21:00:00Z".to_owned(),
                done: true,
                entries: vec!["2026-11-24 0123456789abcdef".to_owned()],
                files: vec![Kept {
                    path: "agents/a/MEMORY.md".to_owned(),
                    before: Some(text.as_bytes().to_vec()),
                    sha256_before: String::new(),
                    sha256_after: None,
                }],
                at_write: true,
            };
            // As `write` has it written: through the notes' redaction too.
            let json = secrets
                .redact(&super::encode(&record, &secrets))
                .text
                .into_owned();
            let back: Record = serde_json::from_slice(&json)
                .unwrap_or_else(|e| panic!("{text:?}: {e}: {}", String::from_utf8_lossy(&json)));
            let before = back.files[0].before.clone().unwrap_or_default();
            let before = String::from_utf8_lossy(&before);
            assert!(!before.contains(key), "{text:?} kept as {before:?}");
            assert_eq!(back.entries, record.entries);
        }
    }
}

#[cfg(test)]
mod bytes {
    use super::{Kept, Record};
    use crate::secrets::Secrets;

    fn record(before: &[u8]) -> Record {
        Record {
            at: "2026-11-24T21:00:00Z".to_owned(),
            done: true,
            entries: Vec::new(),
            files: vec![Kept {
                path: "agents/a/MEMORY.md".to_owned(),
                before: Some(before.to_vec()),
                sha256_before: String::new(),
                sha256_after: Some(String::new()),
            }],
            at_write: true,
        }
    }

    #[test]
    fn bytes_that_are_not_utf8_come_back_exactly_and_still_redacted() {
        let secrets = Secrets::with_keys(Vec::new());
        let latin1 = b"- Caf\xe9 at 8.\nexport OPENROUTER_API_KEY=\"sk-or-v1-0a1b2c3d4e5f6a7b8c9d0e1f2a3b\"\n\xff\n";
        let json = secrets
            .redact(&super::encode(&record(latin1), &secrets))
            .text
            .into_owned();
        let back: Record = serde_json::from_slice(&json).unwrap();
        let before = back.files[0].before.clone().unwrap();
        assert!(before.starts_with(b"- Caf\xe9 at 8.\n"), "{before:?}");
        assert!(before.ends_with(b"\n\xff\n"), "{before:?}");
        assert!(
            !String::from_utf8_lossy(&before).contains("0a1b2c3d4e5f"),
            "{before:?}"
        );
        // UTF-8 stays a readable string, as records always held it.
        let json = super::encode(&record(b"plain\n"), &secrets);
        let value: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(value["files"][0]["before"], "plain\n");
        assert!(value["files"][0].get("before_base64").is_none());
    }

    #[test]
    fn a_record_written_before_reads_as_it_did() {
        let old = r#"{"at":"2026-11-24T21:00:00Z","done":false,"entries":[],"files":[{"path":"agents/a/MEMORY.md","before":"old\n","sha256_before":"x","sha256_after":null}]}"#;
        let back: Record = serde_json::from_str(old).unwrap();
        assert_eq!(back.files[0].before.as_deref(), Some(&b"old\n"[..]));
        assert!(!back.at_write);
    }
}
