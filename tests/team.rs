//! A team that outgrows one server: two `axe-mcp --http` servers, each
//! on a machine of its own serving its own team directory, kept in step
//! through one bare git remote by `axe-sync --dir`, while clients write
//! on both and the syncs run in a loop: the README's `axe-sync init` line
//! and the sync its timer loop runs, as written there but for the paths.

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::mcp_http::{Served, request, team_dir};
use crate::util::{Env, have};

/// One stateless `tools/call` of `tool` on `server`'s agent `team`,
/// which must succeed.
fn call(server: &Served, tool: &str, arguments: Value) {
    let mut message = request(
        1,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    );
    message["params"]["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let a = server.post(
        "team",
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", tool),
        ],
        &message,
    );
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.json()["result"]["isError"], false, "{a:?}");
}

/// `axe-sync run --dir TEAM --json` on `env`'s machine: what it said, or
/// `None` when the remote kept rejecting its push because the other
/// machine kept pushing meanwhile (exit 1, "run axe-sync again": the
/// timer's next round does).
fn sync(env: &Env, team: &Path) -> Option<Value> {
    let out = env
        .shell("bash")
        .args(["-c", &format!("{} --json", readme_sync(team))])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(1) && err.contains("other machines kept pushing meanwhile") {
        return None;
    }
    assert!(
        out.status.success(),
        "axe-sync --dir {}: {:?} {err}",
        team.display(),
        out.status.code(),
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

/// The README's lines for several servers: its `axe-sync init` line and
/// the sync its timer loop runs, for the team directory `team` (and
/// `remote` in place of its example URL).
fn readme_lines(team: &Path, remote: &str) -> (String, String) {
    let block = crate::mcp_clients::readme_block("sh", "while sleep");
    let here = |line: &str| {
        line.replace("~/.local/share/axe-team", team.to_str().unwrap())
            .replace("ssh://git.example.com/team-memory.git", remote)
    };
    let init = block
        .lines()
        .find(|l| l.starts_with("axe-sync init"))
        .expect("the README's axe-sync init line");
    let looped = block
        .lines()
        .find_map(|l| l.strip_prefix("while sleep 60; do "))
        .and_then(|l| l.strip_suffix(" >/dev/null; done"))
        .expect("the README's timer loop");
    (here(init), here(looped))
}

/// The README timer's sync of `team`.
fn readme_sync(team: &Path) -> String {
    readme_lines(team, "").1
}

/// Every file under `dir` whose path holds `part`, joined.
fn text_under(dir: &Path, part: &str) -> String {
    let mut text = String::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten() {
            let path = e.unwrap().path();
            if path.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else if path.to_string_lossy().contains(part) {
                text.push_str(&std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    text
}

/// What one machine's sync loop saw.
#[derive(Default)]
struct Seen {
    /// Syncs that committed a write made while they ran.
    committed_while_writing: usize,
    /// Syncs that merged the other server's writes in.
    merged: usize,
}

/// Two servers, one memory: writers on both (daily notes through
/// remember, run-log entries through log_append), a sync loop on each
/// machine. The writers go on until each loop has committed, at least
/// three times, a write made while that sync ran, and merged the other
/// side's in (so the race of a sync and a server's write took place);
/// after a last round of syncs every entry is on both, once.
#[test]
fn two_team_servers_kept_in_step_by_sync_lose_nothing() {
    if !have("git") {
        return;
    }
    let (_keep, remote) = crate::sync::remote();
    let machines = [Env::new(), Env::new()];
    for env in &machines {
        let team = team_dir(env);
        std::fs::create_dir_all(&team).unwrap();
        let (init, _) = readme_lines(&team, remote.to_str().unwrap());
        let out = env.shell("bash").args(["-c", &init]).output().unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    let servers: Vec<Served> = machines.iter().map(|env| Served::start(env, &[])).collect();
    let done = AtomicBool::new(false);
    let writes = [AtomicUsize::new(0), AtomicUsize::new(0)];
    let written = Mutex::new(Vec::<String>::new());
    let seen = [Mutex::new(Seen::default()), Mutex::new(Seen::default())];
    let last = Mutex::new(String::new());

    std::thread::scope(|scope| {
        for side in 0..2 {
            let (server, stop, count, written) = (&servers[side], &done, &writes[side], &written);
            scope.spawn(move || {
                let deadline = Instant::now() + Duration::from_secs(150);
                let mut i = 0;
                while !stop.load(Ordering::SeqCst) && Instant::now() < deadline {
                    let note = format!("server {side} note {i}");
                    call(server, "remember", json!({"content": note}));
                    let task = format!("server {side} task {i}");
                    call(server, "log_append", json!({"task": task, "result": "ok"}));
                    written.lock().unwrap().extend([note, task]);
                    count.fetch_add(1, Ordering::SeqCst);
                    i += 1;
                    std::thread::sleep(Duration::from_millis(10));
                }
            });
            let (env, done, count, seen, last) =
                (&machines[side], &done, &writes[side], &seen[side], &last);
            scope.spawn(move || {
                let team = team_dir(env);
                while !done.load(Ordering::SeqCst) {
                    // The timer's pause, shorter, and not in step with the other's.
                    std::thread::sleep(Duration::from_millis(150 + 70 * side as u64));
                    let before = count.load(Ordering::SeqCst);
                    let Some(r) = sync(env, &team) else {
                        continue;
                    };
                    // A write landed between the sync's start and its end.
                    let during = count.load(Ordering::SeqCst) > before;
                    *last.lock().unwrap() = r.to_string();
                    let mut s = seen.lock().unwrap();
                    if during && !r["committed"]["files"].as_array().unwrap().is_empty() {
                        s.committed_while_writing += 1;
                    }
                    if !r["merged"]["files"].as_array().unwrap().is_empty() {
                        s.merged += 1;
                    }
                }
            });
        }
        let deadline = Instant::now() + Duration::from_secs(120);
        while !seen.iter().all(|s| {
            let s = s.lock().unwrap();
            s.committed_while_writing >= 3 && s.merged >= 1
        }) {
            if Instant::now() > deadline {
                done.store(true, Ordering::SeqCst);
                let counts: Vec<(usize, usize)> = seen
                    .iter()
                    .map(|s| {
                        let s = s.lock().unwrap();
                        (s.committed_while_writing, s.merged)
                    })
                    .collect();
                panic!(
                    "the syncs never ran while the servers wrote: (committed while writing, merged) per side {counts:?}, {} and {} writes, last sync {}",
                    writes[0].load(Ordering::SeqCst),
                    writes[1].load(Ordering::SeqCst),
                    last.lock().unwrap()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        done.store(true, Ordering::SeqCst);
    });
    // The timer's next rounds: each side's last writes reach the other.
    for env in [&machines[0], &machines[1], &machines[0]] {
        sync(env, &team_dir(env)).expect("no other sync runs now");
    }

    let written = written.into_inner().unwrap();
    assert!(written.len() >= 12, "{}", written.len());
    for env in &machines {
        let team = team_dir(env);
        let daily = text_under(&team.join("notes/agents/team"), "/daily/");
        let log = std::fs::read_to_string(team.join("memory/team.md")).unwrap();
        for text in written.iter() {
            let kept = match text.contains("note") {
                true => &daily,
                false => &log,
            };
            let line = match text.contains("note") {
                true => format!("\n{text}\n"),
                false => format!("**Task:** {text}\n"),
            };
            assert_eq!(
                kept.matches(&line).count(),
                1,
                "{text:?} is not once in {}",
                team.display()
            );
        }
    }
}
