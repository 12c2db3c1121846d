//! World topic names: what a topic may be called on disk.

use super::fold::combining;
use crate::error::MemoryError;
use crate::secrets::{Kind, Secrets};
use axe_base::error::Result;

/// The longest topic file name, in bytes, without `.md`. Every name made
/// from it must fit the 255 bytes a file name may have: the longest is a
/// write's marker, `.<topic>.md.axe-append`, 15 bytes more.
pub const MAX_BYTES: usize = 200;

/// The file name (without `.md`) for `topic`: letters and digits kept,
/// lower-cased; every other run of characters one dash; no dash at either
/// end. `Deploy Process!` is `deploy-process`, `../etc` is `etc`. A name
/// with no letter or digit is refused, so `..`, `/` and empty names cannot
/// happen.
///
/// Only letters and digits survive lowercasing too: `İ` lowercases to `i`
/// and a combining dot (U+0307), which is dropped, so `İstanbul` is
/// `istanbul`. A combining diacritic typed apart from its letter (`u` and
/// U+0308 for `ü`) is dropped as well rather than cutting the word in two:
/// `Zu\u{308}rich` is `zurich`. Without a normalisation table that is the
/// best that can be done; `Zürich` as one character stays `zürich`.
pub fn sanitize(topic: &str) -> Result<String> {
    let mut name = String::with_capacity(topic.len());
    for c in topic.chars() {
        if c.is_alphanumeric() {
            name.extend(c.to_lowercase().filter(|c| c.is_alphanumeric()));
        } else if combining(c) {
            continue;
        } else if !name.is_empty() && !name.ends_with('-') {
            name.push('-');
        }
    }
    while name.ends_with('-') {
        name.pop();
    }
    if name.is_empty() {
        return Err(MemoryError::TopicUnnamed {
            topic: topic.to_string(),
        }
        .into());
    }
    if name.len() > MAX_BYTES {
        return Err(MemoryError::TopicTooLong {
            bytes: name.len(),
            max: MAX_BYTES,
        }
        .into());
    }
    Ok(name)
}

/// The file name (without `.md`) for `topic`, as [`sanitize`] makes it,
/// refused when the topic or that name holds what `secrets` finds. A name
/// is never redacted (a marker is no name), a sync pushes it, and the
/// name's lower case can make a key whole that the topic's case hid: a
/// key used as a topic would reach every machine and the remote.
pub fn name(topic: &str, secrets: &Secrets) -> Result<String> {
    let name = sanitize(topic)?;
    let mut kinds: Vec<Kind> = Vec::new();
    let found = secrets.find(topic.as_bytes());
    for f in found.into_iter().chain(secrets.find(name.as_bytes())) {
        if !kinds.contains(&f.kind) {
            kinds.push(f.kind);
        }
    }
    if kinds.is_empty() {
        return Ok(name);
    }
    let kinds = kinds.iter().map(|k| k.name()).collect();
    Err(MemoryError::TopicSecret { kinds }.into())
}

#[cfg(test)]
mod tests {
    use super::{name, sanitize};
    use crate::secrets::Secrets;

    #[test]
    fn a_name_holding_a_secret_is_refused() {
        let keys = Secrets::with_keys(vec!["0123456789abcdef0123".into()]);
        let err = name("ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", &keys).unwrap_err();
        assert!(err.to_string().contains("(github token)"), "{err}");
        // Only the name, lower case, holds the key whole.
        let err = name("key 0123456789ABCDEF0123", &keys).unwrap_err();
        assert!(err.to_string().contains("(provider key)"), "{err}");
        assert_eq!(name("Deploy Process!", &keys).unwrap(), "deploy-process");
        let off = Secrets::off();
        assert!(name("ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", &off).is_ok());
    }

    #[test]
    fn names() {
        let s = |t: &str| sanitize(t).unwrap();
        assert_eq!(s("Deploy Process!"), "deploy-process");
        assert_eq!(s("../etc"), "etc");
        assert_eq!(s("a/../../b"), "a-b");
        assert_eq!(s("snake_case"), "snake-case");
        assert_eq!(s("Zürich"), "zürich");
        assert_eq!(s("already-fine"), "already-fine");
        assert_eq!(s("İstanbul"), "istanbul");
        assert_eq!(s("Zu\u{308}rich"), "zurich");
        assert_eq!(s("ΣΟΦΊΑ"), "σοφία");
        assert_eq!(s("a \u{301}b"), "a-b");
        assert_eq!(s("Straße 2"), "straße-2");
        for name in ["İİ", "Ǆ", "ß", "Σ", "A\u{308}"] {
            assert!(s(name).chars().all(char::is_alphanumeric), "{name}");
        }
        assert_eq!(s(&"t".repeat(200)).len(), 200);
        assert_eq!(s(&format!("{}!!!", "t".repeat(200))).len(), 200);
        assert!(sanitize(&"t".repeat(201)).is_err());
        assert!(sanitize(&"é".repeat(101)).is_err(), "bytes, not characters");
        for bad in ["", "..", "/", "---", " ", "\u{307}\u{308}"] {
            assert!(sanitize(bad).is_err(), "{bad:?}");
        }
    }
}
