//! axe-sync and what arrives: conflict files that never overwrite one
//! another, conflict markers and secrets pushed by other clones, daily
//! entries that cannot be forged, names that hold a secret. Machines are
//! [`sync`](crate::sync)'s; a plain-git clone of the remote stands for a
//! person or another program pushing whatever it likes.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::sync::{Machine, TOKEN, joined, no_markers, pair, succeeded};

/// A plain `git clone` of the remote: no hook, no merge driver, commits
/// at a time it is given.
struct Plain {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

/// The second every commit of a [`Plain`] clone is made at, so that two of
/// them share it whatever the clock does.
const SECOND: &str = "@1767225600 +0000";

impl Plain {
    fn clone(remote: &Path) -> Plain {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plain");
        let out = std::process::Command::new("git")
            .args(["clone", "-q", "-b", "main"])
            .arg(remote)
            .arg(&path)
            .output()
            .unwrap();
        succeeded(&out);
        Plain { _dir: dir, path }
    }

    fn git(&self, args: &[&str]) {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(&self.path)
            .args([
                "-c",
                "user.name=plain",
                "-c",
                "user.email=plain@example.com",
            ])
            .args(args)
            .env("GIT_AUTHOR_DATE", SECOND)
            .env("GIT_COMMITTER_DATE", SECOND)
            .output()
            .unwrap();
        succeeded(&out);
    }

    /// Makes the remote's branch its own, as a `git pull` with nothing of
    /// its own to keep.
    fn pull(&self) {
        self.git(&["fetch", "-q", "origin"]);
        self.git(&["reset", "-q", "--hard", "origin/main"]);
    }

    /// Writes `files` (path, text), commits them past any hook, pushes.
    fn push(&self, files: &[(&str, &str)]) {
        for (rel, text) in files {
            let path = self.path.join(rel);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, text).unwrap();
            self.git(&["add", "--", rel]);
        }
        self.git(&["commit", "-q", "--no-verify", "-m", "by hand"]);
        self.git(&["push", "-q", "origin", "HEAD:main"]);
    }
}

/// The conflict files of `m` under `dir` (relative to the repository),
/// with their texts.
fn conflict_files(m: &Machine, dir: &str) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = m
        .files()
        .into_iter()
        .filter(|(p, _)| p.starts_with(dir) && p.contains(".conflict-"))
        .map(|(p, b)| (p, String::from_utf8(b).unwrap()))
        .collect();
    found.sort();
    found
}

fn code(out: &std::process::Output) -> Option<i32> {
    out.status.code()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

const MEMORY: &str = "notes/agents/bot/MEMORY.md";

#[test]
fn two_conflicts_in_one_second_on_one_host_keep_both_texts_everywhere() {
    let Some((_keep, remote, machines)) = joined(2) else {
        return;
    };
    let (a, b) = (&machines[0], &machines[1]);
    assert!(a.reflect("shared\nbase\nend\n"));
    a.synced();
    b.synced();
    let p = Plain::clone(&remote);
    // Another machine's two texts, both from the same second; each meets
    // a change of A's to the same line: two conflicts, one host, one time.
    p.push(&[(MEMORY, "shared\nP1 says this\nend\n")]);
    assert!(a.reflect("shared\nA1\nend\n"));
    let out = a.sync(&[]);
    assert_eq!(code(&out), Some(7), "{}", stderr(&out));
    p.pull();
    p.push(&[(MEMORY, "shared\nP2 says that\nend\n")]);
    assert!(a.reflect("shared\nA2\nend\n"));
    let out = a.sync(&["--json"]);
    assert_eq!(code(&out), Some(7), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["conflicts"].as_array().unwrap().len(), 2, "{report}");
    // A third clone merges both, and keeps both.
    assert_eq!(code(&b.sync(&[])), Some(7));
    for m in [a, b] {
        let sides = conflict_files(m, "notes/agents/bot/");
        let texts: Vec<&str> = sides.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(
            texts.len(),
            2,
            "two conflict files, neither over the other: {sides:?}"
        );
        assert!(texts.contains(&"shared\nP1 says this\nend\n"), "{sides:?}");
        assert!(texts.contains(&"shared\nP2 says that\nend\n"), "{sides:?}");
        for (name, _) in &sides {
            // MEMORY.conflict-<host>-<time>-<hash12>.md, readable still.
            let stem = name.rsplit('/').next().unwrap();
            let hash = stem.trim_end_matches(".md").rsplit('-').next().unwrap();
            assert!(stem.starts_with("MEMORY.conflict-"), "{name}");
            assert!(stem.contains("-20260101T000000Z-"), "{name}");
            assert_eq!(hash.len(), 12, "{name}");
            assert!(hash.bytes().all(|c| c.is_ascii_hexdigit()), "{name}");
        }
        assert_eq!(m.file(MEMORY), "shared\nA2\nend\n");
        let recall = m.run("axe-notes-recall", &["bot"]);
        let recall = String::from_utf8_lossy(&recall.stdout).into_owned();
        for (name, _) in &sides {
            let rel = name.strip_prefix("notes/").unwrap();
            assert!(recall.contains(rel), "{recall}");
        }
    }
}
