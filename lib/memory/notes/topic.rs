//! World topic names: what a topic may be called on disk.

use crate::error::{Error, Result};

/// The file name (without `.md`) for `topic`: letters and digits kept,
/// lower-cased; every other run of characters one dash; no dash at either
/// end. `Deploy Process!` is `deploy-process`, `../etc` is `etc`. A name
/// with no letter or digit is refused, so `..`, `/` and empty names cannot
/// happen.
pub fn sanitize(topic: &str) -> Result<String> {
    let mut name = String::with_capacity(topic.len());
    for c in topic.chars() {
        if c.is_alphanumeric() {
            name.extend(c.to_lowercase());
        } else if !name.is_empty() && !name.ends_with('-') {
            name.push('-');
        }
    }
    while name.ends_with('-') {
        name.pop();
    }
    if name.is_empty() {
        return Err(Error::Input(format!(
            "topic \"{topic}\" has no letters or digits to name a file"
        )));
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::sanitize;

    #[test]
    fn names() {
        let s = |t: &str| sanitize(t).unwrap();
        assert_eq!(s("Deploy Process!"), "deploy-process");
        assert_eq!(s("../etc"), "etc");
        assert_eq!(s("a/../../b"), "a-b");
        assert_eq!(s("snake_case"), "snake-case");
        assert_eq!(s("Zürich"), "zürich");
        assert_eq!(s("already-fine"), "already-fine");
        for bad in ["", "..", "/", "---", " "] {
            assert!(sanitize(bad).is_err(), "{bad:?}");
        }
    }
}
