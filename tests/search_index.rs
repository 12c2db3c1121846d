//! `axe-notes-search`'s index: a cache of which files hold which words.
//! Whatever state it is in (none, current, stale, torn, rebuilt, written
//! by a process killed mid-write, raced by writers) the results are the
//! ones a search without it gives, byte for byte.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::util::Env;

/// A small random number generator: the corpus is the same every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a>(&mut self, of: &[&'a str]) -> &'a str {
        of[self.below(of.len())]
    }
}

/// Words with forms, accents, irregular pasts, labels' names and filler.
const WORDS: &[&str] = &[
    "deploy",
    "deploys",
    "deployed",
    "deploying",
    "deployment",
    "canary",
    "canaries",
    "rollback",
    "rolled",
    "back",
    "billing",
    "invoice",
    "invoices",
    "bought",
    "buy",
    "buys",
    "went",
    "go",
    "Zürich",
    "ZURICH",
    "café",
    "crème",
    "brûlée",
    "straße",
    "STRASSE",
    "мир",
    "Мира",
    "blue",
    "green",
    "blue-green",
    "the",
    "what",
    "did",
    "we",
    "a",
    "of",
    "on",
    "in",
    "hiking",
    "hike",
    "Sundays",
    "cache",
    "stampede",
    "jitter",
    "latency",
    "queue",
    "owner",
    "flaky",
    "tests",
    "retry",
    "timeout",
    "budget",
    "memory",
    "agent",
    "note",
    "fact",
    "lorem",
    "ipsum",
    "dolor",
    "sit",
    "amet",
    "kayak",
    "kayaks",
    "Maya",
    "Bruno",
    "x1",
    "2026",
    "v2.3",
    "e",
];

fn sentence(rng: &mut Rng) -> String {
    let n = 3 + rng.below(14);
    let words: Vec<&str> = (0..n).map(|_| rng.pick(WORDS)).collect();
    match rng.below(5) {
        0 => format!(
            "{}: {}.",
            rng.pick(&["Maya", "Bruno", "Decision", "Deploy"]),
            words.join(" ")
        ),
        _ => format!("{}.", words.join(" ")),
    }
}

fn text(rng: &mut Rng, sections: usize) -> String {
    let mut out = String::new();
    if rng.below(2) == 0 {
        out += &sentence(rng);
        out += "\n\n";
    }
    for _ in 0..sections {
        let heading = (0..1 + rng.below(3))
            .map(|_| rng.pick(WORDS))
            .collect::<Vec<_>>()
            .join(" ");
        out += &format!("{} {heading}\n\n", "#".repeat(1 + rng.below(3)));
        for _ in 0..1 + rng.below(4) {
            out += &sentence(rng);
            out += if rng.below(3) == 0 { "\n\n" } else { " " };
        }
        out += "\n";
    }
    out
}

/// A workspace of topics, two agents' MEMORY.md and daily logs.
fn corpus(ws: &Path, seed: u64, topics: usize, days: usize) {
    let mut rng = Rng(seed);
    for t in 0..topics {
        let name = format!(
            "{}-{t}",
            rng.pick(&["deploy", "people", "café", "billing", "kayak"])
        );
        let sections = 1 + rng.below(4);
        write(
            &ws.join(format!("world/{name}.md")),
            &text(&mut rng, sections),
        );
    }
    for agent in ["ana", "bruno"] {
        let dir = ws.join("agents").join(agent);
        write(&dir.join("MEMORY.md"), &text(&mut rng, 4));
        for d in 0..days {
            let day = format!("2026-{:02}-{:02}", 1 + d / 28 % 12, 1 + d % 28);
            let mut log = format!("# {day}\n\n");
            for _ in 0..1 + rng.below(3) {
                log += &format!(
                    "## {:02}:{:02}\n\n{}\n\n",
                    rng.below(24),
                    rng.below(60),
                    sentence(&mut rng)
                );
            }
            write(&dir.join(format!("daily/{day}.md")), &log);
        }
    }
    age(ws);
}

