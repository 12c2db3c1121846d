//! axe-sync and what a shared remote can hold or a clone can push: tree
//! entries git itself refuses (`.git` in its spellings, `..`), ignore
//! rules, and programs git starts that outlive it.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::sync::{Machine, daily, git, joined, pair, succeeded};

/// Runs git in `dir` with `input` on stdin; its stdout, trimmed.
fn git_in(dir: &Path, args: &[&str], input: &[u8]) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A file to plant: its path's names, its bytes.
type Planted<'a> = (Vec<&'a str>, &'a [u8]);

/// The tree `base` (a tree id, or none) with `files` (path components,
/// bytes) written into it, made with `git mktree`, which checks no names:
/// what a hostile clone can push.
fn tree(repo: &Path, base: Option<&str>, files: &[Planted]) -> String {
    let mut entries: BTreeMap<Vec<u8>, (String, String)> = BTreeMap::new();
    if let Some(base) = base {
        let listing = git_in(repo, &["ls-tree", "-z", base], b"");
        for e in listing.split('\0').filter(|e| !e.is_empty()) {
            let (meta, name) = e.split_once('\t').unwrap();
            let mut meta = meta.split(' ');
            let (mode, _, oid) = (meta.next().unwrap(), meta.next(), meta.next().unwrap());
            entries.insert(name.into(), (mode.to_owned(), oid.to_owned()));
        }
    }
    let mut dirs: BTreeMap<&str, Vec<Planted>> = BTreeMap::new();
    for (path, bytes) in files {
        match &path[..] {
            [name] => {
                let oid = git_in(repo, &["hash-object", "-w", "--stdin"], bytes);
                entries.insert(name.as_bytes().to_vec(), ("100644".into(), oid));
            }
            [first, rest @ ..] => dirs.entry(first).or_default().push((rest.to_vec(), bytes)),
            [] => unreachable!(),
        }
    }
    for (name, files) in dirs {
        let sub = entries
            .get(name.as_bytes())
            .filter(|(mode, _)| mode == "040000")
            .map(|(_, oid)| oid.clone());
        let oid = tree(repo, sub.as_deref(), &files);
        entries.insert(name.as_bytes().to_vec(), ("040000".into(), oid));
    }
    let mut input = Vec::new();
    for (name, (mode, oid)) in &entries {
        let kind = if mode == "040000" { "tree" } else { "blob" };
        input.extend_from_slice(format!("{mode} {kind} {oid}\t").as_bytes());
        input.extend_from_slice(name);
        input.push(0);
    }
    git_in(repo, &["mktree", "-z"], &input)
}

/// A commit on the bare `remote`'s main adding `files` (paths split at
/// `/`), as a clone that skipped every check would push it.
fn plant(remote: &Path, files: &[(&str, &[u8])]) {
    let head = git(remote, &["rev-parse", "main"]);
    let files: Vec<Planted> = files
        .iter()
        .map(|(p, b)| (p.split('/').collect(), *b))
        .collect();
    let base = git(remote, &["rev-parse", "main^{tree}"]);
    let tree = tree(remote, Some(&base), &files);
    let env = [
        ("GIT_AUTHOR_NAME", "x"),
        ("GIT_AUTHOR_EMAIL", "x@x"),
        ("GIT_COMMITTER_NAME", "x"),
        ("GIT_COMMITTER_EMAIL", "x@x"),
    ];
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(remote)
        .args(["commit-tree", &tree, "-p", &head, "-m", "planted"])
        .envs(env)
        .output()
        .unwrap();
    assert!(out.status.success());
    let commit = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    git(remote, &["update-ref", "refs/heads/main", &commit, &head]);
    assert_eq!(git(remote, &["rev-parse", "main"]), commit);
}

