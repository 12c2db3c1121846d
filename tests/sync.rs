//! axe-sync: clones of one bare remote in temp directories, each a machine
//! of its own (HOME, XDG dirs), agents writing through the real
//! executables while syncs run; `kill -9` of a sync at named steps.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::server::{Answer, Server};
use crate::util::{Env, have};
use crate::wire::anthropic_reply;

const AGENT: &str = "name = \"bot\"\nmodel = \"anthropic/claude-3\"\n\n[memory]\nenabled = true\n\n[notes]\nenabled = true\n\n[state]\nenabled = true\n";

/// One machine: its own world and a clone of the remote in its data dir.
pub(crate) struct Machine {
    pub(crate) env: Env,
}

impl Machine {
    pub(crate) fn new() -> Machine {
        let env = Env::new();
        env.agent("bot", AGENT);
        Machine { env }
    }

    pub(crate) fn repo(&self) -> PathBuf {
        self.env.data_dir().join("axe")
    }

    /// Runs `bin` with `args` (and `input` on stdin), which must succeed.
    pub(crate) fn ok(&self, bin: &str, args: &[&str], input: &str) -> Output {
        let out = self
            .env
            .cmd(bin)
            .args(args)
            .write_stdin(input.to_owned())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{bin} {args:?}: {err}");
        out
    }

    /// Runs `bin` with `args`, however it ends.
    pub(crate) fn run(&self, bin: &str, args: &[&str]) -> Output {
        self.env.cmd(bin).args(args).output().unwrap()
    }

    pub(crate) fn init(&self, remote: &Path) -> Output {
        let remote = remote.to_str().unwrap();
        self.ok("axe-sync", &["init", "--remote", remote], "")
    }

    pub(crate) fn sync(&self, args: &[&str]) -> Output {
        self.env
            .cmd("axe-sync")
            .arg("run")
            .args(args)
            .output()
            .unwrap()
    }

    /// A sync that must end well (0, or 7 for a conflict file left).
    pub(crate) fn synced(&self) -> Output {
        let out = self.sync(&[]);
        let code = out.status.code();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(matches!(code, Some(0 | 7)), "sync: {code:?} {err}");
        out
    }

    /// `axe-run bot` with `task`, against the local provider `server`.
    pub(crate) fn run_agent(&self, server: &Server, task: &str) {
        let out = self
            .env
            .cmd("axe-run")
            .arg("bot")
            .env("AXE_ANTHROPIC_BASE_URL", &server.url)
            .env("ANTHROPIC_API_KEY", "sk-test")
            .write_stdin(task.to_owned())
            .output()
            .unwrap();
        succeeded(&out);
    }

    pub(crate) fn remember(&self, text: &str) {
        self.ok("axe-notes-remember", &["bot", text], "");
    }

    pub(crate) fn append(&self, task: &str) {
        self.ok(
            "axe-mem-append",
            &["bot", "--task", task, "--result", "ok"],
            "",
        );
    }

    pub(crate) fn ingest(&self, fact: &str, step: &str) {
        let input = format!("AXE_MEMORY: KEY_FACT {fact}\nAXE_MEMORY: STEP_DONE {step}\n");
        self.ok("axe-state-ingest", &["bot"], &input);
    }

    /// Recall, then reflect `text` with `--if-match`: true when written,
    /// false when MEMORY.md changed in between (exit 6, nothing written).
    pub(crate) fn reflect(&self, text: &str) -> bool {
        let out = self.run("axe-notes-recall", &["bot", "--json"]);
        let recalled: Value = serde_json::from_slice(&out.stdout).unwrap();
        let sha = recalled["memory_sha256"].as_str().unwrap().to_owned();
        let out = self
            .env
            .cmd("axe-notes-reflect")
            .args(["bot", "--if-match", &sha])
            .write_stdin(text.to_owned())
            .output()
            .unwrap();
        match out.status.code() {
            Some(0) => true,
            Some(6) => false,
            c => panic!("reflect: {c:?} {}", String::from_utf8_lossy(&out.stderr)),
        }
    }

    /// Every file of the work tree but git's own, by path.
    pub(crate) fn files(&self) -> BTreeMap<String, Vec<u8>> {
        let mut found = BTreeMap::new();
        collect(&self.repo(), &self.repo(), &mut found);
        found
    }