/// Every file of `dir` dated long ago: else each is read again at every
/// search for a while, being as new as its index entry (see `index`).
fn age(dir: &Path) {
    let status = std::process::Command::new("find")
        .arg(dir)
        .args([
            "-type",
            "f",
            "-exec",
            "touch",
            "-m",
            "-t",
            "200001010000",
            "{}",
            "+",
        ])
        .status()
        .unwrap();
    assert!(status.success());
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

const QUERIES: &[&str] = &[
    "deploy",
    "deployments",
    "canary rollback",
    "\"rolled back\"",
    "\"blue green\"",
    "blue-green",
    "zurich",
    "ZÜRICH café",
    "strasse",
    "straß*",
    "мир",
    "мир*",
    "buy",
    "what did Maya buy?",
    "go",
    "dep*",
    "k*",
    "e",
    "the who",
    "what did we do about the rollback of the canary?",
    "invoice billing owner",
    "maya",
    "decision",
    "kayak in May",
    "deploy on 2026-03-05",
    "hike Sundays",
    "nothing-here-at-all",
    "x1 v2",
    "2026",
    "\"the canary\" flaky",
    "brûlée crème",
    "lorem ipsum dolor sit amet",
];

fn ws_of(env: &Env) -> PathBuf {
    env.root().join("notes")
}

/// A search's `--json`, with or without the index (without: the cache
/// directory inside the workspace, where no index may go).
fn search(env: &Env, query: &str, indexed: bool) -> Value {
    let ws = ws_of(env);
    search_in(env, &["--workspace", ws.to_str().unwrap()], query, indexed)
}

fn search_in(env: &Env, whose: &[&str], query: &str, indexed: bool) -> Value {
    let ws = ws_of(env);
    let mut cmd = env.cmd("axe-notes-search");
    cmd.args(whose).args(["--json", "--limit", "20", query]);
    if !indexed {
        cmd.env("XDG_CACHE_HOME", ws.join(".cache"));
    }
    let out = cmd.output().unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{query}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["index"]["used"], indexed, "{query}: {json}");
    json
}

/// The same query with and without the index gives the same results;
/// the index's state after it.
fn same(env: &Env, query: &str) -> Value {
    let with = search(env, query, true);
    let without = search(env, query, false);
    assert_eq!(with["results"], without["results"], "{query}");
    with["index"].clone()
}

/// [`same`] for one agent's search (`--agent`): the world and its files.
fn same_for(env: &Env, agent: &str, query: &str) -> Value {
    let with = search_in(env, &["--agent", agent], query, true);
    let without = search_in(env, &["--agent", agent], query, false);
    assert_eq!(with["results"], without["results"], "{agent}: {query}");
    with["index"].clone()
}

fn index_files(env: &Env) -> Vec<PathBuf> {
    let root = env.root().join("home/.cache/axe/notes-index");
    let Ok(dirs) = fs::read_dir(&root) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = dirs
        .flat_map(|d| fs::read_dir(d.unwrap().path()).unwrap())
        .map(|f| f.unwrap().path())
        .collect();
    files.sort();
    files
}

fn base(env: &Env) -> PathBuf {
    index_files(env)
        .into_iter()
        .find(|p| p.file_name().unwrap() == "base")
        .expect("an index")
}

#[test]
fn results_are_the_same_with_and_without_the_index() {
    let env = Env::new();
    let ws = ws_of(&env);
    corpus(&ws, 0x5eed, 40, 60);
    let first = same(&env, QUERIES[0]);
    assert_eq!(first["rebuilt"], true, "{first}");
    let files = 40 + 2 * (1 + 60);
    let mut skipped = 0;
    for q in QUERIES {
        let index = same(&env, q);
        assert_eq!(index["reindexed"], 0, "{q}: {index}");
        // A file is checked only when the index would skip it.
        assert!(
            index["current"].as_u64() >= index["skipped"].as_u64(),
            "{q}: {index}"
        );
        // What it skipped it did not read.
        let (read, skip) = (
            index["read"].as_u64().unwrap(),
            index["skipped"].as_u64().unwrap(),
        );
        assert_eq!(read + skip, files, "{q}: {index}");
        skipped += skip;
    }
    // It did narrow the files read: else this proves nothing.
    assert!(skipped > 0);
    // Writes after indexing: an append, a new file, a removed one, a
    // rewrite; each seen by the next search, the results still the same.
    let mut rng = Rng(7);
    let daily = ws.join("agents/ana/daily/2026-01-02.md");
    let mut log = fs::read_to_string(&daily).unwrap();
    log += "## 23:59\n\nMaya: quetzal deploy canary.\n";
    fs::write(&daily, log).unwrap();
    write(&ws.join("world/new-topic.md"), &text(&mut rng, 3));
    fs::remove_file(ws.join("agents/bruno/daily/2026-01-03.md")).unwrap();
    write(&ws.join("agents/bruno/MEMORY.md"), &text(&mut rng, 5));
    let index = same(&env, "quetzal");
    assert!(index["reindexed"].as_u64().unwrap() >= 3, "{index}");
    for q in QUERIES {
        same(&env, q);
    }
    let found = search(&env, "quetzal", true);
    assert_eq!(
        found["results"][0]["path"],
        "agents/ana/daily/2026-01-02.md"
    );
}