/// Every file under the repository's `.git` but the ones git and a sync
/// change as they work (objects, refs, logs, the index, axe-sync's own).
fn git_dir_files(m: &Machine) -> BTreeMap<PathBuf, Vec<u8>> {
    let root = m.repo().join(".git");
    let mut found = BTreeMap::new();
    let mut todo = vec![root.clone()];
    while let Some(dir) = todo.pop() {
        for e in fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            let rel = path.strip_prefix(&root).unwrap().to_owned();
            let first = rel.iter().next().unwrap().to_string_lossy().into_owned();
            let moving = [
                "objects",
                "refs",
                "logs",
                "index",
                "axe-sync",
                "ORIG_HEAD",
                "FETCH_HEAD",
                "packed-refs",
            ];
            if moving.contains(&first.as_str()) {
                continue;
            }
            match path.is_dir() {
                true => todo.push(path),
                false => {
                    found.insert(rel, fs::read(&path).unwrap());
                }
            }
        }
    }
    found
}

/// The paths a `--json` report says were refused.
fn refused(report: &Value) -> Vec<String> {
    report["refused"]
        .as_array()
        .unwrap_or_else(|| panic!("no refused in {report}"))
        .iter()
        .map(|r| r["path"].as_str().unwrap().to_owned())
        .collect()
}

