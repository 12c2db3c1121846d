//! The Go `axe`'s cases of appending, loading and trimming, against
//! real files. Cases that need
//! permissions to bite run through the executables in `tests/`, where they
//! can drop root.

use std::fs;
use std::path::{Path, PathBuf};

use time::Duration;
use time::macros::datetime;

use super::entry::Record;
use super::*;
use crate::lock::Wait;

const T0: time::OffsetDateTime = datetime!(2026-02-28 15:04:05 UTC);

fn dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// A log of `n` entries with distinct timestamps one minute apart.
fn log_with(dir: &Path, n: usize) -> PathBuf {
    let path = dir.join("agent.md");
    for i in 0..n {
        let at = T0 + Duration::minutes(i as i64);
        append(
            &path,
            format!("task {i}").as_bytes(),
            b"result",
            at,
            &Secrets::off(),
            Wait::default(),
        )
        .unwrap();
    }
    path
}

fn text(path: &Path) -> String {
    String::from_utf8(fs::read(path).unwrap()).unwrap()
}

fn headers(s: &str) -> Vec<&str> {
    s.lines().filter(|l| l.starts_with("## ")).collect()
}

#[test]
fn file_path_custom_path_is_used_as_is() {
    let p = file_path(&Dirs::from_env(), "myagent", "/custom/path/mem.md").unwrap();
    assert_eq!(p, PathBuf::from("/custom/path/mem.md"));
}

#[test]
fn file_path_default_and_empty_agent_name() {
    // The data dir comes from the environment; only the tail is ours.
    let dirs = Dirs::from_env();
    let p = file_path(&dirs, "myagent", "").unwrap();
    assert!(p.ends_with("axe/memory/myagent.md"), "{p:?}");
    let p = file_path(&dirs, "", "").unwrap();
    assert!(p.to_string_lossy().ends_with("/memory/.md"), "{p:?}");
}

#[test]
fn file_path_is_in_the_data_dir_given() {
    let of = |data: &str| Dirs::given(None, Some(Path::new(data))).unwrap();
    let (a, b) = (of("/a"), of("/b"));
    assert_eq!(file_path(&a, "x", "").unwrap(), Path::new("/a/memory/x.md"));
    assert_eq!(file_path(&b, "x", "").unwrap(), Path::new("/b/memory/x.md"));
}

#[test]
fn append_creates_file_and_dirs() {
    let d = dir();
    let path = d.path().join("a/b/mem.md");
    append(&path, b"t", b"r", T0, &Secrets::off(), Wait::default()).unwrap();
    assert!(path.parent().unwrap().is_dir());
    assert_eq!(
        text(&path),
        "## 2026-02-28T15:04:05Z\n**Task:** t\n**Result:** r\n\n"
    );
}

#[test]
fn append_appends_to_existing_file() {
    let d = dir();
    let path = log_with(d.path(), 1);
    append(
        &path,
        b"second",
        b"r2",
        T0 + Duration::hours(1),
        &Secrets::off(),
        Wait::default(),
    )
    .unwrap();
    let s = text(&path);
    assert_eq!(
        headers(&s),
        ["## 2026-02-28T15:04:05Z", "## 2026-02-28T16:04:05Z"]
    );
    assert!(s.contains("**Task:** task 0\n") && s.contains("**Task:** second\n"));
}

#[test]
fn append_reports_what_it_wrote() {
    let d = dir();
    let path = d.path().join("m.md");
    let a = append(
        &path,
        b"t",
        "y".repeat(1001).as_bytes(),
        T0,
        &Secrets::off(),
        Wait::default(),
    )
    .unwrap();
    assert_eq!(a.timestamp, "2026-02-28T15:04:05Z");
    assert!(a.truncated);
    assert_eq!(a.bytes, fs::metadata(&path).unwrap().len());
}

