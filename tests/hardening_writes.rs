//! Writes that must never land outside, tear, hang or leave debris, each in
//! the shape it was found in: symlinks out of the notes workspace (there
//! from the start or swapped in mid-write), signals and `kill -9` during
//! large appends, locks held by a stopped process, refused writes, empty
//! input, odd daily-log names.

use std::fs::{self, File};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use predicates::prelude::*;
use serde_json::Value;

use crate::server::{Answer, Server};
use crate::util::{Env, read, running_as_root};
use crate::wire::{reply_for, served_by};

fn workspace(env: &Env) -> PathBuf {
    env.data_dir().join("axe/notes")
}

/// Every file below `dir`, relative to it.
fn files_below(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    out.sort();
    out
}

/// Remembers `text` for agent `a` and gives today's daily log.
fn remembered(env: &Env, text: &str) -> PathBuf {
    env.cmd("axe-notes-remember")
        .args(["a", text])
        .assert()
        .success();
    fs::read_dir(workspace(env).join("agents/a/daily"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
}

/// Runs `cmd`, which must fail with `code`, and gives its one line on
/// stderr.
fn failing(cmd: &mut assert_cmd::Command, code: i32) -> String {
    let out = cmd.assert().code(code).get_output().clone();
    one_line(&out.stderr)
}

fn one_line(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr).into_owned();
    assert_eq!(text.lines().count(), 1, "one line: {text:?}");
    text
}

// --- 1, 2: symlinks out of the workspace -------------------------------------

#[test]
fn prune_never_deletes_through_a_symlink_out_of_the_workspace() {
    let env = Env::new();
    env.agent_file("a").memory("").notes("").write();
    let outside = env.root().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("2020-01-01.md"), "# 2020-01-01\n").unwrap();
    let agent_dir = workspace(&env).join("agents/a");
    fs::create_dir_all(&agent_dir).unwrap();
    symlink(&outside, agent_dir.join("daily")).unwrap();
    for dry in [true, false] {
        let mut cmd = env.cmd("axe-notes-prune");
        cmd.args(["a", "--older-than", "1"]);
        if dry {
            cmd.arg("--dry-run");
        }
        let err = failing(&mut cmd, 1);
        assert!(err.contains("leads outside the notes workspace"), "{err}");
    }
    assert!(outside.join("2020-01-01.md").exists(), "deleted outside");
}

#[test]
fn nothing_is_created_outside_before_a_path_is_refused() {
    for linked in ["agents/a", "agents"] {
        let env = Env::new();
        env.agent_file("a").memory("").notes("").write();
        let outside = env.root().join("outside");
        fs::create_dir_all(&outside).unwrap();
        let link = workspace(&env).join(linked);
        fs::create_dir_all(link.parent().unwrap()).unwrap();
        symlink(&outside, &link).unwrap();
        env.cmd("axe-notes-remember")
            .args(["a", "hi"])
            .assert()
            .code(1)
            .stderr(predicate::str::contains(
                "leads outside the notes workspace",
            ));
        env.cmd("axe-notes-reflect")
            .arg("a")
            .write_stdin("x")
            .assert()
            .code(1)
            .stderr(predicate::str::contains(
                "leads outside the notes workspace",
            ));
        assert_eq!(fs::read_dir(&outside).unwrap().count(), 0, "{linked}");
    }
}

