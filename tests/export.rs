//! `axe-export`: the notes as the reference MCP memory server's JSONL
//! (read back by the server itself, driven by the official SDK), as JSON
//! lines, as a markdown folder; and the round trips: axe to the server's
//! format and back gives the same notes, the server's graph through axe
//! and back keeps every observation.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use crate::import::{memory_cjs, memory_server, snapshot, workspace};
use crate::util::{Env, read};

/// Notes of every kind the way axe's own commands leave them.
fn notes(env: &Env) {
    let ws = workspace(env);
    env.write(
        &ws.join("world/deploys.md"),
        "# Deploys\n\nBlue-green, switched by the load balancer.\n\n## Rollback\n\n- `deploy --undo`\n",
    );
    env.write(
        &ws.join("world/john-smith.md"),
        "# John Smith\n\nType: person\n\n- Speaks Spanish\n\n## Relations\n\n- [[John Smith]] works_at [[Anthropic]]\n",
    );
    env.write(
        &ws.join("world/anthropic.md"),
        "# Anthropic\n\n## Relations\n\n- [[John Smith]] works_at [[Anthropic]]\n",
    );
    env.write(
        &ws.join("agents/ops/MEMORY.md"),
        "# Memory\n\n- on call: Ada\n\n",
    );
    env.cmd("axe-notes-remember")
        .args(["ops", "The cache was cold after the deploy."])
        .assert()
        .success();
}

#[test]
fn axe_to_mcp_memory_and_back_gives_the_same_notes() {
    let env = Env::new();
    notes(&env);
    let file = env.root().join("graph.jsonl");
    env.cmd("axe-export")
        .args(["mcp-memory", "--output", file.to_str().unwrap()])
        .assert()
        .success();
    let lines: Vec<Value> = read(&file)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines.contains(&json!({"type": "entity", "name": "John Smith", "entityType": "person", "observations": ["Speaks Spanish"]})));
    assert!(lines.contains(&json!({"type": "relation", "from": "John Smith", "to": "Anthropic", "relationType": "works_at"})));
    assert!(lines.contains(&json!({"type": "entity", "name": "ops", "entityType": "axe-memory", "observations": ["# Memory", "", "- on call: Ada", ""]})));
    assert_eq!(
        lines.iter().filter(|l| l["type"] == "relation").count(),
        1,
        "once, not once per topic"
    );
    let other = Env::new();
    other
        .cmd("axe-import")
        .args(["mcp-memory", file.to_str().unwrap()])
        .assert()
        .success();
    let mut want = snapshot(&workspace(&env));
    want.retain(|k, _| !k.contains("/daily/"));
    assert_eq!(snapshot(&workspace(&other)), want);
}

