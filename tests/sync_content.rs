//! axe-sync and what arrives: conflict files that never overwrite one
//! another, conflict markers and secrets pushed by other clones, daily
//! entries that cannot be forged, names that hold a secret. Machines are
//! [`sync`](crate::sync)'s; a plain-git clone of the remote stands for a
//! person or another program pushing whatever it likes.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::sync::{Machine, TOKEN, joined, pair, succeeded};

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

/// No file of `m` but a conflict file holds a git conflict marker.
fn no_markers_in_memory(m: &Machine) {
    for (path, bytes) in m.files() {
        let text = String::from_utf8_lossy(&bytes);
        let marked = text
            .lines()
            .any(|l| l.starts_with("<<<<<<<") || l.starts_with(">>>>>>>"));
        assert!(
            !marked || path.contains(".conflict-"),
            "{path} holds a conflict marker:\n{text}"
        );
    }
}

#[test]
fn conflict_markers_that_arrive_are_kept_aside_never_merged_in() {
    let Some((_keep, remote, machines)) = joined(1) else {
        return;
    };
    let a = &machines[0];
    assert!(a.reflect("shared\nbase\nend\n"));
    a.remember("before [b1]");
    a.synced();
    let day = a
        .files()
        .into_keys()
        .find(|p| p.contains("/daily/"))
        .unwrap();
    let daily = a.file(&day);
    // A person's unfinished `git merge`, committed past the hook.
    let marked = "<<<<<<< HEAD\nmine\n=======\nyours\n>>>>>>> other\n";
    let memory = format!("shared\n{marked}end\n");
    let topic = format!("Deploys\n\n{marked}");
    let log = format!("{daily}\n## 23:59\n\n{marked}");
    let p = Plain::clone(&remote);
    p.push(&[
        (MEMORY, &memory),
        ("notes/world/deploys.md", &topic),
        (&day, &log),
    ]);
    let out = a.sync(&["--json"]);
    assert_eq!(code(&out), Some(7), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let conflicts: Vec<&str> = report["conflicts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(conflicts.len(), 3, "{report}");
    for c in &conflicts {
        assert!(stderr(&out).contains(c), "{}", stderr(&out));
    }
    // Memory is as it was; each arrived text is beside its note, whole.
    no_markers_in_memory(a);
    assert_eq!(a.file(MEMORY), "shared\nbase\nend\n");
    assert!(!a.repo().join("notes/world/deploys.md").exists());
    assert_eq!(a.file(&day), daily);
    let mut kept: Vec<String> = conflicts.iter().map(|c| a.file(c)).collect();
    kept.sort();
    let mut arrived = vec![memory.clone(), topic.clone(), log.clone()];
    arrived.sort();
    assert_eq!(kept, arrived);
    let recall = a.run("axe-notes-recall", &["bot"]);
    let recall = String::from_utf8_lossy(&recall.stdout).into_owned();
    assert!(!recall.contains("<<<<<<<"), "{recall}");
    for c in &conflicts {
        assert!(
            recall.contains(c.strip_prefix("notes/").unwrap()),
            "{recall}"
        );
    }
    // What the remote has now is the note without markers, and what A
    // writes next syncs.
    let head = crate::sync::git(&remote, &["show", &format!("main:{MEMORY}")]);
    assert_eq!(head, "shared\nbase\nend");
    a.remember("after [b2]");
    assert_eq!(code(&a.sync(&[])), Some(7));
    let log = crate::sync::git(&remote, &["show", &format!("main:{day}")]);
    assert!(log.contains("[b2]") && !log.contains("<<<<<<<"), "{log}");
}

#[test]
fn the_hook_lets_a_conflict_file_hold_the_markers_it_arrived_with() {
    let Some((_keep, _, machines)) = joined(1) else {
        return;
    };
    let repo = machines[0].repo();
    let marked = "<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n";
    fs::write(
        repo.join("MEMORY.conflict-h-20260101T000000Z-0123456789ab.md"),
        marked,
    )
    .unwrap();
    let git_here = |args: &[&str]| {
        let mut cmd = machines[0].env.program("git");
        cmd.arg("-C").arg(&repo);
        cmd.args(["-c", "user.name=t", "-c", "user.email=t@t"]);
        cmd.args(args).output().unwrap()
    };
    succeeded(&git_here(&["add", "-A"]));
    succeeded(&git_here(&["commit", "-q", "-m", "m"]));
    // A note beside it with markers is still refused.
    fs::write(repo.join("x.md"), marked).unwrap();
    succeeded(&git_here(&["add", "x.md"]));
    let out = git_here(&["commit", "-q", "-m", "m"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("markers in x.md -"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_secret_that_arrived_is_told_once_and_blocks_nothing_after() {
    let Some((_keep, remote, machines)) = joined(2) else {
        return;
    };
    let (a, b) = (&machines[0], &machines[1]);
    // A keeps secrets as written, and syncs one.
    a.env.write(
        &a.env.config_dir().join("axe/config.toml"),
        "[memory]\nredact = false\n",
    );
    a.remember(&format!("the deploy token is {TOKEN} [a1]"));
    assert_eq!(code(&a.sync(&[])), Some(0));
    // B writes to the same day's log, before and after it arrives.
    b.remember("B's first note [b1]");
    let out = b.sync(&[]);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    let told = stderr(&out);
    assert_eq!(told.matches("github token").count(), 1, "{told}");
    assert!(told.contains("arrived"), "{told}");
    assert!(!told.contains(TOKEN), "{told}");
    b.remember("B's second note [b2]");
    let out = b.sync(&[]);
    assert_eq!(code(&out), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("github token"), "told once");
    let history = crate::sync::git(&remote, &["log", "-p", "main"]);
    assert!(history.contains("[b1]") && history.contains("[b2]"));
    // What B adds of its own is still judged.
    b.remember("B's third note [b3]");
    let day = b
        .files()
        .into_keys()
        .find(|p| p.contains("/daily/"))
        .unwrap();
    let path = b.repo().join(&day);
    let mut text = fs::read_to_string(&path).unwrap();
    text.push_str("\n## 23:59\n\nmine: AKIAIOSFODNN7EXAMPLE\n");
    fs::write(&path, text).unwrap();
    let out = b.sync(&[]);
    assert_eq!(code(&out), Some(1));
    assert!(
        stderr(&out).contains("(aws access key; the first on line"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("github token"), "{}", stderr(&out));
}

#[test]
fn a_header_line_in_remembered_text_forges_no_daily_entry() {
    let Some((_keep, [a, b])) = pair() else {
        return;
    };
    // An entry header of a daily log inside the text: once written, it
    // must not start an entry, or a merge places another's between.
    let text = "Deploy steps:\n## 24:00\nsecond half [h1]";
    a.remember(text);
    let day = a
        .files()
        .into_keys()
        .find(|p| p.contains("/daily/"))
        .unwrap();
    let date = day.rsplit('/').next().unwrap().trim_end_matches(".md");
    fs::create_dir_all(b.repo().join(&day).parent().unwrap()).unwrap();
    fs::write(
        b.repo().join(&day),
        format!("# {date}\n\n## 23:59\n\nB's entry [h2]\n"),
    )
    .unwrap();
    a.synced();
    b.synced();
    a.synced();
    for m in [a, b] {
        let log = m.file(&day);
        let entry = log
            .find("Deploy steps:")
            .map(|at| &log[at..])
            .unwrap_or_default();
        // Whole: the second half follows the first, nothing between.
        assert!(
            entry.starts_with("Deploy steps:\n ## 24:00\nsecond half [h1]\n"),
            "{log}"
        );
        assert_eq!(log.matches("[h2]").count(), 1, "{log}");
        assert_eq!(log.matches("[h1]").count(), 1, "{log}");
        let recall = m.run("axe-notes-recall", &["bot"]);
        let recall = String::from_utf8_lossy(&recall.stdout).into_owned();
        assert!(
            recall.contains("Deploy steps:\n ## 24:00\nsecond half [h1]"),
            "{recall}"
        );
    }
}

#[test]
fn a_file_whose_name_holds_a_secret_is_not_committed() {
    let Some((_keep, remote, machines)) = joined(1) else {
        return;
    };
    let a = &machines[0];
    let before = crate::sync::git(&remote, &["rev-parse", "main"]);
    // Planted by hand (or by a program that knows no better).
    let planted = a.repo().join(format!("notes/world/{TOKEN}.md"));
    fs::create_dir_all(planted.parent().unwrap()).unwrap();
    fs::write(&planted, "nothing secret inside\n").unwrap();
    a.remember("a note of the same sync [p1]");
    let out = a.sync(&[]);
    assert_eq!(code(&out), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("notes/world/[redacted: github token].md: its name holds what looks like a secret (github token)"),
        "{err}"
    );
    assert!(!err.contains(TOKEN), "{err}");
    assert_eq!(crate::sync::git(&remote, &["rev-parse", "main"]), before);
    let names = crate::sync::git(&remote, &["log", "--all", "--name-only"]);
    assert!(!names.contains(TOKEN), "{names}");
    fs::remove_file(&planted).unwrap();
    assert_eq!(code(&a.sync(&[])), Some(0));
    let log = crate::sync::git(&remote, &["log", "-p", "main"]);
    assert!(log.contains("[p1]"));
}