#[test]
fn a_rewrite_of_the_same_size_and_time_is_seen() {
    let env = Env::new();
    let ws = ws_of(&env);
    let topic = ws.join("world/birds.md");
    write(&topic, "The heron nests by the lake.\n");
    // Old enough that the index trusts it at once.
    let old = "200001010000";
    let touch = |path: &Path| {
        let status = std::process::Command::new("touch")
            .args(["-m", "-t", old])
            .arg(path)
            .status()
            .unwrap();
        assert!(status.success());
    };
    touch(&topic);
    assert_eq!(
        search(&env, "heron", true)["results"][0]["path"],
        "world/birds.md"
    );
    assert_eq!(search(&env, "heron", true)["index"]["reindexed"], 0);
    // Same size, same modification time: only the change time (and the
    // bytes) differ.
    fs::write(&topic, "The egret nests by the lake.\n").unwrap();
    touch(&topic);
    let found = search(&env, "egret", true);
    assert_eq!(found["results"][0]["path"], "world/birds.md", "{found}");
    assert_eq!(
        search(&env, "heron", true)["results"],
        serde_json::json!([])
    );
}

#[test]
fn a_torn_index_is_rebuilt_and_the_results_are_unchanged() {
    let env = Env::new();
    corpus(&ws_of(&env), 0xfeed, 30, 40);
    let queries = ["deploy", "canary rollback", "\"blue green\"", "k*"];
    for q in queries {
        same(&env, q);
    }
    let base = base(&env);
    let good = fs::read(&base).unwrap();
    let damages: Vec<(&str, Vec<u8>)> = vec![
        ("truncated", good[..good.len() / 2].to_vec()),
        ("empty", Vec::new()),
        ("garbage head", {
            let mut b = good.clone();
            b[..64].fill(b'A');
            b
        }),
        ("garbage lists", {
            // Every byte of the lists of files flipped, the head and the
            // directory left whole: found when a search reads a list.
            let mut b = good.clone();
            let dir = u64::from_le_bytes(good[8..16].try_into().unwrap()) as usize;
            let n = b.len();
            for x in &mut b[32 + dir..n - 8] {
                *x ^= 0x5a;
            }
            b
        }),
        ("deleted", Vec::new()),
    ];
    for (what, bytes) in damages {
        match what {
            "deleted" => fs::remove_file(&base).unwrap(),
            _ => fs::write(&base, &bytes).unwrap(),
        }
        for (i, q) in queries.iter().enumerate() {
            let index = same(&env, q);
            if i == 0 {
                assert_eq!(index["rebuilt"], true, "{what}: {index}");
                assert_eq!(index["saved"], true, "{what}: {index}");
            } else {
                assert_eq!(index["rebuilt"], false, "{what}: {index}");
            }
        }
        assert!(fs::read(&base).unwrap().len() > 100, "{what}");
    }
}