/// The README's round trip, `axe-export mcp-memory` then `axe-import
/// mcp-memory` of that file: nothing to do, byte for byte, for an empty
/// note and one whose last line has no newline too.
#[test]
fn importing_an_export_again_changes_nothing_even_for_an_empty_note_or_no_final_newline() {
    let env = Env::new();
    notes(&env);
    let ws = workspace(&env);
    env.write(&ws.join("world/empty.md"), "");
    env.write(&ws.join("world/open-ended.md"), "# Open\n\nthe last line");
    env.write(&ws.join("agents/ops/MEMORY.md"), "- on call: Ada");
    env.write(&ws.join("agents/quiet/MEMORY.md"), "");
    let file = env.root().join("graph.jsonl");
    env.cmd("axe-export")
        .args(["mcp-memory", "--output", file.to_str().unwrap()])
        .assert()
        .success();
    let before = snapshot(&ws);
    let out = env
        .cmd("axe-import")
        .args(["mcp-memory", file.to_str().unwrap()])
        .assert()
        .success()
        .get_output()
        .clone();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "",
        "something written"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("nothing new"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(snapshot(&ws), before);
}

#[test]
fn the_reference_server_reads_what_axe_exports() {
    let Some(server) = memory_server() else {
        return;
    };
    let env = Env::new();
    notes(&env);
    let file = env.root().join("graph.jsonl");
    env.cmd("axe-export")
        .args(["mcp-memory", "-o", file.to_str().unwrap()])
        .assert()
        .success();
    let graph: Value = serde_json::from_str(&memory_cjs(&server, "read", &file, None)).unwrap();
    let names: BTreeSet<&str> = graph["entities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, BTreeSet::from(["John Smith", "deploys", "ops"]));
    assert_eq!(graph["relations"].as_array().unwrap().len(), 1);
}

#[test]
fn the_reference_servers_graph_through_axe_and_back_keeps_every_observation() {
    let Some(server) = memory_server() else {
        return;
    };
    let env = Env::new();
    let original = json!({
        "entities": [
            {"name": "John Smith", "entityType": "person", "observations": ["Speaks fluent Spanish", "Line one\nline two", "Likes [[brackets]] and - dashes"]},
            {"name": "Anthropic", "entityType": "organization", "observations": []},
            {"name": "Zed", "entityType": "person", "observations": ["Has a key ghp_not_a_key"]}
        ],
        "relations": [
            {"from": "John Smith", "to": "Anthropic", "relationType": "works_at"},
            {"from": "Zed", "to": "Nobody", "relationType": "knows"}
        ]
    });
    let first = env.root().join("first.jsonl");
    memory_cjs(&server, "write", &first, Some(&original));
    env.cmd("axe-import")
        .args(["mcp-memory", first.to_str().unwrap()])
        .assert()
        .success();
    let second = env.root().join("second.jsonl");
    env.cmd("axe-export")
        .args(["mcp-memory", "--output", second.to_str().unwrap()])
        .assert()
        .success();
    let back: Value = serde_json::from_str(&memory_cjs(&server, "read", &second, None)).unwrap();
    let set = |g: &Value, key: &str| -> BTreeSet<String> {
        g[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.to_string())
            .collect()
    };
    assert_eq!(set(&back, "entities"), set(&original, "entities"));
    assert_eq!(set(&back, "relations"), set(&original, "relations"));
}

#[test]
fn jsonl_is_one_object_per_entry_of_every_kind() {
    let env = Env::new();
    notes(&env);
    env.cmd("axe-mem-append")
        .args(["ops", "--task", "deploy", "--result", "blue-green, done"])
        .assert()
        .success();
    env.cmd("axe-state-ingest")
        .arg("ops")
        .write_stdin("AGENTIUM_MEMORY: KEY_FACT The cache is cold\n")
        .assert()
        .success();
    let out = env
        .cmd("axe-export")
        .arg("jsonl")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let entries: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let daily = entries.iter().find(|e| e["kind"] == "daily").unwrap();
    assert_eq!(daily["agent"], "ops");
    assert_eq!(daily["text"], "The cache was cold after the deploy.");
    let time = daily["time"].as_str().unwrap();
    assert!(time.ends_with(":00Z") && time.contains('T'), "{time}");
    assert!(
        daily["path"]
            .as_str()
            .unwrap()
            .starts_with("agents/ops/daily/")
    );
    let deploys: Vec<&Value> = entries
        .iter()
        .filter(|e| e["path"] == "world/deploys.md")
        .collect();
    assert_eq!(deploys.len(), 2);
    assert_eq!(deploys[0]["heading"], "Deploys");
    assert_eq!(
        deploys[0]["text"],
        "Blue-green, switched by the load balancer."
    );
    assert_eq!(deploys[1]["heading"], "Rollback");
    assert_eq!(deploys[0]["kind"], "world");
    assert_eq!(deploys[0]["time"], Value::Null);
    let log = entries.iter().find(|e| e["kind"] == "log").unwrap();
    assert_eq!(
        (&log["agent"], &log["path"], &log["heading"], &log["text"]),
        (
            &json!("ops"),
            &json!("memory/ops.md"),
            &json!("deploy"),
            &json!("blue-green, done")
        )
    );
    assert!(log["time"].as_str().unwrap().ends_with('Z'));
    let fact = entries.iter().find(|e| e["kind"] == "state").unwrap();
    assert_eq!(
        (&fact["path"], &fact["heading"], &fact["text"]),
        (
            &json!("state/ops.json"),
            &json!("fact"),
            &json!("The cache is cold")
        )
    );
    let memory = entries.iter().find(|e| e["kind"] == "memory").unwrap();
    assert_eq!(
        (memory["agent"].as_str(), memory["text"].as_str()),
        (Some("ops"), Some("- on call: Ada"))
    );
    // --agent: that agent's own files and the world only.
    let only = env
        .cmd("axe-export")
        .args(["jsonl", "--agent", "nobody"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let only = String::from_utf8_lossy(&only);
    assert!(
        !only.contains("\"agent\":\"ops\"") && only.contains("world/deploys.md"),
        "{only}"
    );
}

#[test]
fn markdown_is_a_self_contained_folder_and_never_goes_over_files() {
    let env = Env::new();
    notes(&env);
    let dir = env.root().join("export");
    env.cmd("axe-export")
        .args(["markdown", "--output", dir.to_str().unwrap()])
        .assert()
        .success();
    let ws = workspace(&env);
    for rel in ["world/deploys.md", "agents/ops/MEMORY.md"] {
        assert_eq!(read(&dir.join(rel)), read(&ws.join(rel)));
    }
    let index = read(&dir.join("index.md"));
    assert!(
        index.contains("- [world/deploys.md](world/deploys.md)"),
        "{index}"
    );
    assert!(index.contains("## Agent ops"), "{index}");
    let before = snapshot(&dir);
    env.cmd("axe-export")
        .args(["markdown", "--output", dir.to_str().unwrap()])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("is not empty"));
    assert_eq!(snapshot(&dir), before);
    env.cmd("axe-export").arg("markdown").assert().code(1);
    env.cmd("axe-export").arg("yaml").assert().code(1);
    let _ = fs::remove_dir_all(&dir);
}

/// Runs `axe-export markdown --output DIR` (DIR made empty first) and,
/// once it has checked DIR and waits at its test gate, lets `plant` put
/// what it likes in DIR: what a user who can write there does meanwhile.
fn export_with_plant(env: &Env, dir: &Path, plant: impl FnOnce(&Path)) -> std::process::Output {
    use std::os::unix::fs::OpenOptionsExt;
    fs::create_dir(dir).unwrap();
    let fifo = env
        .root()
        .join(format!("gate-{}", dir.file_name().unwrap().display()));
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let mut cmd = env.std_cmd("axe-export");
    cmd.env("AXE_TEST_EXPORT_GATE", &fifo)
        .args(["markdown", "--output"])
        .arg(dir);
    let running = std::thread::spawn(move || cmd.output().unwrap());
    // The FIFO opens for writing once the export waits at the gate, DIR
    // checked (until then there is no reader: ENXIO).
    let since = std::time::Instant::now();
    let gate = loop {
        let open = fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo);
        match open {
            Ok(gate) => break gate,
            Err(_) if since.elapsed() < crate::server::PATIENCE => {
                std::thread::sleep(std::time::Duration::from_millis(5))
            }
            Err(e) => panic!("the export never reached the gate: {e}"),
        }
    };
    // DIR was empty when checked: what is in it now came meanwhile.
    assert_eq!(fs::read_dir(dir).unwrap().count(), 0);
    plant(dir);
    drop(gate);
    running.join().unwrap()
}

/// A link put in the export's folder while it runs is never written
/// through: not as index.md (a root-owned file was overwritten that way),
/// not as a folder the notes go in.
#[test]
fn markdown_never_writes_through_a_link_planted_meanwhile() {
    use std::os::unix::fs::symlink;
    let env = Env::new();
    notes(&env);
    let victim = env.root().join("victim");
    fs::write(&victim, "keep").unwrap();
    let outside = env.root().join("outside");
    fs::create_dir(&outside).unwrap();
    let index = env.root().join("index-planted");
    let out = export_with_plant(&env, &index, |dir| {
        symlink(&victim, dir.join("index.md")).unwrap();
    });
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("index.md"), "{stderr}");
    // Every note was written; only the index was refused.
    assert_eq!(
        read(&index.join("world/deploys.md")),
        read(&workspace(&env).join("world/deploys.md"))
    );
    let folders = env.root().join("folders-planted");
    let out = export_with_plant(&env, &folders, |dir| {
        symlink(&outside, dir.join("world")).unwrap();
        symlink(&outside, dir.join("agents")).unwrap();
        symlink(&victim, dir.join("index.md")).unwrap();
    });
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("leads outside"), "{stderr}");
    assert_eq!(
        fs::read(&victim).unwrap(),
        b"keep",
        "written through a link"
    );
    assert_eq!(
        fs::read_dir(&outside).unwrap().count(),
        0,
        "written outside"
    );
}

