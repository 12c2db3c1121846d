//! `axe-sync init` as a user meets it: a wrong remote URL, an init on a
//! repository that was there already, and the README's bare remote, which
//! a plain `git clone` must take without a warning.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use crate::sync::{Machine, git, remote};
use crate::util::have;

/// Everything under `dir`, git's own files included, by path: what an
/// init that failed must leave as it found it. The sync lock's directory
/// is axe-sync's own bookkeeping, not part of the repository.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, found: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel == ".git/axe-sync" {
                continue;
            }
            match path.is_dir() {
                true => walk(root, &path, found),
                false => {
                    found.insert(rel, fs::read(&path).unwrap_or_default());
                }
            }
        }
    }
    let mut found = BTreeMap::new();
    walk(dir, dir, &mut found);
    found
}

#[test]
fn a_failed_init_leaves_nothing_behind_and_the_right_one_then_succeeds() {
    if !have("git") {
        return;
    }
    let m = Machine::new();
    m.remember("before any sync [i1]");
    let before = snapshot(&m.repo());
    let wrong = m.env.root().join("no/such.git");
    let out = m.run("axe-sync", &["init", "--remote", wrong.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no/such.git"), "{err}");
    assert!(
        !m.repo().join(".git").exists(),
        "the repository it made stays"
    );
    assert_eq!(snapshot(&m.repo()), before, "init left something behind");

    let (_keep, right) = remote();
    let out = m.init(&right);
    let done: serde_json::Value = {
        let out = m.run("axe-sync", &["status", "--json"]);
        serde_json::from_slice(&out.stdout).unwrap()
    };
    assert_eq!(done["remote"], right.to_str().unwrap(), "{out:?}");
    assert_eq!(git(&m.repo(), &["remote"]), "origin");
    assert!(
        git(&right, &["log", "-p", "main"]).contains("[i1]"),
        "the memory reached the remote"
    );
}

#[test]
fn a_failed_init_on_an_existing_repository_leaves_it_as_it_was() {
    if !have("git") {
        return;
    }
    let m = Machine::new();
    let (_keep, right) = remote();
    m.init(&right);
    // The user's own changes to what init made: a hook and an ignore file
    // taken out, a setting of their own; and a change not synced yet.
    fs::remove_file(m.repo().join(".git/hooks/pre-commit")).unwrap();
    fs::remove_file(m.repo().join(".gitignore")).unwrap();
    git(&m.repo(), &["config", "user.name", "Ada"]);
    m.remember("not synced yet [e1]");
    let before = snapshot(&m.repo());
    let head = git(&m.repo(), &["rev-parse", "HEAD"]);

    let wrong = m.env.root().join("no/such.git");
    let out = m.run("axe-sync", &["init", "--remote", wrong.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(git(&m.repo(), &["rev-parse", "HEAD"]), head);
    assert_eq!(
        git(&m.repo(), &["remote", "get-url", "origin"]),
        right.to_str().unwrap()
    );
    let after = snapshot(&m.repo());
    for (path, text) in &before {
        assert_eq!(after.get(path), Some(text), "{path} changed");
    }
    let added: Vec<&String> = after.keys().filter(|p| !before.contains_key(*p)).collect();
    assert!(added.is_empty(), "init left {added:?}");
    // And the repository still syncs where it did.
    m.synced();
    assert!(git(&right, &["log", "-p", "main"]).contains("[e1]"));
}

/// The README's set-up, run as written in a fresh HOME: a plain clone of
/// the remote it makes checks out the memory, without git's warning that
/// the remote's HEAD names a branch that does not exist.
#[test]
fn the_readmes_remote_clones_without_a_warning() {
    if !have("git") || !have("bash") {
        return;
    }
    let readme = crate::readme::guide();
    let start = readme
        .find("```sh\ngit init -q --bare ")
        .expect("the README's sync set-up");
    let block = &readme[start + "```sh\n".len()..];
    let block = &block[..block.find("```").unwrap()];
    let m = Machine::new();
    // The agent the block names (the notes tools' own set-up is earlier
    // in the README).
    m.env.agent(
        "reviewer",
        "name = \"reviewer\"\nmodel = \"anthropic/claude-3\"\n[notes]\nenabled = true\n",
    );
    let home = m.env.root().join("home");
    fs::create_dir_all(&home).unwrap();
    let out = m
        .env
        .shell("bash")
        .current_dir(&home)
        .args(["-e", "-c", block])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    clones_cleanly(&home.join("memory.git"), &m.env.root().join("clone"));
}

/// A bare remote made on another branch (git's default is still `master`
/// on many machines): init points its HEAD at the branch it pushed.
#[test]
fn init_points_an_empty_bare_remotes_head_at_its_branch() {
    if !have("git") {
        return;
    }
    let m = Machine::new();
    m.remember("from the first machine [h1]");
    let dir = tempfile::tempdir().unwrap();
    let bare = dir.path().join("memory.git");
    git(
        dir.path(),
        &["init", "-q", "--bare", "-b", "master", "memory.git"],
    );
    m.init(&bare);
    assert_eq!(git(&bare, &["symbolic-ref", "HEAD"]), "refs/heads/main");
    clones_cleanly(&bare, &dir.path().join("clone"));

    // A remote whose HEAD names a branch it has is the owner's choice.
    let other = dir.path().join("other.git");
    git(
        dir.path(),
        &["init", "-q", "--bare", "-b", "trunk", "other.git"],
    );
    let seed = dir.path().join("seed");
    git(dir.path(), &["init", "-q", "-b", "trunk", "seed"]);
    fs::write(seed.join("README"), "theirs\n").unwrap();
    git(&seed, &["add", "README"]);
    git(
        &seed,
        &[
            "-c",
            "user.name=A",
            "-c",
            "user.email=a@b",
            "commit",
            "-q",
            "-m",
            "x",
        ],
    );
    git(&seed, &["push", "-q", other.to_str().unwrap(), "trunk"]);
    let n = Machine::new();
    n.init(&other);
    assert_eq!(git(&other, &["symbolic-ref", "HEAD"]), "refs/heads/trunk");
}

/// `git clone remote into`: no warning, and the memory checked out.
fn clones_cleanly(remote: &Path, into: &Path) {
    let out = std::process::Command::new("git")
        .arg("clone")
        .arg(remote)
        .arg(into)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("warning"), "{err}");
    assert!(into.join(".gitattributes").is_file(), "nothing checked out");
}