#[test]
fn reindex_alone_builds_the_index_and_says_so() {
    let env = Env::new();
    let ws = ws_of(&env);
    corpus(&ws, 3, 5, 5);
    let out = env
        .cmd("axe-notes-search")
        .args(["--workspace", ws.to_str().unwrap(), "--reindex", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["index"]["rebuilt"], true, "{json}");
    assert_eq!(json["index"]["saved"], true, "{json}");
    assert_eq!(json["index"]["reindexed"], 5 + 2 + 2 * 5, "{json}");
    assert!(base(&env).exists());
    // Without --json: nothing on stdout, exit 0.
    env.cmd("axe-notes-search")
        .args(["--workspace", ws.to_str().unwrap(), "--reindex"])
        .assert()
        .success()
        .stdout("");
}

#[test]
fn the_index_is_never_inside_the_workspace() {
    let env = Env::new();
    let ws = ws_of(&env);
    corpus(&ws, 9, 3, 3);
    // The default: under the cache directory, outside the workspace.
    same(&env, "deploy");
    let files = index_files(&env);
    assert!(!files.is_empty());
    assert!(files.iter().all(|f| !f.starts_with(&ws)));
    // A cache directory inside the workspace (which a sync would carry):
    // no index, nothing written there, the search as always.
    for inside in [ws.join(".cache"), ws.join("world")] {
        let out = env
            .cmd("axe-notes-search")
            .args(["--workspace", ws.to_str().unwrap(), "--json", "deploy"])
            .env("XDG_CACHE_HOME", &inside)
            .output()
            .unwrap();
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(json["index"]["used"], false, "{json}");
        assert!(
            json["index"]["why"]
                .as_str()
                .unwrap()
                .contains("inside the workspace")
        );
        assert!(!inside.join("axe").exists());
    }
}

/// Many files, so that a rebuild takes long enough to be killed in.
#[test]
fn kill_9_during_a_reindex_leaves_a_usable_index() {
    let env = Env::new();
    let ws = ws_of(&env);
    corpus(&ws, 11, 50, 100);
    same(&env, "deploy");
    let before = fs::read(base(&env)).unwrap();
    // The rebuild stops right after writing its new file, before the
    // rename; killed there, its temp file is the proof it was mid-write.
    let mut child = env
        .std_cmd("axe-notes-search")
        .args(["--workspace", ws.to_str().unwrap(), "--reindex"])
        .env("AXE_TEST_INDEX_STALL", "1")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let temp = base(&env).with_file_name(".base.axe-new");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !fs::metadata(&temp).is_ok_and(|m| m.len() > 0) {
        assert!(Instant::now() < deadline, "the rebuild never wrote");
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(temp.exists(), "killed mid-write");
    assert_eq!(
        fs::read(base(&env)).unwrap(),
        before,
        "the old index stands"
    );
    for q in QUERIES {
        let index = same(&env, q);
        assert_eq!(index["rebuilt"], false, "{q}: {index}");
    }
    // The next writer sweeps the leftover.
    fs::write(ws.join("world/late.md"), "a late note\n").unwrap();
    let index = same(&env, "late");
    assert_eq!(index["saved"], true, "{index}");
    assert!(!temp.exists());
}

#[test]
fn remembers_during_searches_are_all_found() {
    let env = Env::new();
    let ws = ws_of(&env);
    corpus(&ws, 21, 20, 30);
    env.agent(
        "ana",
        &format!(
            "name = \"ana\"\nmodel = \"x/y\"\n[notes]\nenabled = true\nworkspace = \"{}\"\n",
            ws.display()
        ),
    );
    same(&env, "deploy");
    let n = 12;
    let (overlap, found) = std::thread::scope(|s| {
        let writer = s.spawn(|| {
            let mut spans = Vec::new();
            for i in 0..n {
                let start = Instant::now();
                env.cmd("axe-notes-remember")
                    .args(["ana", &format!("word{i}x marks the spot")])
                    .assert()
                    .success();
                spans.push((start, Instant::now()));
            }
            spans
        });
        let mut searches = Vec::new();
        while !writer.is_finished() {
            let start = Instant::now();
            let json = search(&env, "spot", true);
            searches.push((start, Instant::now(), json));
        }
        let spans = writer.join().unwrap();
        // Each search finds every word remembered before it began.
        let mut overlap = 0;
        for (start, end, json) in &searches {
            let seen = json["results"].to_string();
            for (i, (_, done)) in spans.iter().enumerate() {
                if done < start {
                    assert!(seen.contains(&format!("word{i}x")), "word{i}x: {seen}");
                }
            }
            overlap += spans.iter().filter(|(a, b)| a < end && start < b).count();
        }
        (overlap, searches.len())
    });
    // The race took place: searches ran while remembers did.
    assert!(overlap > 0 && found > 0, "{overlap} overlapping of {found}");
    for q in ["spot", "marks", "deploy", "canary rollback"] {
        same(&env, q);
    }
    let all = search(&env, "spot", true);
    assert_eq!(all["results"].as_array().unwrap().len(), n.min(20));
}

/// One index serves the whole workspace's searches and each agent's
/// (which list only the world and that agent's files), their updates
/// merged into one: each kind of search still gives what it gives
/// without the index, writes between them seen by both.
#[test]
fn an_agents_searches_and_the_workspaces_share_one_index() {
    let env = Env::new();
    let ws = ws_of(&env);
    corpus(&ws, 0xabc, 20, 30);
    for agent in ["ana", "bruno"] {
        env.agent(
            agent,
            &format!(
                "name = \"{agent}\"\nmodel = \"x/y\"\n[notes]\nenabled = true\nworkspace = \"{}\"\n",
                ws.display()
            ),
        );
    }
    let mut rng = Rng(99);
    for round in 0..6 {
        let q = QUERIES[round * 5 % QUERIES.len()];
        let index = same_for(&env, "ana", q);
        assert_eq!(index["used"], true, "{index}");
        same_for(&env, "bruno", q);
        same(&env, q);
        // A change in each agent's files and the world's.
        for dir in ["agents/ana/daily", "agents/bruno/daily", "world"] {
            write(
                &ws.join(format!("{dir}/round-{round}.md")),
                &text(&mut rng, 2),
            );
        }
        write(&ws.join("agents/bruno/MEMORY.md"), &text(&mut rng, 3));
        for q in ["deploy", "\"blue green\"", "kayak in May"] {
            same_for(&env, "ana", q);
            same_for(&env, "bruno", q);
            same(&env, q);
        }
    }
}

/// A file edited in place by another program (no directory changes, no
/// journal line) is found within `files / 1024` searches, as the index's
/// promise says (`index::SLICE`), and at once by `--reindex`; the
/// results then are the same as without the index.
#[test]
fn a_hand_edit_in_place_is_found_within_the_promised_bound() {
    let env = Env::new();
    let ws = ws_of(&env);
    let mut rng = Rng(4242);
    let n: usize = 5000;
    for i in 0..n {
        write(&ws.join(format!("world/t{i:04}.md")), &sentence(&mut rng));
    }
    age_all(&ws);
    same(&env, "deploy");
    let index = same(&env, "quetzal");
    assert!(index["skipped"].as_u64().unwrap() > 4096, "{index}");
    // Not more than the slice plus the directories are stat'ed.
    assert!(index["checked"].as_u64().unwrap() < 1100, "{index}");
    fs::write(ws.join("world/t2500.md"), "A quetzal flew by.\n").unwrap();
    let bound = n.div_ceil(1024);
    let mut searches = 0;
    loop {
        searches += 1;
        let found = search(&env, "quetzal", true);
        if found["results"][0]["path"] == "world/t2500.md" {
            break;
        }
        assert!(searches < bound, "not found in {bound} searches: {found}");
    }
    for q in ["quetzal", "deploy", "canary rollback", "\"blue green\""] {
        same(&env, q);
    }
    // --reindex finds the next at once.
    fs::write(ws.join("world/t0100.md"), "A toucan too.\n").unwrap();
    env.cmd("axe-notes-search")
        .args(["--workspace", ws.to_str().unwrap(), "--reindex"])
        .assert()
        .success();
    let found = search(&env, "toucan", true);
    assert_eq!(found["results"][0]["path"], "world/t0100.md", "{found}");
}

/// Every file and directory of `dir` dated long ago: no stamp is as new
/// as the index's listing or read of it.
fn age_all(dir: &Path) {
    age(dir);
    let status = std::process::Command::new("find")
        .arg(dir)
        .args([
            "-type",
            "d",
            "-exec",
            "touch",
            "-m",
            "-t",
            "200001010000",
            "{}",
            "+",
        ])
        .status()
        .unwrap();
    assert!(status.success());
}

fn agent_of(env: &Env, agent: &str) {
    env.agent(
        agent,
        &format!(
            "name = \"{agent}\"\nmodel = \"x/y\"\n[notes]\nenabled = true\nworkspace = \"{}\"\n",
            ws_of(env).display()
        ),
    );
}

fn journal(env: &Env) -> PathBuf {
    base(env).with_file_name("journal")
}

/// A remember appends to a log in place, where no directory changes and
/// the rotating check may be searches away: its line in the index's
/// journal makes the next search read the log again. A line a writer
/// killed mid-write left unfinished costs no later line.
#[test]
fn a_remember_is_found_by_the_next_search_through_the_journal() {
    let env = Env::new();
    let ws = ws_of(&env);
    let mut rng = Rng(77);
    for i in 0..3000 {
        write(&ws.join(format!("world/t{i:04}.md")), &sentence(&mut rng));
    }
    agent_of(&env, "ana");
    env.cmd("axe-notes-remember")
        .args(["ana", "the first entry"])
        .assert()
        .success();
    age_all(&ws);
    same(&env, "deploy");
    same(&env, "deploy");
    // Another program's edit in place, far from the rotating check: the
    // next search does not see it (so what follows proves the journal).
    fs::write(ws.join("world/t2999.md"), "A quetzal flew by.\n").unwrap();
    let found = search(&env, "quetzal", true);
    assert_eq!(found["results"], serde_json::json!([]), "{found}");
    env.cmd("axe-notes-remember")
        .args(["ana", "a kinkajou in the garden"])
        .assert()
        .success();
    let found = search(&env, "kinkajou", true);
    assert!(
        found["results"][0]["path"]
            .as_str()
            .unwrap()
            .starts_with("agents/ana/daily/"),
        "{found}"
    );
    assert_eq!(found["index"]["rebuilt"], false, "{found}");
    // A writer killed mid-line: the next line is still whole and read.
    let mut f = fs::OpenOptions::new()
        .append(true)
        .open(journal(&env))
        .unwrap();
    std::io::Write::write_all(&mut f, b"\nagents/ana/dai").unwrap();
    drop(f);
    env.cmd("axe-notes-remember")
        .args(["ana", "an okapi at noon"])
        .assert()
        .success();
    let found = search(&env, "okapi", true);
    assert!(
        found["results"][0]["text"]
            .as_str()
            .unwrap()
            .contains("okapi"),
        "{found}"
    );
    // A line naming what is no notes file is passed over.
    let mut f = fs::OpenOptions::new()
        .append(true)
        .open(journal(&env))
        .unwrap();
    std::io::Write::write_all(&mut f, b"\n../../etc/passwd\nworld/../x.md\n/abs.md\n").unwrap();
    drop(f);
    for q in ["okapi", "kinkajou", "deploy"] {
        let index = same(&env, q);
        assert_eq!(index["used"], true, "{index}");
    }
}

/// Two writers remembering at once, each into logs of its own and both
/// into the one journal: the first search after finds every entry (no
/// journal line lost; the rotating check would need three searches).
#[test]
fn two_writers_at_once_lose_no_journal_line() {
    let env = Env::new();
    let ws = ws_of(&env);
    let mut rng = Rng(78);
    for i in 0..3000 {
        write(&ws.join(format!("world/t{i:04}.md")), &sentence(&mut rng));
    }
    let agents: Vec<String> = (0..30).map(|i| format!("a{i:02}")).collect();
    for agent in &agents {
        agent_of(&env, agent);
        env.cmd("axe-notes-remember")
            .args([agent.as_str(), "the first entry"])
            .assert()
            .success();
    }
    age_all(&ws);
    same(&env, "deploy");
    same(&env, "deploy");
    let spans = std::thread::scope(|s| {
        let writers: Vec<_> = agents
            .chunks(15)
            .map(|mine| {
                let env = &env;
                s.spawn(move || {
                    mine.iter()
                        .map(|agent| {
                            let start = Instant::now();
                            env.cmd("axe-notes-remember")
                                .args([agent.as_str(), &format!("{agent}word marks it")])
                                .assert()
                                .success();
                            (start, Instant::now())
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        writers
            .into_iter()
            .map(|w| w.join().unwrap())
            .collect::<Vec<_>>()
    });
    // The race took place: the two wrote at the same time.
    let overlap = spans[0]
        .iter()
        .filter(|(a, b)| spans[1].iter().any(|(c, d)| a < d && c < b))
        .count();
    assert!(overlap > 0, "the writers never overlapped");
    let out = env
        .cmd("axe-notes-search")
        .args([
            "--workspace",
            ws.to_str().unwrap(),
            "--json",
            "--limit",
            "100",
            "marks",
        ])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let seen = json["results"].to_string();
    for agent in &agents {
        assert!(seen.contains(&format!("{agent}word")), "{agent}: {json}");
    }
    assert_eq!(json["index"]["rebuilt"], false, "{json}");
    for q in ["marks", "a00word", "a29word", "deploy"] {
        same(&env, q);
    }
}

/// Past 4,096 files changed since the base (a checkout of another
/// branch, an import), a search builds the base again instead of a
/// delta: it finds what the files say now, the same results as without
/// the index, and the next search scores from the new base.
#[test]
fn more_changed_files_than_a_delta_holds_build_the_base_again() {
    let env = Env::new();
    let ws = ws_of(&env);
    let days = ws.join("agents/claude/daily");
    let write_all = |word: &str| {
        for d in 0..4200 {
            let text = format!("## 10:00\nnote {d} {word}{d}\n");
            write(&days.join(format!("2015-{d:04}.md")), &text);
        }
        age_all(&ws);
    };
    write_all("first");
    let first = same(&env, "note");
    assert_eq!(first["rebuilt"], true, "{first}");
    let generation = fs::metadata(base(&env)).unwrap().modified().unwrap();
    // Every file changed, each by a new word (in a directory listed again,
    // so every one is read).
    write_all("kayak");
    let index = same(&env, "kayak4199");
    assert_eq!(
        (&index["rebuilt"], &index["saved"]),
        (&Value::Bool(true), &Value::Bool(true)),
        "{index}"
    );
    assert!(index["reindexed"].as_u64().unwrap() > 4096, "{index}");
    assert_ne!(
        fs::metadata(base(&env)).unwrap().modified().unwrap(),
        generation
    );
    // Scored from the new base: nothing read again but what is shown.
    let after = same(&env, "kayak17");
    assert_eq!(after["reindexed"], 0, "{after}");
    assert!(after["read"].as_u64().unwrap() <= 1, "{after}");
}

/// Lines appended to a file after this search's refresh read it, before
/// the search shows it (another client remembering as it runs): the
/// write came after the search began, so it shows the sections the index
/// read, their text checked unchanged, and leaves the new lines to the
/// next search. A file the index read before the search began, changed
/// the same way, is read again and the search done again with it.
#[test]
fn a_write_during_a_search_is_left_to_the_next_one() {
    let env = Env::new();
    let ws = ws_of(&env);
    write(
        &ws.join("world/zoo.md"),
        "## Animals\nA kinkajou lives here.\n",
    );
    agent_of(&env, "ana");
    age_all(&ws);
    env.cmd("axe-notes-remember")
        .args(["ana", "a kinkajou in the garden"])
        .assert()
        .success();
    same(&env, "deploy");
    let log = fs::read_dir(ws.join("agents/ana/daily"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .next()
        .unwrap();
    let log = log.strip_prefix(&ws).unwrap().to_str().unwrap().to_owned();
    let search_while = |path: &str, query: &str| {
        let out = env
            .cmd("axe-notes-search")
            .args(["--workspace", ws.to_str().unwrap(), "--json", query])
            .env(
                "AXE_TEST_APPEND_BEFORE_SHOW",
                format!("{path}\n\n## 23:59\nAnother {query} came by.\n"),
            )
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let texts = |found: &Value| -> Vec<String> {
        found["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["text"].as_str().unwrap().to_owned())
            .collect()
    };
    // The log: journaled by the remember, read by this search's refresh.
    let found = search_while(&log, "garden");
    assert_eq!(texts(&found).len(), 1, "{found}");
    assert!(
        texts(&found)[0].contains("a kinkajou in the garden"),
        "{found}"
    );
    // The next search reads the log again and finds both.
    assert_eq!(texts(&search(&env, "garden", true)).len(), 2);
    same(&env, "garden");
    // The topic: read by an earlier search, not this one's refresh.
    let found = search_while("world/zoo.md", "lives");
    assert_eq!(texts(&found).len(), 2, "{found}");
}