/// A sync with `--json` that must succeed; its report and stderr.
fn sync_json(m: &Machine) -> (Value, String) {
    let out = m.sync(&["--json"]);
    succeeded(&out);
    let report = serde_json::from_slice(&out.stdout).unwrap();
    (report, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_remote_tree_writing_into_git_dir_is_refused_reported_and_the_rest_arrives() {
    let Some((_keep, remote, machines)) = joined(2) else {
        return;
    };
    let (a, b) = (&machines[0], &machines[1]);
    b.remember("from b [r1]");
    b.synced();
    let marker = a.env.root().join("fsmonitor-ran");
    let evil = format!(
        "[core]\n\trepositoryformatversion = 0\n\tfsmonitor = \"touch '{}'; false\"\n",
        marker.display()
    );
    let bad = [
        ".git/config",
        ".git/commondir",
        ".GIT/hooks/pre-push",
        ".git./x",
        "git~1/x",
        ".Git /y",
        "notes/.git/config",
        "notes/GIT~1/config",
        // An HFS+ spelling: a zero-width joiner inside `.git`.
        ".g\u{200d}it/config",
    ];
    // commondir sends git to `evil/`, whose config names the fsmonitor.
    let content = |p: &str| match p.ends_with("commondir") {
        true => b"../evil\n".as_slice(),
        false => evil.as_bytes(),
    };
    let mut files: Vec<(&str, &[u8])> = bad.iter().map(|p| (*p, content(p))).collect();
    files.push(("evil/config", evil.as_bytes()));
    files.push(("notes/world/arrived.md", b"Arrived\n\nthe rest [r2]\n"));
    plant(&remote, &files);
    let before = git_dir_files(a);
    let (report, err) = sync_json(a);
    let mut said = refused(&report);
    said.sort();
    let mut wanted: Vec<String> = bad.iter().map(|p| p.to_string()).collect();
    wanted.sort();
    assert_eq!(said, wanted, "{report}");
    for path in bad {
        assert!(err.contains(&format!("refused {path:?}")), "{path}: {err}");
    }
    assert_eq!(git_dir_files(a), before, "nothing under .git changed");
    assert!(!a.repo().join(".GIT").exists());
    assert!(!a.repo().join("git~1").exists());
    // Later syncs run git status, which would run the fsmonitor.
    a.synced();
    a.synced();
    assert!(!marker.exists(), "the attacker's fsmonitor ran");
    assert_eq!(git_dir_files(a), before, "nothing under .git changed");
    // The rest of the remote's memory arrived.
    assert_eq!(daily(a).matches("[r1]").count(), 1);
    assert!(a.file("notes/world/arrived.md").contains("[r2]"));
    // What a sync pushes holds none of them, so other clones are spared.
    b.synced();
    let listed = git(&remote, &["ls-tree", "-r", "-z", "--name-only", "main"]);
    let listed: Vec<&str> = listed.split('\0').collect();
    assert!(listed.contains(&"evil/config"), "{listed:?}");
    for path in bad {
        assert!(!listed.contains(&path), "{path}: {listed:?}");
    }
    assert!(b.file("notes/world/arrived.md").contains("[r2]"));
}

#[test]
fn a_dot_dot_entry_is_skipped_and_reported_and_every_later_sync_still_works() {
    let Some((_keep, remote, machines)) = joined(2) else {
        return;
    };
    let (a, b) = (&machines[0], &machines[1]);
    b.remember("from b [d1]");
    b.synced();
    // (An empty name git's own upload-pack refuses to send: no remote
    // can deliver one.)
    plant(
        &remote,
        &[
            ("../escaped", b"up\n"),
            ("./here", b"dot\n"),
            ("notes/../x", b"inner\n"),
            ("notes/world/good.md", b"Good\n\n[d2]\n"),
        ],
    );
    let (report, err) = sync_json(a);
    let mut said = refused(&report);
    said.sort();
    assert_eq!(said, ["../escaped", "./here", "notes/../x"]);
    assert!(err.contains("refused \"../escaped\""), "{err}");
    assert!(a.file("notes/world/good.md").contains("[d2]"));
    assert_eq!(daily(a).matches("[d1]").count(), 1);
    assert!(!a.env.data_dir().join("escaped").exists());
    // Again, with one more bad entry on top: this sync and the next both
    // work, the new entry is reported once, the new memory arrives.
    b.remember("from b [d3]");
    b.synced();
    plant(&remote, &[("../escaped", b"again\n")]);
    a.remember("from a [d4]");
    let (report, _) = sync_json(a);
    assert_eq!(refused(&report), ["../escaped"]);
    assert_eq!(daily(a).matches("[d3]").count(), 1);
    let (report, err) = sync_json(a);
    assert!(refused(&report).is_empty(), "{report}");
    assert!(!err.contains("refused"), "{err}");
    b.synced();
    assert_eq!(daily(b).matches("[d4]").count(), 1);
}

/// `status --json`'s changed files.
fn changed(m: &Machine) -> Vec<String> {
    let out = m.run("axe-sync", &["status", "--json"]);
    succeeded(&out);
    let status: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut files: Vec<String> = status["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_owned())
        .collect();
    files.sort();
    files
}

/// What a sync of `m` must carry to the other machine whatever ignore
/// rules there are: a new daily log, a new agent's run log, new state.
fn new_memory(m: &Machine, tag: &str) -> Vec<String> {
    m.remember(&format!("new note {tag}"));
    m.append(&format!("task {tag}"));
    m.ingest(&format!("fact {tag}"), &format!("step {tag}"));
    let other = m.repo().join("memory/other.md");
    fs::write(&other, format!("## run {tag}\n")).unwrap();
    changed(m)
}

#[test]
fn ignore_rules_from_the_tree_info_exclude_or_the_user_are_not_obeyed() {
    let Some((_keep, [a, b])) = pair() else {
        return;
    };
    let (a, b) = (&a, &b);
    // A pushes a .gitignore that ignores everything.
    fs::write(a.repo().join(".gitignore"), "*\n").unwrap();
    a.synced();
    b.synced();
    assert_eq!(
        fs::read_to_string(b.repo().join(".gitignore")).unwrap(),
        "*\n"
    );
    // B's user ignores everything too, and so does the repository's own
    // info/exclude.
    let global = b.env.root().join("global-ignore");
    fs::write(&global, "*\n").unwrap();
    // (The machine's own HOME: its global config is the test's.)
    let set = b
        .env
        .program("git")
        .args(["config", "--global", "core.excludesFile"])
        .arg(&global)
        .output()
        .unwrap();
    succeeded(&set);
    fs::write(b.repo().join(".git/info/exclude"), "*\n").unwrap();
    let listed = new_memory(b, "[i1]");
    for f in ["memory/bot.md", "memory/other.md", "state/bot.json"] {
        assert!(listed.contains(&f.to_owned()), "{f}: {listed:?}");
    }
    assert!(listed.iter().any(|f| f.contains("/daily/")), "{listed:?}");
    b.synced();
    assert_eq!(changed(b), Vec::<String>::new(), "all of it synced");
    a.synced();
    assert_eq!(daily(a).matches("[i1]").count(), 1);
    assert!(a.file("memory/bot.md").contains("[i1]"));
    assert!(a.file("memory/other.md").contains("[i1]"));
    assert!(a.file("state/bot.json").contains("[i1]"));
    // A replace's temp file and an append's marker stay out, by axe's own
    // rule, whatever .gitignore says.
    fs::write(b.repo().join("memory/.bot.md.axe-new"), "half").unwrap();
    assert_eq!(changed(b), Vec::<String>::new());
}

/// Kills the process whose id is in `pidfile` when dropped.
struct Reaper(PathBuf);

impl Drop for Reaper {
    fn drop(&mut self) {
        if let Ok(pid) = fs::read_to_string(&self.0) {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", pid.trim()])
                .status();
        }
    }
}

#[test]
fn a_daemon_git_starts_does_not_keep_the_sync_lock() {
    let Some((_keep, _, machines)) = joined(1) else {
        return;
    };
    let a = &machines[0];
    // A program git starts that lives on in a session of its own (as a
    // credential cache daemon or an ssh ControlPersist master does), with
    // every descriptor it inherited but its stdio: here a pre-push hook.
    let pidfile = a.env.root().join("daemon.pid");
    let _reaper = Reaper(pidfile.clone());
    let hook = a.repo().join(".git/hooks/pre-push");
    let script = format!(
        "#!/bin/sh\nsetsid sh -c 'echo $$ > \"{}\"; exec sleep 60' </dev/null >/dev/null 2>&1 &\nwhile [ ! -s \"{}\" ]; do sleep 0.01; done\n",
        pidfile.display(),
        pidfile.display()
    );
    fs::write(&hook, script).unwrap();
    crate::util::set_mode(&hook, 0o755);
    a.remember("pushed [l1]");
    let out = a.sync(&["--json"]);
    succeeded(&out);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["pushed"], true, "{report}");
    assert!(pidfile.exists(), "the hook ran");
    // The daemon is alive; the next sync must not wait for it.
    a.remember("next [l2]");
    let out = a.sync(&["--wait", "1"]);
    succeeded(&out);
}

#[test]
fn a_git_left_running_by_a_killed_sync_still_keeps_the_next_sync_waiting() {
    let Some((_keep, _, machines)) = joined(1) else {
        return;
    };
    let a = &machines[0];
    // A pre-push hook that stops git push until the test writes a line to
    // a FIFO: the sync is killed while its git waits there.
    let fifo = a.env.root().join("gate");
    let started = a.env.root().join("hook-started");
    succeeded(
        &std::process::Command::new("mkfifo")
            .arg(&fifo)
            .output()
            .unwrap(),
    );
    let hook = a.repo().join(".git/hooks/pre-push");
    let script = format!(
        // Bounded: a failing test does not leave it behind for long.
        "#!/bin/sh\n: > \"{}\"\nexec timeout 60 sh -c 'read line < \"$0\"' \"{}\"\n",
        started.display(),
        fifo.display()
    );
    fs::write(&hook, script).unwrap();
    crate::util::set_mode(&hook, 0o755);
    a.remember("pushed [k1]");
    let mut sync = a
        .env
        .std_cmd("axe-sync")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let since = std::time::Instant::now();
    while !started.exists() {
        assert!(sync.try_wait().unwrap().is_none(), "the sync ended early");
        assert!(since.elapsed().as_secs() < 30, "the hook never ran");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    sync.kill().unwrap();
    sync.wait().unwrap();
    // Its git push lives on, waiting on the hook: the next sync waits.
    let out = a.sync(&["--wait", "0.5"]);
    assert_eq!(out.status.code(), Some(5));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("a git an earlier axe-sync started has not ended"),
        "{err}"
    );
    // Released, that git ends, and the next sync goes ahead.
    fs::write(&fifo, "go\n").unwrap();
    fs::remove_file(&hook).unwrap();
    let out = a.sync(&["--wait", "30"]);
    succeeded(&out);
}