#[cfg(unix)]
#[test]
fn append_file_and_dir_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let d = dir();
    let path = d.path().join("new/mem.md");
    // umask may only remove bits; the usual 022 leaves these intact.
    append(&path, b"t", b"r", T0, &Secrets::off(), Wait::default()).unwrap();
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let umask = 0o777 & !mode(&path) & 0o644;
    assert_eq!(umask, 0, "file mode {:o}", mode(&path));
    assert_eq!(mode(&path) & 0o644, 0o644);
    assert_eq!(mode(path.parent().unwrap()) & 0o755, 0o755);
    assert_eq!(mode(&path) & 0o133, 0, "no bits beyond 0644");
}

#[test]
fn load_missing_and_empty_files() {
    let d = dir();
    assert_eq!(
        load(&d.path().join("nope.md"), 0, Wait::default()).unwrap(),
        b""
    );
    assert_eq!(
        load(&d.path().join("nope.md"), 3, Wait::default()).unwrap(),
        b""
    );
    let empty = d.path().join("empty.md");
    fs::write(&empty, "").unwrap();
    assert_eq!(load(&empty, 0, Wait::default()).unwrap(), b"");
    assert_eq!(load(&empty, 2, Wait::default()).unwrap(), b"");
}

#[test]
fn load_all_entries() {
    let d = dir();
    let path = log_with(d.path(), 3);
    let all = load(&path, 0, Wait::default()).unwrap();
    assert_eq!(all, fs::read(&path).unwrap());
    assert_eq!(headers(&text(&path)).len(), 3);
}

#[test]
fn load_last_n() {
    let d = dir();
    let path = log_with(d.path(), 5);
    let s = String::from_utf8(load(&path, 2, Wait::default()).unwrap()).unwrap();
    assert_eq!(
        headers(&s),
        ["## 2026-02-28T15:07:05Z", "## 2026-02-28T15:08:05Z"]
    );
    assert!(text(&path).ends_with(&s));
}

#[test]
fn load_last_n_exceeds_count() {
    let d = dir();
    let path = log_with(d.path(), 3);
    assert_eq!(
        load(&path, 10, Wait::default()).unwrap(),
        fs::read(&path).unwrap()
    );
}

#[test]
fn load_last_one() {
    let d = dir();
    let path = log_with(d.path(), 5);
    let s = String::from_utf8(load(&path, 1, Wait::default()).unwrap()).unwrap();
    assert_eq!(
        s,
        "## 2026-02-28T15:08:05Z\n**Task:** task 4\n**Result:** result\n\n"
    );
}

#[test]
fn load_preserves_format() {
    let d = dir();
    let path = d.path().join("m.md");
    let content = "## one\n**Task:** a\n**Result:** x\n  indented\n\n\n## two\nfree text\r\n\n";
    fs::write(&path, content).unwrap();
    assert_eq!(load(&path, 0, Wait::default()).unwrap(), content.as_bytes());
    assert_eq!(load(&path, 2, Wait::default()).unwrap(), content.as_bytes());
    assert_eq!(
        load(&path, 1, Wait::default()).unwrap(),
        b"## two\nfree text\r\n\n"
    );
}

#[test]
fn load_content_before_first_entry() {
    let d = dir();
    let path = d.path().join("m.md");
    let content = "# My notes\nsome text\n\n## e1\nbody\n\n## e2\nbody\n\n";
    fs::write(&path, content).unwrap();
    assert_eq!(load(&path, 1, Wait::default()).unwrap(), b"## e2\nbody\n\n");
    assert_eq!(
        load(&path, 5, Wait::default()).unwrap(),
        b"## e1\nbody\n\n## e2\nbody\n\n"
    );
    assert_eq!(load(&path, 0, Wait::default()).unwrap(), content.as_bytes());
}

#[test]
fn load_with_no_entries_but_text() {
    let d = dir();
    let path = d.path().join("m.md");
    fs::write(&path, "just notes\n").unwrap();
    assert_eq!(load(&path, 1, Wait::default()).unwrap(), b"");
    assert_eq!(load(&path, 0, Wait::default()).unwrap(), b"just notes\n");
}