/// A relative symlink whose `..`s climb above the workspace is refused
/// by every writer, and nothing is made on the way: not outside, and not
/// inside either where a walk that stopped climbing at the top would put
/// it (the beneath walk's `..` check, seen from the executables).
#[test]
fn a_relative_symlink_climbing_out_of_the_workspace_is_refused() {
    for (linked, target) in [
        ("agents/a/daily", "../../../outside"),
        ("agents/a", "../../outside"),
        ("world", "../outside"),
    ] {
        let env = Env::new();
        env.agent_file("a").memory("").notes("").write();
        let ws = workspace(&env);
        let outside = env.root().join("outside");
        fs::create_dir_all(&outside).unwrap();
        let link = ws.join(linked);
        fs::create_dir_all(link.parent().unwrap()).unwrap();
        symlink(target, &link).unwrap();
        let before = files_below(&ws);
        for (bin, args) in [
            ("axe-notes-remember", &["a", "hi"][..]),
            ("axe-notes-reflect", &["a"][..]),
            ("axe-notes-learn", &["ops"][..]),
        ] {
            let reaches = match bin {
                "axe-notes-remember" => linked.starts_with("agents/"),
                "axe-notes-reflect" => linked == "agents/a",
                _ => linked == "world",
            };
            if !reaches {
                continue;
            }
            let err = failing(env.cmd(bin).args(args).write_stdin("text"), 1);
            assert!(
                err.contains("leads outside the notes workspace"),
                "{linked} -> {target}, {bin}: {err}"
            );
        }
        assert!(files_below(&outside).is_empty(), "made outside");
        assert!(!ws.join("outside").exists(), "made at the top instead");
        assert_eq!(files_below(&ws), before, "{linked}");
    }
}