    pub(crate) fn file(&self, rel: &str) -> String {
        fs::read_to_string(self.repo().join(rel)).unwrap_or_default()
    }
}

fn collect(root: &Path, dir: &Path, found: &mut BTreeMap<String, Vec<u8>>) {
    for e in fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        // The ledger and the conversations are each machine's own: never synced.
        if rel == ".git" || rel == "ledger" || rel == "conversations" {
            continue;
        }
        if path.is_dir() {
            collect(root, &path, found);
        } else {
            found.insert(rel, fs::read(&path).unwrap());
        }
    }
}

/// `out` is of a command that succeeded; else its stderr says why not.
pub(crate) fn succeeded(out: &Output) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {err}", out.status.code());
}

/// A bare remote, in a temp dir.
pub(crate) fn remote() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.git");
    let out = std::process::Command::new("git")
        .args(["init", "-q", "--bare", "-b", "main"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(out.status.success());
    (dir, path)
}

/// A bare remote and `n` machines joined to it by `axe-sync init`; `None`
/// (the test skipped, or failed under AXE_TEST_ALL) without git.
pub(crate) fn joined(n: usize) -> Option<(tempfile::TempDir, PathBuf, Vec<Machine>)> {
    if !have("git") {
        return None;
    }
    let (keep, remote) = remote();
    let machines: Vec<Machine> = (0..n).map(|_| Machine::new()).collect();
    for m in &machines {
        m.init(&remote);
    }
    Some((keep, remote, machines))
}

/// Two machines joined to one remote, as [`joined`].
pub(crate) fn pair() -> Option<(tempfile::TempDir, [Machine; 2])> {
    let (keep, _, mut machines) = joined(2)?;
    let b = machines.pop()?;
    let a = machines.pop()?;
    Some((keep, [a, b]))
}

/// The text of every daily log of a machine, joined.
pub(crate) fn daily(m: &Machine) -> String {
    m.files()
        .iter()
        .filter(|(p, _)| p.contains("/daily/"))
        .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
        .collect()
}

pub(crate) fn state(m: &Machine) -> Value {
    serde_json::from_str(&m.file("state/bot.json")).unwrap_or(Value::Null)
}

pub(crate) fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// No file of `m` holds a git conflict marker.
fn no_markers(m: &Machine) {
    for (path, bytes) in m.files() {
        let text = String::from_utf8_lossy(&bytes);
        let marked = text
            .lines()
            .any(|l| l.starts_with("<<<<<<<") || l.starts_with(">>>>>>>"));
        assert!(!marked, "{path} holds a conflict marker:\n{text}");
    }
}

/// A small deterministic generator, seeded and printed so a failure can
/// be replayed (`AXE_TEST_SEED`).
struct Rng(u64);

impl Rng {
    fn seeded() -> Rng {
        let seed = std::env::var("AXE_TEST_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
            });
        eprintln!("sync test seed: {seed} (AXE_TEST_SEED={seed} replays it)");
        Rng(seed | 1)
    }

    fn next(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// What one machine does in a round, decided before the threads start.
#[derive(Clone)]
enum Op {
    Remember(String),
    Append(String),
    Ingest(String, String),
    Reflect(String),
    Run(String),
}

/// What was written everywhere, to look for afterwards.
#[derive(Default)]
struct Written {
    notes: Vec<String>,
    tasks: Vec<String>,
    facts: Vec<String>,
    steps: Vec<String>,
    reflected: Vec<String>,
}

#[test]
fn three_clones_writing_and_syncing_in_random_order_lose_nothing() {
    let Some((_keep, _, machines)) = joined(3) else {
        return;
    };
    let mut rng = Rng::seeded();
    let served = Arc::new(AtomicUsize::new(0));
    let facts_served = Arc::new(Mutex::new(Vec::new()));
    let server = {
        let (served, facts_served) = (Arc::clone(&served), Arc::clone(&facts_served));
        Server::route(move |_| {
            let fact = format!("served-{}", served.fetch_add(1, Ordering::SeqCst));
            facts_served.lock().unwrap().push(fact.clone());
            Answer::json(
                200,
                &anthropic_reply(&format!("done\nAXE_MEMORY: KEY_FACT {fact}")),
            )
        })
    };
    let mut written = Written::default();
    let reflected = Mutex::new(Vec::new());
    for round in 0..6 {
        let plans: Vec<(Vec<Op>, usize)> = (0..machines.len())
            .map(|c| {
                let ops = (0..4)
                    .map(|k| {
                        let tag = format!("[c{c}-r{round}-k{k}]");
                        match rng.next(10) {
                            0..=3 => Op::Remember(format!("note {tag}")),
                            4..=5 => Op::Append(format!("task {tag}")),
                            6..=7 => Op::Ingest(format!("fact {tag}"), format!("step {tag}")),
                            8 => Op::Reflect(format!("memory of {tag}\nkept on c{c}")),
                            _ => Op::Run(format!("run {tag}")),
                        }
                    })
                    .collect();
                (ops, 1 + rng.next(2))
            })
            .collect();
        for (ops, _) in &plans {
            for op in ops {
                match op {
                    Op::Remember(t) => written.notes.push(t.clone()),
                    Op::Append(t) | Op::Run(t) => written.tasks.push(t.clone()),
                    Op::Ingest(f, s) => {
                        written.facts.push(f.clone());
                        written.steps.push(s.clone());
                    }
                    Op::Reflect(_) => {}
                }
            }
        }
        // Each machine writes in one thread and syncs in another, all at
        // once: writes land during syncs, syncs race each other's pushes.
        std::thread::scope(|s| {
            for (m, (ops, syncs)) in machines.iter().zip(&plans) {
                let (server, reflected) = (&server, &reflected);
                s.spawn(move || {
                    for op in ops {
                        match op {
                            Op::Remember(t) => m.remember(t),
                            Op::Append(t) => m.append(t),
                            Op::Ingest(f, st) => m.ingest(f, st),
                            Op::Reflect(t) => {
                                if m.reflect(t) {
                                    reflected.lock().unwrap().push(t.clone());
                                }
                            }
                            Op::Run(t) => m.run_agent(server, t),
                        }
                    }
                });
                s.spawn(move || {
                    for _ in 0..*syncs {
                        let out = m.sync(&[]);
                        let err = String::from_utf8_lossy(&out.stderr);
                        // Only the documented outcomes: synced, a conflict
                        // file left (7), or pushes outrun by the others.
                        let fine = matches!(out.status.code(), Some(0 | 7))
                            || err.contains("rejected") && out.status.code() == Some(1);
                        assert!(fine, "sync: {:?} {err}", out.status.code());
                    }
                });
            }
        });
    }
    // Everyone syncs until all have everything.
    for _ in 0..2 {
        for m in &machines {
            m.synced();
        }
    }
    written
        .facts
        .extend(facts_served.lock().unwrap().iter().cloned());
    written.reflected = reflected.into_inner().unwrap();
    let first = machines[0].files();
    for m in &machines {
        assert_eq!(m.files(), first, "every clone holds the same files");
        no_markers(m);
        let notes = daily(m);
        for t in &written.notes {
            assert_eq!(
                notes.matches(t.as_str()).count(),
                1,
                "{t} once in the daily logs:\n{notes}"
            );
        }
        let log = m.file("memory/bot.md");
        for t in &written.tasks {
            assert_eq!(
                log.matches(&format!("**Task:** {t}\n")).count(),
                1,
                "{t} once in the run log:\n{log}"
            );
        }
        let st = state(m);
        let facts = strings(&st["key_facts"]);
        for f in &written.facts {
            assert_eq!(
                facts.iter().filter(|x| *x == f).count(),
                1,
                "{f} once in {facts:?}"
            );
        }
        let steps = strings(&st["tasks"]["main"]["completed_steps"]);
        for s in &written.steps {
            assert_eq!(
                steps.iter().filter(|x| *x == s).count(),
                1,
                "{s} once in {steps:?}"
            );
        }
    }
    // MEMORY.md holds a text some machine reflected, and so does every
    // conflict file beside it: both sides of a true conflict survive.
    let memory = machines[0].file("notes/agents/bot/MEMORY.md");
    let was_reflected = |t: &str| written.reflected.iter().any(|r| r.trim() == t.trim());
    assert!(memory.is_empty() || was_reflected(&memory), "{memory:?}");
    let conflicts: Vec<&String> = first.keys().filter(|p| p.contains(".conflict-")).collect();
    for c in &conflicts {
        assert!(was_reflected(&String::from_utf8_lossy(&first[*c])), "{c}");
    }
    let last = machines[0].sync(&[]);
    let err = String::from_utf8_lossy(&last.stderr);
    match conflicts.is_empty() {
        true => assert_eq!(last.status.code(), Some(0), "{err}"),
        false => {
            assert_eq!(last.status.code(), Some(7), "{err}");
            for c in conflicts {
                assert!(err.contains(c.as_str()), "{c} is listed: {err}");
            }
        }
    }
}

#[test]
fn a_true_memory_conflict_keeps_both_texts_reports_them_until_resolved() {
    let Some((_keep, [a, b])) = pair() else {
        return;
    };
    let (a, b) = (&a, &b);
    assert!(a.reflect("shared\nfirst line\nend\n"));
    a.synced();
    b.synced();
    assert!(a.reflect("shared\nA says this\nend\n"));
    assert!(b.reflect("shared\nB says that\nend\n"));
    assert_eq!(a.sync(&[]).status.code(), Some(0));
    let out = b.sync(&["--json"]);
    assert_eq!(
        out.status.code(),
        Some(7),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let side = report["conflicts"][0].as_str().unwrap().to_owned();
    assert!(
        side.starts_with("notes/agents/bot/MEMORY.conflict-") && side.ends_with(".md"),
        "{side}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains(&side));
    assert_eq!(
        a.sync(&[]).status.code(),
        Some(7),
        "the conflict reached the other machine too"
    );
    for m in [&a, &b] {
        assert_eq!(
            m.file("notes/agents/bot/MEMORY.md"),
            "shared\nB says that\nend\n"
        );
        assert_eq!(m.file(&side), "shared\nA says this\nend\n");
        no_markers(m);
        let recall = m.run("axe-notes-recall", &["bot"]);
        let recall = String::from_utf8_lossy(&recall.stdout).into_owned();
        assert!(
            recall.starts_with("(Unresolved sync conflict: agents/bot/MEMORY.conflict-"),
            "{recall}"
        );
        let context = m.run("axe-context", &["bot"]);
        assert!(String::from_utf8_lossy(&context.stdout).contains("Unresolved sync conflict"));
        let status = m.run("axe-sync", &["status"]);
        assert_eq!(status.status.code(), Some(7));
    }
    // Resolved: merged by hand on one machine, the file removed there.
    assert!(a.reflect("shared\nA says this\nB says that\nend\n"));
    fs::remove_file(a.repo().join(&side)).unwrap();
    assert_eq!(a.sync(&[]).status.code(), Some(0));
    assert_eq!(b.sync(&[]).status.code(), Some(0));
    assert!(!b.repo().join(&side).exists());
    assert_eq!(
        b.file("notes/agents/bot/MEMORY.md"),
        "shared\nA says this\nB says that\nend\n"
    );
    let recall = b.run("axe-notes-recall", &["bot"]);
    assert!(!String::from_utf8_lossy(&recall.stdout).contains("Unresolved"));
}

#[test]
fn a_daily_entry_with_a_heading_in_its_text_stays_whole_through_a_merge() {
    let Some((_keep, [a, b])) = pair() else {
        return;
    };
    // remember keeps the text as given: a model's markdown may hold a
    // `## ` line, which is no entry header of a daily log (`## HH:MM`).
    a.remember("Deploy steps:\n## Steps\nrun x");
    let rel = a
        .files()
        .into_keys()
        .find(|p| p.contains("/daily/"))
        .unwrap();
    let date = rel.rsplit('/').next().unwrap().trim_end_matches(".md");
    let ours = format!("# {date}\n\n## 14:05\n\nDeploy steps:\n## Steps\nrun x\n");
    fs::write(a.repo().join(&rel), &ours).unwrap();
    fs::create_dir_all(b.repo().join(&rel).parent().unwrap()).unwrap();
    fs::write(
        b.repo().join(&rel),
        format!("# {date}\n\n## 13:00\n\nB\n\n## 15:00\n\nC\n"),
    )
    .unwrap();
    a.synced();
    b.synced();
    a.synced();
    let whole = format!(
        "# {date}\n\n## 13:00\n\nB\n\n## 14:05\n\nDeploy steps:\n## Steps\nrun x\n\n## 15:00\n\nC\n"
    );
    assert_eq!(b.file(&rel), whole);
    assert_eq!(a.file(&rel), whole);
}

/// Starts a sync on `m` that stops at `step` and waits there; returns it
/// once it has got there.
pub(crate) fn paused_at(m: &Machine, step: &str) -> std::process::Child {
    let marker = m.env.root().join(format!("paused-{step}"));
    let _ = fs::remove_file(&marker);
    let mut cmd = m.env.std_cmd("axe-sync");
    cmd.args(["run"])
        .env(
            "AXE_TEST_SYNC_PAUSE",
            format!("{step}:{}", marker.display()),
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let start = Instant::now();
    while !marker.exists() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the sync ended before {step}: {status}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "never reached {step}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child
}

#[test]
fn a_sync_killed_at_any_step_loses_nothing_and_the_next_one_completes() {
    for step in ["commit", "staged", "fetch", "merge", "merging", "push"] {
        let Some((_keep, [a, b])) = pair() else {
            return;
        };
        let (a, b) = (&a, &b);
        b.remember("from b [b1]");
        b.append("task [b2]");
        b.ingest("fact [b3]", "step [b4]");
        b.synced();
        a.remember("from a [a1]");
        a.append("task [a2]");
        a.ingest("fact [a3]", "step [a4]");
        let mut child = paused_at(a, step);
        // Written while the sync is stopped: no lock is held across a pause.
        a.remember("meanwhile [a5]");
        child.kill().unwrap();
        child.wait().unwrap();
        no_markers(a);
        for tag in ["[a1]", "[a5]"] {
            assert_eq!(daily(a).matches(tag).count(), 1, "{step}: {tag}");
        }
        let out = a.sync(&["--json"]);
        assert!(
            out.status.success(),
            "{step}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["recovered"], step == "merging", "{step}: {report}");
        b.synced();
        a.synced();
        assert_eq!(a.files(), b.files(), "{step}");
        for m in [&a, &b] {
            let notes = daily(m);
            for tag in ["[a1]", "[a5]", "[b1]"] {
                assert_eq!(notes.matches(tag).count(), 1, "{step}: {tag} in {notes}");
            }
            let log = m.file("memory/bot.md");
            for tag in ["[a2]", "[b2]"] {
                assert_eq!(log.matches(tag).count(), 1, "{step}: {tag} in {log}");
            }
            let st = state(m);
            let facts = strings(&st["key_facts"]);
            assert!(
                facts.contains(&"fact [a3]".into()) && facts.contains(&"fact [b3]".into()),
                "{step}: {facts:?}"
            );
            assert_eq!(facts.len(), 2, "{step}: {facts:?}");
            let steps = strings(&st["tasks"]["main"]["completed_steps"]);
            assert_eq!(steps.len(), 2, "{step}: {steps:?}");
        }
    }
}

#[test]
fn a_second_sync_waits_for_the_first_then_says_busy() {
    let Some((_keep, _, machines)) = joined(1) else {
        return;
    };
    let a = &machines[0];
    let mut first = paused_at(a, "fetch");
    let out = a.sync(&["--wait", "0"]);
    assert_eq!(
        out.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("another axe-sync is running"));
    first.kill().unwrap();
    first.wait().unwrap();
    // Its lock goes with it, once a git it started (the commit step's,
    // beside the paused fetch) has ended too: the next sync waits for that.
    assert_eq!(a.sync(&["--wait", "10"]).status.code(), Some(0));
}

#[test]
fn conflict_markers_are_never_committed() {
    let Some((_keep, remote, machines)) = joined(1) else {
        return;
    };
    let a = &machines[0];
    // Written by hand: axe's own writes never leave a marker line (see
    // `no_write_path_leaves_a_conflict_marker_that_stops_the_sync`).
    fs::create_dir_all(a.repo().join("notes/agents/bot")).unwrap();
    fs::write(
        a.repo().join("notes/agents/bot/MEMORY.md"),
        "x\n<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n",
    )
    .unwrap();
    let before = git(&remote, &["rev-parse", "main"]);
    let out = a.sync(&[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("notes/agents/bot/MEMORY.md holds git conflict markers"),
        "{err}"
    );
    assert_eq!(
        git(&remote, &["rev-parse", "main"]),
        before,
        "nothing pushed"
    );
    // A markdown heading rule alone is no marker.
    assert!(a.reflect("Title\n=======\n\ntext\n"));
    assert_eq!(a.sync(&[]).status.code(), Some(0));
}

/// Text holding git's conflict-marker lines, as a model that read a
/// conflict (or was asked to resolve one) writes it.
const MARKED: &str =
    "Merged by hand:\n<<<<<<< ours\nblue\n=======\ngreen\n>>>>>>> theirs\n<<<<<<<\n>>>>>>>\n";

/// [`MARKED`] as every write path keeps it: each marker line one space
/// in, the same markdown, no longer a marker to git or to a sync.
const NEUTRAL: &str =
    "Merged by hand:\n <<<<<<< ours\nblue\n=======\ngreen\n >>>>>>> theirs\n <<<<<<<\n >>>>>>>\n";

/// Every way a memory file is written (reflect, learn_fact, remember, the
/// run log's append, the state), through its executable and through
/// `axe-mcp`, keeps a marker line of what it is given one space in:
/// nothing lost, and the next sync commits and pushes it (a marker line
/// in MEMORY.md once stopped every sync for good, exit 1).
#[test]
fn no_write_path_leaves_a_conflict_marker_that_stops_the_sync() {
    let Some((_keep, remote, machines)) = joined(1) else {
        return;
    };
    let a = &machines[0];
    let memory = "notes/agents/bot/MEMORY.md";
    let pushed = |rel: &str| git(&remote, &["show", &format!("main:{rel}")]);

    // The executables, and a run whose answer holds the markers.
    assert!(a.reflect(MARKED));
    a.ok("axe-notes-learn", &["--agent", "bot", "merges"], MARKED);
    a.remember(MARKED);
    a.ok(
        "axe-mem-append",
        &["bot", "--task", "t", "--result", MARKED],
        "",
    );
    a.ingest("<<<<<<< ours", ">>>>>>> theirs");
    let server = Server::start(vec![Answer::json(200, &anthropic_reply(MARKED))]);
    a.run_agent(&server, "resolve the conflict");
    // And a folder of notes imported (axe-import markdown).
    let vault = tempfile::tempdir().unwrap();
    fs::write(vault.path().join("imported.md"), MARKED).unwrap();
    a.ok(
        "axe-import",
        &["markdown", vault.path().to_str().unwrap()],
        "",
    );
    no_markers(a);
    assert_eq!(a.file(memory), NEUTRAL);
    assert_eq!(a.file("notes/world/merges.md"), NEUTRAL);
    assert_eq!(a.file("notes/world/imported.md"), NEUTRAL);
    let out = a.sync(&[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(pushed(memory).trim_end(), NEUTRAL.trim_end());
    let log = a
        .files()
        .into_iter()
        .find(|(p, _)| p.starts_with("memory/"))
        .map(|(p, _)| p)
        .unwrap();
    assert!(pushed(&log).contains("\n >>>>>>> theirs\n"), "{log}");

    // The same through axe-mcp: each write a client makes.
    let calls = [
        json!({"name": "recall", "arguments": {}}),
        json!({"name": "reflect", "arguments": {"content": format!("MCP\n{MARKED}")}}),
        json!({"name": "learn_fact", "arguments": {"topic": "mcp-merges", "content": MARKED}}),
        json!({"name": "remember", "arguments": {"content": format!("MCP\n{MARKED}")}}),
        json!({"name": "log_append", "arguments": {"task": "t", "result": format!("MCP\n{MARKED}")}}),
        json!({"name": "state_record", "arguments": {"signals": "AXE_MEMORY: KEY_FACT <<<<<<< ours"}}),
    ];
    let mut input = String::new();
    for (id, params) in calls.iter().enumerate() {
        input.push_str(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
                .to_string(),
        );
        input.push('\n');
    }
    let out = a.ok("axe-mcp", &["bot"], &input);
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let reply: Value = serde_json::from_str(line).unwrap();
        assert_eq!(reply["result"]["isError"], false, "{reply}");
    }
    no_markers(a);
    assert_eq!(a.file(memory), format!("MCP\n{NEUTRAL}"));
    assert_eq!(a.file("notes/world/mcp-merges.md"), NEUTRAL);
    let out = a.sync(&[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        pushed("notes/world/mcp-merges.md").trim_end(),
        NEUTRAL.trim_end()
    );
}

#[test]
fn a_plain_git_commit_of_conflict_markers_is_refused_by_the_hook() {
    let Some((_keep, _, machines)) = joined(1) else {
        return;
    };
    let repo = machines[0].repo();
    fs::write(
        repo.join("x.md"),
        "<<<<<<< ours\na\n=======\nb\n>>>>>>> theirs\n",
    )
    .unwrap();
    let git_here = |args: &[&str]| {
        let mut cmd = machines[0].env.program("git");
        cmd.arg("-C").arg(&repo);
        cmd.args(["-c", "user.name=t", "-c", "user.email=t@t"]);
        cmd.args(args).output().unwrap()
    };
    let commit = |file: &str| {
        git_here(&["add", file]);
        git_here(&["commit", "-q", "-m", "m"])
    };
    let out = commit("x.md");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("axe-sync: git conflict markers in x.md"),
        "{err}"
    );
    fs::write(repo.join("x.md"), "Title\n=======\n").unwrap();
    succeeded(&commit("x.md"));
}

pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn a_plain_git_pull_merges_by_entry_through_the_drivers() {
    let Some((_keep, [a, b])) = pair() else {
        return;
    };
    let (a, b) = (&a, &b);
    a.remember("from a [pa]");
    a.synced();
    b.remember("from b [pb]");
    b.sync(&["--no-push"]);
    let out = b
        .env
        .program("git")
        .arg("-C")
        .arg(b.repo())
        .args([
            "-c",
            "pull.rebase=false",
            "pull",
            "-q",
            "--no-edit",
            "origin",
            "main",
        ])
        .output()
        .unwrap();
    succeeded(&out);
    let notes = daily(b);
    assert_eq!(notes.matches("[pa]").count(), 1, "{notes}");
    assert_eq!(notes.matches("[pb]").count(), 1, "{notes}");
    no_markers(b);
}

#[test]
fn dry_run_changes_nothing() {
    let Some((_keep, remote, machines)) = joined(1) else {
        return;
    };
    let a = &machines[0];
    a.remember("not yet [d1]");
    let head = git(&a.repo(), &["rev-parse", "HEAD"]);
    let out = a.sync(&["--dry-run", "--json"]);
    assert!(out.status.success());
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["committed"]["commit"], Value::Null);
    assert_eq!(
        report["committed"]["files"].as_array().unwrap().len(),
        1,
        "{report}"
    );
    assert_eq!(report["pushed"], false);
    assert_eq!(git(&a.repo(), &["rev-parse", "HEAD"]), head);
    assert_eq!(git(&remote, &["rev-parse", "main"]), head);
}

#[test]
fn without_git_on_path_the_error_says_so() {
    let a = Machine::new();
    let out = a
        .env
        .cmd("axe-sync")
        .args(["init"])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.trim(),
        "git was not found on PATH: axe-sync needs git (2.28 or newer)"
    );
}

#[test]
fn before_init_the_error_says_what_to_run() {
    if !have("git") {
        return;
    }
    let a = Machine::new();
    let out = a.sync(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("run `axe-sync init` first"));
}

#[test]
fn unknown_flag() {
    let a = Machine::new();
    let out = a.run("axe-sync", &["run", "--bogus"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unrecognized flag --bogus"));
}

#[test]
fn a_remote_that_is_gone_fails_the_fetch_and_keeps_the_local_commit() {
    let Some((_keep, remote, machines)) = joined(1) else {
        return;
    };
    let a = &machines[0];
    fs::remove_dir_all(&remote).unwrap();
    a.remember("offline [g1]");
    let out = a.sync(&[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("git fetch failed: "), "{err}");
    assert_eq!(
        git(&a.repo(), &["status", "--porcelain"]),
        "",
        "committed here"
    );
    assert_eq!(daily(a).matches("[g1]").count(), 1);
}

#[test]
fn a_remote_that_never_answers_is_given_up_at_the_timeout() {
    let Some((_keep, _, machines)) = joined(1) else {
        return;
    };
    let a = &machines[0];
    let url = "ssh://nowhere.invalid/memory.git";
    git(&a.repo(), &["remote", "set-url", "origin", url]);
    let started = Instant::now();
    let out = a
        .env
        .cmd("axe-sync")
        .args(["run", "--timeout", "0.5"])
        // An ssh that hangs, as one to a host that drops packets does.
        .env("GIT_SSH_COMMAND", "sleep 30 #")
        .output()
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("did not finish within its timeout"), "{err}");
}

/// A GitHub token as a model might echo one.
pub(crate) const TOKEN: &str = "ghp_aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gH3kM5";

#[test]
fn a_secret_a_model_wrote_does_not_reach_the_remote() {
    let Some((_keep, remote, machines)) = joined(1) else {
        return;
    };
    let a = &machines[0];
    let reply = format!("Deployed with {TOKEN}\nAXE_MEMORY: KEY_FACT the token is {TOKEN}");
    let server = Server::start(vec![Answer::json(200, &anthropic_reply(&reply))]);
    a.run_agent(&server, "deploy");
    a.synced();
    let history = git(&remote, &["log", "-p", "--all"]);
    assert!(
        history.contains("Deployed with"),
        "the run reached the remote"
    );
    assert!(!history.contains(TOKEN), "{history}");
}

#[test]
fn a_secret_written_into_memory_by_hand_is_refused_and_named() {
    let Some((_keep, remote, machines)) = joined(1) else {
        return;
    };
    let a = &machines[0];
    let before = git(&remote, &["rev-parse", "main"]);
    let topic = a.repo().join("notes/world/deploys.md");
    fs::create_dir_all(topic.parent().unwrap()).unwrap();
    fs::write(&topic, format!("Deploys\n\nuse {TOKEN}\n")).unwrap();
    let out = a.sync(&[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("notes/world/deploys.md holds what looks like a secret (github token; the first on line 3)"),
        "{err}"
    );
    assert!(!err.contains(TOKEN));
    assert_eq!(
        git(&remote, &["rev-parse", "main"]),
        before,
        "nothing pushed"
    );
    fs::write(&topic, "Deploys\n\nuse the vault\n").unwrap();
    assert_eq!(a.sync(&[]).status.code(), Some(0));
}

#[test]
fn bare_axe_sync_is_axe_sync_run_and_a_near_miss_is_a_mistyped_command() {
    let Some((_keep, remote, machines)) = joined(1) else {
        return;
    };
    let a = &machines[0];
    a.remember("bare sync [b1]");
    // Flags alone: run's.
    let out = a.run("axe-sync", &["--json"]);
    succeeded(&out);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["pushed"], true, "{report}");
    let head = git(&a.repo(), &["rev-parse", "HEAD"]);
    assert_eq!(git(&remote, &["rev-parse", "main"]), head);
    // An agent's name: run's, committing that agent's files.
    a.remember("by name [b2]");
    succeeded(&a.run("axe-sync", &["bot"]));
    assert_ne!(git(&remote, &["rev-parse", "main"]), head);
    assert!(git(&a.repo(), &["status", "--porcelain"]).is_empty());
    // Nothing at all: run's too.
    succeeded(&a.run("axe-sync", &[]));
    // One edit from `status`: a mistyped command, not an agent.
    let out = a.run("axe-sync", &["stauts"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "unrecognized subcommand \"stauts\" for axe-sync (did you mean \"status\"?)"
    );
    // Its own help still lists the commands.
    let help = String::from_utf8(a.run("axe-sync", &["--help"]).stdout).unwrap();
    assert!(help.contains("  axe-sync [OPTIONS] [AGENT]...\n"), "{help}");
    assert!(help.contains("Commands:\n  run "), "{help}");
}

/// `axe-sync` reads its flags before its names, as cobra parsed flags
/// first: a --timeout out of range is the error beside a name that is not
/// one (exit 2 when the flags are right), and nothing is made. (One that
/// is no number at all the parser refuses before either.)
#[test]
fn a_malformed_timeout_is_the_error_before_a_bad_name() {
    let env = Env::new();
    env.cmd("axe-sync")
        .args(["../x", "--timeout", "0"])
        .assert()
        .code(1)
        .stderr("--timeout must be a positive number of seconds\n");
    env.cmd("axe-sync")
        .args(["../x", "--timeout", "10"])
        .assert()
        .code(2)
        .stderr("invalid agent name \"../x\"\n");
    assert!(!env.data_dir().exists(), "nothing made");
}