/// A folder another user owns (one they made in /tmp before us) is
/// theirs to change under the export: refused, nothing written in it.
/// Root makes such a folder; without root the test says it skipped.
#[test]
fn markdown_refuses_a_folder_another_user_owns() {
    if !rustix::process::geteuid().is_root() {
        crate::util::unavailable(
            "not root: no folder of another user to make",
            "run the tests as root, as CI does",
        );
        return;
    }
    let env = Env::new();
    notes(&env);
    let dir = env.root().join("theirs");
    fs::create_dir(&dir).unwrap();
    std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
    env.cmd("axe-export")
        .args(["markdown", "--output", dir.to_str().unwrap()])
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "belongs to another user (uid 65534)",
        ));
    assert_eq!(fs::read_dir(&dir).unwrap().count(), 0);
    // A folder of one's own, even a new one, is taken.
    let mine = env.root().join("mine/new");
    env.cmd("axe-export")
        .args(["markdown", "--output", mine.to_str().unwrap()])
        .assert()
        .success();
    assert!(mine.join("index.md").is_file());
}

/// The server keys an entity by its name, and an agent's MEMORY.md goes
/// out as an entity named after the agent: a world topic of the same name
/// must still come back as the topic, and the MEMORY.md as the MEMORY.md,
/// not the one's lines added to the other's.
#[test]
fn a_world_topic_named_as_an_agent_comes_back_apart_from_its_memory() {
    let env = Env::new();
    let ws = workspace(&env);
    env.write(&ws.join("world/ops.md"), "# Ops\n\nThe team on call.\n");
    env.write(&ws.join("agents/ops/MEMORY.md"), "- on call: Ada\n");
    let file = env.root().join("graph.jsonl");
    env.cmd("axe-export")
        .args(["mcp-memory", "--output", file.to_str().unwrap()])
        .assert()
        .success();
    let back = Env::new();
    back.cmd("axe-import")
        .args(["mcp-memory", file.to_str().unwrap()])
        .assert()
        .success();
    assert_eq!(snapshot(&workspace(&back)), snapshot(&ws));
}

/// `time` is RFC 3339 or null: a daily log's entry whose heading is no
/// time of day (`## 25:99`), or in a file whose name is no day, has none
/// rather than a string jq's `fromdate` and Nushell's `into datetime`
/// refuse.
#[test]
fn jsonl_times_are_rfc_3339_or_null() {
    let env = Env::new();
    let ws = workspace(&env);
    env.write(
        &ws.join("agents/ops/daily/2026-11-20.md"),
        "# 2026-11-20\n\n## 09:30\n\ngood\n\n## 25:99\n\nno such time\n",
    );
    env.write(
        &ws.join("agents/ops/daily/notes.md"),
        "# notes\n\n## 10:00\n\nno such day\n",
    );
    let out = env
        .cmd("axe-export")
        .args(["jsonl", "--workspace", ws.to_str().unwrap()])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let times: Vec<(String, Value)> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|e| (e["text"].as_str().unwrap().to_owned(), e["time"].clone()))
        .collect();
    assert_eq!(
        times,
        [
            ("good".to_owned(), json!("2026-11-20T09:30:00Z")),
            ("no such time".to_owned(), Value::Null),
            ("no such day".to_owned(), Value::Null),
        ]
    );
}