#[test]
fn symlinks_that_stay_inside_the_workspace_still_work() {
    let env = Env::new();
    env.agent_file("a").memory("").notes("").write();
    let ws = workspace(&env);
    fs::create_dir_all(ws.join("shared/daily")).unwrap();
    fs::create_dir_all(ws.join("agents/a")).unwrap();
    // Relative, through `..`, and absolute under the workspace's real path.
    symlink("../../shared/daily", ws.join("agents/a/daily")).unwrap();
    fs::create_dir_all(ws.join("world")).unwrap();
    fs::write(ws.join("world/real.md"), "old").unwrap();
    symlink(
        fs::canonicalize(ws.join("world/real.md")).unwrap(),
        ws.join("agents/a/MEMORY.md"),
    )
    .unwrap();
    env.cmd("axe-notes-remember")
        .args(["a", "kept inside"])
        .assert()
        .success();
    assert_eq!(files_below(&ws.join("shared/daily")).len(), 1);
    env.cmd("axe-notes-reflect")
        .arg("a")
        .write_stdin("new")
        .assert()
        .success();
    assert_eq!(read(&ws.join("world/real.md")), "new", "the link's target");
    assert!(
        fs::symlink_metadata(ws.join("agents/a/MEMORY.md"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

// --- 3: a directory swapped for a symlink while writes run ------------------

/// Swaps `dir` between the real directory and a symlink to `outside`
/// until told to stop.
pub fn swapper(
    dir: PathBuf,
    outside: PathBuf,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let aside = dir.with_extension("aside");
        let mut swaps = 0;
        while !stop.load(Ordering::Relaxed) {
            if fs::rename(&dir, &aside).is_err() {
                continue;
            }
            let _ = symlink(&outside, &dir);
            swaps += 1;
            std::thread::yield_now();
            let _ = fs::remove_file(&dir);
            // A writer may have made `dir` anew meanwhile: merge back.
            if fs::rename(&aside, &dir).is_err() {
                for e in fs::read_dir(&aside).unwrap() {
                    let e = e.unwrap();
                    let _ = fs::rename(e.path(), dir.join(e.file_name()));
                }
                let _ = fs::remove_dir(&aside);
            }
        }
        swaps
    })
}

#[test]
fn a_directory_swapped_for_a_symlink_mid_write_never_lets_a_write_out() {
    let env = Env::new();
    env.agent_file("a").memory("").notes("").write();
    let ws = workspace(&env);
    let outside = env.root().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::create_dir_all(ws.join("agents/a/daily")).unwrap();
    fs::create_dir_all(ws.join("world")).unwrap();
    for (dir, bin, args) in [
        ("agents/a/daily", "axe-notes-remember", &["a", "entry"][..]),
        ("world", "axe-notes-learn", &["topic"][..]),
        ("agents/a", "axe-notes-reflect", &["a"][..]),
    ] {
        let stop = Arc::new(AtomicBool::new(false));
        let swaps = swapper(ws.join(dir), outside.clone(), Arc::clone(&stop));
        // The race must take place: runs go on (bounded in time) until
        // one met the symlink swapped in (refused for it) and another
        // wrote between two swaps (inside, as it must).
        let (started, mut runs, mut met, mut wrote) = (Instant::now(), 0, 0, 0);
        while runs < 300 || met == 0 || wrote == 0 {
            if started.elapsed() > Duration::from_secs(120) {
                stop.store(true, Ordering::Relaxed);
                let swaps = swaps.join().unwrap();
                panic!(
                    "{bin}: {runs} runs and {swaps} swaps: {met} met the symlink, {wrote} wrote"
                );
            }
            let out = env
                .cmd(bin)
                .args(args)
                .write_stdin("text")
                .output()
                .unwrap();
            assert!(out.status.code().is_some(), "{bin}: killed");
            assert!(
                files_below(&outside).is_empty(),
                "{bin} wrote outside: {:?}",
                files_below(&outside)
            );
            let err = String::from_utf8_lossy(&out.stderr);
            if err.contains("leads outside the notes workspace") {
                assert_eq!(out.status.code(), Some(1), "{err}");
                met += 1;
            }
            wrote += usize::from(out.status.success());
            runs += 1;
        }
        stop.store(true, Ordering::Relaxed);
        assert!(swaps.join().unwrap() > 0);
        eprintln!("{bin}: of {runs} runs {met} met the symlink, {wrote} wrote");
    }
}

// --- 6: empty standard input -----------------------------------------------------

#[test]
fn empty_standard_input_never_erases_memory() {
    let env = Env::new();
    env.agent_file("a").memory("").notes("").write();
    let memory = workspace(&env).join("agents/a/MEMORY.md");
    env.cmd("axe-notes-reflect")
        .arg("a")
        .write_stdin("what I know")
        .assert()
        .success();
    env.cmd("axe-notes-learn")
        .arg("ops")
        .write_stdin("deploys")
        .assert()
        .success();
    let topic = workspace(&env).join("world/ops.md");
    for (bin, arg) in [("axe-notes-reflect", "a"), ("axe-notes-learn", "ops")] {
        for input in ["", " \n\n"] {
            let err = failing(env.cmd(bin).arg(arg).write_stdin(input), 1);
            assert!(err.starts_with("standard input is empty: "), "{err}");
        }
    }
    assert_eq!(read(&memory), "what I know");
    assert_eq!(read(&topic), "deploys");
    env.cmd("axe-notes-reflect")
        .args(["a", "--allow-empty"])
        .write_stdin("")
        .assert()
        .success();
    assert_eq!(read(&memory), "");
}

// --- 7: signals and kill -9 during large appends ---------------------------

/// A big entry for an append: many lines, so a torn one shows.
fn big_text(mb: usize) -> Vec<u8> {
    let line = b"a line of a very large entry that must arrive whole\n";
    line.iter()
        .copied()
        .cycle()
        .take(mb << 20)
        .collect::<Vec<u8>>()
}

/// Starts `axe-notes-remember a` with `input` on stdin and returns it once
/// `file` has grown but is not whole yet: caught mid-write. A run that
/// finishes before it is seen writing is undone and tried again; the
/// write of 64 MB takes tens of milliseconds, the polling microseconds.
fn caught_remembering(env: &Env, input: &Arc<Vec<u8>>, file: &Path) -> Child {
    let whole = fs::read(file).unwrap();
    let from = whole.len() as u64;
    for _ in 0..20 {
        let mut child = env
            .std_cmd("axe-notes-remember")
            .arg("a")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let input = Arc::clone(input);
        let feeder = std::thread::spawn(move || {
            use std::io::Write;
            let _ = stdin.write_all(&input);
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let caught = loop {
            let len = fs::metadata(file).map(|m| m.len()).unwrap_or(0);
            // Past 60 MB of the 64 the write is as good as done.
            if len > from && len < from + (60 << 20) {
                break true;
            }
            if child.try_wait().unwrap().is_some() || Instant::now() > deadline {
                break false;
            }
            std::thread::yield_now();
        };
        feeder.join().unwrap();
        if caught {
            return child;
        }
        let _ = child.kill();
        child.wait().unwrap();
        fs::write(file, &whole).unwrap();
    }
    panic!("never caught a remember writing in 20 tries");
}

fn kill(child: &Child, signal: &str) {
    std::process::Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
}

#[test]
fn a_signal_during_a_large_remember_leaves_the_entry_whole() {
    let env = Env::new();
    env.agent_file("a")
        .memory("")
        .notes("max_memory_chars = 100000000")
        .write();
    let text = Arc::new(big_text(64));
    let log = remembered(&env, "first");
    for signal in ["TERM", "INT", "HUP"] {
        let before = fs::metadata(&log).unwrap().len();
        let mut child = caught_remembering(&env, &text, &log);
        kill(&child, signal);
        child.wait().unwrap();
        let len = fs::metadata(&log).unwrap().len();
        assert!(
            len == before || len > before + (64 << 20),
            "SIG{signal} tore the entry: {before} -> {len}"
        );
        fs::write(&log, &fs::read(&log).unwrap()[..before as usize]).unwrap();
    }
}

#[test]
fn a_kill_9_mid_entry_is_cut_back_by_the_next_writer() {
    let env = Env::new();
    env.agent_file("a")
        .memory("")
        .notes("max_memory_chars = 100000000")
        .write();
    let text = Arc::new(big_text(64));
    let daily = remembered(&env, "first");
    let whole = fs::read(&daily).unwrap();
    let mut child = caught_remembering(&env, &text, &daily);
    child.kill().unwrap();
    child.wait().unwrap();
    env.cmd("axe-notes-remember")
        .args(["a", "after"])
        .assert()
        .success();
    assert_whole_plus_one(&daily, &whole, "after");
}

/// `file` is `whole` and then one entry holding `text`, nothing torn, and
/// no marker or temp file is left beside it.
fn assert_whole_plus_one(file: &Path, whole: &[u8], text: &str) {
    let now = fs::read(file).unwrap();
    assert!(now.starts_with(whole), "the old entries are kept");
    let added = String::from_utf8_lossy(&now[whole.len()..]).into_owned();
    assert!(
        !added.contains("very large entry"),
        "the torn entry was kept: {} bytes",
        added.len()
    );
    assert!(added.contains(text), "{added:?}");
    assert_eq!(
        added.matches("\n## ").count() + usize::from(added.starts_with("## ")),
        1,
        "{added:?}"
    );
    let debris: Vec<_> = fs::read_dir(file.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(debris.is_empty(), "{debris:?}");
}

#[test]
fn a_run_log_torn_by_a_kill_9_is_read_whole_and_cut_back() {
    // A run-log entry is capped at a few kilobytes, one write too quick
    // to catch: this is the state a `kill -9` in that write leaves, built
    // by hand (the marker an append writes first, then part of an entry).
    use std::os::unix::fs::MetadataExt;
    let env = Env::new();
    env.agent_file("a").memory("").notes("").write();
    env.cmd("axe-mem-append")
        .args(["a", "--task", "first", "--result", "ok"])
        .assert()
        .success();
    let log = env.log_path("a");
    let whole = fs::read(&log).unwrap();
    let meta = fs::metadata(&log).unwrap();
    fs::write(
        log.with_file_name(".a.md.axe-append"),
        format!("{} {} {}\n", whole.len(), meta.dev(), meta.ino()),
    )
    .unwrap();
    let mut torn = whole.clone();
    torn.extend_from_slice(b"## 2026-01-01T00:00:00Z\n**Task:** a very large entry\n**Res");
    fs::write(&log, &torn).unwrap();
    let out = env
        .cmd("axe-mem-load")
        .args(["a", "--last", "0"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&whole),
        "load stops at the last whole entry"
    );
    env.cmd("axe-mem-count")
        .arg("a")
        .assert()
        .success()
        .stdout("1\n");
    env.cmd("axe-mem-append")
        .args(["a", "--task", "after", "--result", "r"])
        .assert()
        .success();
    assert_whole_plus_one(&log, &whole, "after");
    // A marker for another file (the log replaced meanwhile by an editor)
    // never cuts this one.
    fs::write(log.with_file_name(".a.md.axe-append"), "3 1 1\n").unwrap();
    let before = fs::read(&log).unwrap();
    env.cmd("axe-mem-append")
        .args(["a", "--task", "again", "--result", "r"])
        .assert()
        .success();
    assert!(fs::read(&log).unwrap().starts_with(&before));
}

// --- 8: locks held by another process --------------------------------------------

/// Holds the exclusive lock of `path` (created if missing) while alive.
fn hold_lock(path: &Path) -> File {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    file.lock().unwrap();
    file
}

#[test]
fn a_held_lock_makes_the_memory_tools_give_up_after_wait() {
    let env = Env::new();
    env.agent_file("a").memory("").notes("").write();
    env.agent(
        "s",
        "name = \"s\"\nmodel = \"anthropic/m\"\n[state]\nenabled = true\n",
    );
    let log = env.log_path("a");
    let state = env.data_dir().join("axe/state/s.json");
    let memory = workspace(&env).join("agents/a/MEMORY.md");
    fs::create_dir_all(memory.parent().unwrap()).unwrap();
    fs::write(&memory, "old").unwrap();
    let cases: [(&Path, &str, &[&str]); 6] = [
        (
            &log,
            "axe-mem-append",
            &["a", "--task", "t", "--result", "r"],
        ),
        (&log, "axe-mem-load", &["a"]),
        (&log, "axe-mem-trim", &["a", "--keep", "1"]),
        (&memory, "axe-notes-reflect", &["a"]),
        (&state, "axe-state-ingest", &["s"]),
        (&state, "axe-state-show", &["s"]),
    ];
    for (path, bin, args) in cases {
        let held = hold_lock(path);
        let before = fs::read(path).unwrap();
        let started = Instant::now();
        let err = failing(
            env.cmd(bin)
                .args(args)
                .args(["--wait", "0.5"])
                .write_stdin("AXE_MEMORY: KEY_FACT x\nnew")
                .timeout(Duration::from_secs(20)),
            5,
        );
        assert!(started.elapsed() >= Duration::from_millis(500), "{bin}");
        assert!(
            err.contains(&path.display().to_string())
                && err.contains("another process holds its lock"),
            "{bin}: {err}"
        );
        assert_eq!(fs::read(path).unwrap(), before, "{bin} wrote");
        drop(held);
    }
    env.cmd("axe-mem-load")
        .args(["a", "--wait", "-1"])
        .assert()
        .code(1)
        .stderr("--wait must be a positive number of seconds\n");
}

#[test]
fn a_held_lock_cannot_hold_a_run_past_its_timeout() {
    let env = Env::new();
    env.agent_file("a").memory("").notes("").write();
    let log = env.log_path("a");
    let _held = hold_lock(&log);
    let server = Server::start(vec![Answer::json(200, &reply_for("anthropic", "hi"))]);
    let started = Instant::now();
    let out = served_by(env.cmd("axe-run"), &server.url)
        .args(["a", "--timeout", "2", "hello"])
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    assert!(out.status.code().is_some(), "killed by the test's timeout");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "ran {:?} with --timeout 2",
        started.elapsed()
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("another process holds its lock"), "{err}");
}

// --- 11: refused or failed writes leave nothing new --------------------------

#[test]
fn a_refused_or_failed_write_leaves_no_new_empty_file() {
    let env = Env::new();
    env.agent_file("a").memory("").notes("").write();
    let ws = workspace(&env);
    env.cmd("axe-notes-learn")
        .args(["brand-new", "--if-match", "0000"])
        .write_stdin("x")
        .assert()
        .code(6);
    assert!(!ws.join("world/brand-new.md").exists());
    // A file size limit: reflect with no MEMORY.md yet, learn a new topic.
    for (bin, arg, file) in [
        ("axe-notes-reflect", "a", ws.join("agents/a/MEMORY.md")),
        ("axe-notes-learn", "big", ws.join("world/big.md")),
    ] {
        env.shell("bash")
            .args([
                "-c",
                &format!("ulimit -f 1; head -c 5000 /dev/zero | tr '\\0' x | {bin} {arg}"),
            ])
            .assert()
            .code(1);
        assert!(!file.exists(), "{bin} left {}", file.display());
    }
    let json: Value = serde_json::from_slice(
        &env.cmd("axe-notes-path")
            .args(["a", "--json"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(json["memory"]["exists"], false);
    // remember under the same limit: no empty daily log either.
    env.shell("bash")
        .args([
            "-c",
            "ulimit -f 1; head -c 5000 /dev/zero | tr '\\0' x | axe-notes-remember a",
        ])
        .assert()
        .code(1);
    let daily = ws.join("agents/a/daily");
    assert!(!daily.exists() || files_below(&daily).is_empty());
}

#[test]
fn a_topic_too_long_for_its_file_names_is_refused_and_leaves_nothing() {
    let env = Env::new();
    env.agent_file("a").memory("").notes("").write();
    let long = "t".repeat(251);
    let err = failing(env.cmd("axe-notes-learn").arg(&long).write_stdin("x"), 1);
    assert!(err.contains("too long"), "{err}");
    let world = workspace(&env).join("world");
    assert!(!world.exists() || files_below(&world).is_empty());
    // The longest allowed topic can be written, rewritten and read.
    let longest = "t".repeat(200);
    for text in ["one", "two"] {
        env.cmd("axe-notes-learn")
            .arg(&longest)
            .write_stdin(text)
            .assert()
            .success();
    }
    assert_eq!(read(&world.join(format!("{longest}.md"))), "two");
}

// --- 13 and smaller: prune's names, world as a file -------------------------------

#[test]
fn prune_removes_only_four_digit_dated_logs() {
    let env = Env::new();
    env.agent_file("a").memory("").notes("").write();
    let daily = workspace(&env).join("agents/a/daily");
    fs::create_dir_all(&daily).unwrap();
    for name in ["+202-01-01.md", "2020-01-01.md", "notes.md"] {
        fs::write(daily.join(name), "x").unwrap();
    }
    fs::create_dir(daily.join("2019-01-01.md")).unwrap();
    env.cmd("axe-notes-prune")
        .args(["a", "--older-than", "1"])
        .assert()
        .success();
    assert_eq!(
        files_below(&daily),
        ["+202-01-01.md", "notes.md"],
        "only the dated log goes"
    );
    assert!(daily.join("2019-01-01.md").is_dir());
}

#[test]
fn learn_when_world_is_a_file_names_the_directory() {
    let env = Env::new();
    env.agent_file("a").memory("").notes("").write();
    let ws = workspace(&env);
    fs::create_dir_all(&ws).unwrap();
    fs::write(ws.join("world"), "not a directory").unwrap();
    let err = failing(env.cmd("axe-notes-learn").arg("ops").write_stdin("x"), 1);
    assert!(
        err.contains(&format!(
            "{} is not a directory",
            ws.join("world").display()
        )),
        "{err}"
    );
}

#[test]
fn a_state_file_over_its_cap_is_refused_not_read_whole() {
    let env = Env::new();
    env.agent(
        "s",
        "name = \"s\"\nmodel = \"anthropic/m\"\n[state]\nenabled = true\n",
    );
    let state = env.data_dir().join("axe/state/s.json");
    fs::create_dir_all(state.parent().unwrap()).unwrap();
    // Sparse: 64 MiB and one byte that cost no disk.
    File::create(&state)
        .unwrap()
        .set_len((64 << 20) + 1)
        .unwrap();
    for (bin, args) in [
        ("axe-state-show", &["s"][..]),
        ("axe-state-context", &["s"][..]),
        ("axe-state-record", &["s", "--task", "t", "--success"][..]),
    ] {
        let err = failing(env.cmd(bin).args(args).timeout(Duration::from_secs(20)), 1);
        assert!(
            err.contains("larger than the limit of 64 MiB for a state file"),
            "{bin}: {err}"
        );
    }
    assert_eq!(fs::metadata(&state).unwrap().len(), (64 << 20) + 1);
}

// --- found by an attack on the write path --------------------------------

/// A marker saying "cut `file` to `len`", as an append writes it.
fn plant_marker(file: &Path, len: u64) -> PathBuf {
    use std::os::unix::fs::MetadataExt;
    let meta = fs::metadata(file).unwrap();
    let name = file.file_name().unwrap().to_string_lossy();
    let marker = file.with_file_name(format!(".{name}.axe-append"));
    fs::write(&marker, format!("{len} {} {}\n", meta.dev(), meta.ino())).unwrap();
    marker
}

#[test]
fn a_marker_planted_by_another_user_never_cuts_the_file() {
    if !running_as_root("making a file another user's") {
        return;
    }
    let env = Env::new();
    env.agent_file("a").memory("").notes("").write();
    let mut daily = PathBuf::new();
    for i in 1..=3 {
        daily = remembered(&env, &format!("important {i}"));
        env.cmd("axe-mem-append")
            .args(["a", "--task", &format!("t{i}"), "--result", "r"])
            .assert()
            .success();
    }
    for file in [daily.clone(), env.log_path("a")] {
        let before = fs::read(&file).unwrap();
        let marker = plant_marker(&file, 0);
        std::os::unix::fs::chown(&marker, Some(65534), Some(65534)).unwrap();
        if file == daily {
            let out = env.cmd("axe-notes-recall").arg("a").output().unwrap();
            assert!(String::from_utf8_lossy(&out.stdout).contains("important 3"));
            env.cmd("axe-notes-remember")
                .args(["a", "next"])
                .assert()
                .success();
        } else {
            env.cmd("axe-mem-count").arg("a").assert().stdout("3\n");
            env.cmd("axe-mem-append")
                .args(["a", "--task", "next", "--result", "r"])
                .assert()
                .success();
        }
        let after = fs::read(&file).unwrap();
        assert!(after.starts_with(&before), "{}: cut", file.display());
        assert!(!marker.exists(), "the planted marker is removed");
    }
}

#[test]
fn a_torn_daily_entry_is_not_shown_by_readers() {
    let env = Env::new();
    env.agent_file("a").memory("").notes("").write();
    let daily = remembered(&env, "whole entry");
    let whole = fs::metadata(&daily).unwrap().len();
    // What a `kill -9` mid-write leaves: the marker, then half an entry.
    plant_marker(&daily, whole);
    let mut torn = fs::read(&daily).unwrap();
    torn.extend_from_slice(b"\n## 10:00\n\nTORN half ent");
    fs::write(&daily, &torn).unwrap();
    let recalled = env.cmd("axe-notes-recall").arg("a").output().unwrap();
    let text = String::from_utf8_lossy(&recalled.stdout);
    assert!(
        text.contains("whole entry") && !text.contains("TORN"),
        "{text}"
    );
    let found = env.cmd("axe-notes-search").arg("torn").output().unwrap();
    assert_eq!(found.status.code(), Some(1), "{found:?}");
    let block = env.cmd("axe-context").arg("a").output().unwrap();
    assert!(!String::from_utf8_lossy(&block.stdout).contains("TORN"));
}

#[test]
fn huge_or_sparse_notes_files_are_left_out_or_refused_never_read_whole() {
    let env = Env::new();
    env.agent_file("a").memory("").notes("").write();
    let ws = workspace(&env);
    fs::create_dir_all(ws.join("world")).unwrap();
    fs::create_dir_all(ws.join("agents/a")).unwrap();
    fs::write(ws.join("world/ops.md"), "Deploys are blue-green.").unwrap();
    // 100 GB that cost no disk: reading one whole would abort the process.
    let huge = |path: &Path| File::create(path).unwrap().set_len(100 << 30).unwrap();
    huge(&ws.join("world/a-big.md"));
    let recall = || {
        let out = env
            .cmd("axe-notes-recall")
            .arg("a")
            .timeout(Duration::from_secs(20))
            .assert()
            .success()
            .get_output()
            .clone();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let text = recall();
    assert!(
        text.contains("world/a-big.md (107374182400 bytes)"),
        "{text}"
    );
    // MEMORY.md that cannot fit leaves out all after it, as any file does.
    huge(&ws.join("agents/a/MEMORY.md"));
    let text = recall();
    assert!(
        text.contains("agents/a/MEMORY.md (107374182400 bytes)"),
        "{text}"
    );
    let out = env
        .cmd("axe-notes-search")
        .args(["deploys", "--json"])
        .timeout(Duration::from_secs(20))
        .assert()
        .success()
        .get_output()
        .clone();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["results"][0]["path"], "world/ops.md");
    let skipped = json["unreadable"].to_string();
    assert!(
        skipped.contains("larger than the limit of 64 MiB"),
        "{skipped}"
    );
    let err = failing(
        env.cmd("axe-notes-path")
            .args(["a", "--json"])
            .timeout(Duration::from_secs(20)),
        1,
    );
    assert!(err.contains("larger than the limit of 64 MiB"), "{err}");
}

#[test]
fn junk_where_a_marker_or_temp_file_goes_never_blocks_a_write_for_good() {
    let env = Env::new();
    env.agent_file("a").memory("").notes("").write();
    let daily = remembered(&env, "first");
    let name = daily.file_name().unwrap().to_string_lossy().into_owned();
    let marker = daily.with_file_name(format!(".{name}.axe-append"));
    fs::write(&marker, [0xff, 0xfe, 0x00, 0x80]).unwrap();
    env.cmd("axe-notes-remember")
        .args(["a", "after junk"])
        .assert()
        .success();
    assert!(!marker.exists());
    fs::create_dir(&marker).unwrap();
    env.cmd("axe-notes-remember")
        .args(["a", "after a directory"])
        .assert()
        .success();
    let text = read(&daily);
    assert!(text.contains("after junk") && text.contains("after a directory"));
    // A temp file's place taken by a directory: named, so it can go.
    let memory = workspace(&env).join("agents/a/MEMORY.md");
    fs::write(&memory, "old").unwrap();
    let temp = memory.with_file_name(".MEMORY.md.axe-new");
    fs::create_dir(&temp).unwrap();
    let err = failing(env.cmd("axe-notes-reflect").arg("a").write_stdin("new"), 1);
    assert!(
        err.contains(&format!("{} is in the way", temp.display())),
        "{err}"
    );
    assert_eq!(read(&memory), "old");
}

#[test]
fn an_append_needs_only_the_file_writable_as_before() {
    if !running_as_root("running as another user") {
        return;
    }
    let env = Env::new();
    let dir = env.root().join("ro");
    fs::create_dir(&dir).unwrap();
    let log = dir.join("log.md");
    fs::write(&log, "").unwrap();
    crate::util::set_mode(&log, 0o666);
    // The directory stays root's 0755: no marker can be made beside it.
    env.unprivileged("axe-mem-append")
        .args([
            "--file",
            log.to_str().unwrap(),
            "--task",
            "t",
            "--result",
            "r",
        ])
        .assert()
        .success();
    assert!(read(&log).contains("**Task:** t"));
}

#[test]
fn search_never_lists_an_agents_directory_outside_the_workspace() {
    let env = Env::new();
    env.agent_file("a").memory("").notes("").write();
    let ws = workspace(&env);
    fs::create_dir_all(ws.join("world")).unwrap();
    fs::write(ws.join("world/ops.md"), "a fact").unwrap();
    let victim = env.root().join("victim");
    fs::create_dir_all(victim.join("id_rsa_backup")).unwrap();
    symlink(&victim, ws.join("agents")).unwrap();
    let out = env
        .cmd("axe-notes-search")
        .args(["fact", "--json"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("id_rsa_backup"), "{text}");
    assert!(text.contains("world/ops.md"), "{text}");
}