#[test]
fn count_missing_empty_many_and_none() {
    let d = dir();
    assert_eq!(
        count(&d.path().join("nope.md"), Wait::default())
            .unwrap()
            .entries,
        0
    );
    let empty = d.path().join("empty.md");
    fs::write(&empty, "").unwrap();
    assert_eq!(count(&empty, Wait::default()).unwrap().entries, 0);
    let path = log_with(d.path(), 5);
    assert_eq!(count(&path, Wait::default()).unwrap().entries, 5);
    let plain = d.path().join("plain.md");
    fs::write(&plain, "text\n# h1\n### h3\n##nospace\n").unwrap();
    assert_eq!(count(&plain, Wait::default()).unwrap().entries, 0);
}

#[test]
fn directory_as_log_is_a_read_error() {
    let d = dir();
    let err = count(d.path(), Wait::default()).unwrap_err().to_string();
    assert!(err.contains("is a directory"), "{err}");
    let err = load(d.path(), 0, Wait::default()).unwrap_err().to_string();
    assert!(err.contains("is a directory"), "{err}");
}

#[test]
fn trim_missing_and_empty_files() {
    let d = dir();
    assert_eq!(
        trim(&d.path().join("nope.md"), 5, true, Wait::default()).unwrap(),
        Trim::Within { entries: 0 }
    );
    let empty = d.path().join("empty.md");
    fs::write(&empty, "").unwrap();
    assert_eq!(
        trim(&empty, 5, true, Wait::default()).unwrap(),
        Trim::Within { entries: 0 }
    );
    assert_eq!(fs::read(&empty).unwrap(), b"");
}

#[test]
fn trim_keep_zero_keeps_everything() {
    let d = dir();
    let path = log_with(d.path(), 5);
    let before = fs::read(&path).unwrap();
    assert_eq!(
        trim(&path, 0, true, Wait::default()).unwrap(),
        Trim::Within { entries: 5 }
    );
    assert_eq!(fs::read(&path).unwrap(), before);
}

#[test]
fn trim_within_and_equal_to_limit_leaves_file_alone() {
    let d = dir();
    for (n, keep) in [(3, 5), (5, 5), (1, 1)] {
        let path = log_with(d.path(), n);
        let before = fs::metadata(&path).unwrap();
        let content = fs::read(&path).unwrap();
        assert_eq!(
            trim(&path, keep, true, Wait::default()).unwrap(),
            Trim::Within { entries: n as u64 }
        );
        let after = fs::metadata(&path).unwrap();
        assert_eq!(fs::read(&path).unwrap(), content);
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            assert_eq!(before.ino(), after.ino(), "file was not replaced");
        }
        fs::remove_file(&path).unwrap();
    }
}

#[test]
fn trim_trims_old_entries() {
    let d = dir();
    let path = log_with(d.path(), 10);
    let expected = load(&path, 3, Wait::default()).unwrap();
    let size = fs::metadata(&path).unwrap().len();
    let outcome = trim(&path, 3, true, Wait::default()).unwrap();
    assert_eq!(
        outcome,
        Trim::Trimmed {
            kept: 3,
            removed: Some(7),
            removed_bytes: size - expected.len() as u64
        }
    );
    assert_eq!(fs::read(&path).unwrap(), expected);
    assert_eq!(count(&path, Wait::default()).unwrap().entries, 3);
}

#[test]
fn trim_without_counting_reports_bytes_only() {
    let d = dir();
    let path = log_with(d.path(), 10);
    match trim(&path, 4, false, Wait::default()).unwrap() {
        Trim::Trimmed {
            kept: 4,
            removed: None,
            removed_bytes,
        } => assert!(removed_bytes > 0),
        other => panic!("{other:?}"),
    }
}

#[test]
fn trim_preserves_entry_format() {
    let d = dir();
    let path = d.path().join("m.md");
    let content = "## a\n**Task:** t\n**Result:** x\n\n## b\n**Task:** t\n**Result:** multi\n  line\n\n\n   trailing  \n\n## c\n**Task:** t\n**Result:** y\r\n\n";
    fs::write(&path, content).unwrap();
    trim(&path, 2, true, Wait::default()).unwrap();
    assert_eq!(
        text(&path),
        "## b\n**Task:** t\n**Result:** multi\n  line\n\n\n   trailing  \n\n## c\n**Task:** t\n**Result:** y\r\n\n"
    );
}

#[test]
fn trim_discards_pre_header_content() {
    let d = dir();
    let path = d.path().join("m.md");
    let mut content = String::from("Notes before any entry\n\n");
    for i in 0..5 {
        content.push_str(&format!("## e{i}\nbody\n\n"));
    }
    fs::write(&path, &content).unwrap();
    assert!(matches!(
        trim(&path, 3, true, Wait::default()).unwrap(),
        Trim::Trimmed {
            removed: Some(2),
            ..
        }
    ));
    assert_eq!(text(&path), "## e2\nbody\n\n## e3\nbody\n\n## e4\nbody\n\n");
}

#[cfg(unix)]
#[test]
fn trim_keeps_the_file_mode_and_follows_symlinks() {
    use std::os::unix::fs::PermissionsExt;
    let d = dir();
    let real = log_with(d.path(), 6);
    fs::set_permissions(&real, fs::Permissions::from_mode(0o600)).unwrap();
    let link = d.path().join("link.md");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    trim(&link, 2, false, Wait::default()).unwrap();
    assert!(fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(count(&real, Wait::default()).unwrap().entries, 2);
    let mode = fs::metadata(&real).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o600);
    let leftovers: Vec<_> = fs::read_dir(d.path()).unwrap().collect();
    assert_eq!(leftovers.len(), 2, "no temporary files left: {leftovers:?}");
}

#[test]
fn non_utf8_bytes_survive_load_and_trim() {
    let d = dir();
    let path = d.path().join("m.md");
    let mut content = b"\xff\xfe preamble\n".to_vec();
    for i in 0..4u8 {
        content.extend_from_slice(b"## \xc3\x28 bad header\n**Task:** \x80\x81\n**Result:** ");
        content.extend_from_slice(&[0xf0, 0x90, i, 0xff, b'\n', b'\n']);
    }
    fs::write(&path, &content).unwrap();
    assert_eq!(load(&path, 0, Wait::default()).unwrap(), content);
    let last2 = load(&path, 2, Wait::default()).unwrap();
    assert!(content.ends_with(&last2));
    assert_eq!(count(&path, Wait::default()).unwrap().entries, 4);
    trim(&path, 2, true, Wait::default()).unwrap();
    assert_eq!(fs::read(&path).unwrap(), last2);
    let records: Vec<Record> = tail(&path, 0, Wait::default())
        .unwrap()
        .records()
        .collect::<Result<_>>()
        .unwrap();
    assert_eq!(records.len(), 2);
    assert!(records[0].timestamp.contains('\u{fffd}'));
}

#[test]
fn records_round_trip_appended_entries() {
    let d = dir();
    let path = d.path().join("m.md");
    fs::write(&path, "preamble\n\n").unwrap();
    let results = ["plain", "## looks like a header\n## Summary\nok", "", "x\n"];
    for (i, r) in results.iter().enumerate() {
        append(
            &path,
            format!("task\n{i}").as_bytes(),
            r.as_bytes(),
            T0,
            &Secrets::off(),
            Wait::default(),
        )
        .unwrap();
    }
    assert_eq!(
        count(&path, Wait::default()).unwrap().entries,
        4,
        "escaped lines are no headers"
    );
    let records: Vec<Record> = tail(&path, 0, Wait::default())
        .unwrap()
        .records()
        .collect::<Result<_>>()
        .unwrap();
    let got: Vec<(&str, &str)> = records
        .iter()
        .map(|r| (r.task.as_deref().unwrap(), r.result.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("task 0", "plain"),
            ("task 1", "## looks like a header\n## Summary\nok"),
            ("task 2", "(none)"),
            ("task 3", "x\n"),
        ]
    );
}
