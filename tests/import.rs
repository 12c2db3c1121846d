//! `axe-import`: each source laid out as its tool writes it, merged into
//! a real notes workspace; a second import changes nothing; a note that
//! differs is kept and the import written beside it (exit 7); hostile
//! input is named and left out, the rest imported. The reference MCP
//! memory server, driven by the official SDK (`tests/mcp/memory.cjs`),
//! writes the JSONL imported; without it (`tests/mcp/install`) those
//! tests say they skipped, and fail under `AXE_TEST_ALL`.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::mcp_sdk::{HOW, sdk_dir};
use crate::util::{Env, have, read, unavailable};

const GITHUB: &str = "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";

/// The default notes workspace of a test's world.
pub fn workspace(env: &Env) -> PathBuf {
    env.data_dir().join("axe/notes")
}

pub fn home(env: &Env) -> PathBuf {
    env.root().join("home")
}

/// Every file under `dir` and its bytes: what "changes nothing, byte for
/// byte" compares.
pub fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                out.insert(rel, fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// The reference memory server's entry point and a `NODE_PATH` finding
/// the SDK; `None`, reported, when either is not installed.
pub fn memory_server() -> Option<(PathBuf, OsString)> {
    if !have("node") {
        return None;
    }
    let script =
        sdk_dir().join("servers/node_modules/@modelcontextprotocol/server-memory/dist/index.js");
    let sdk = sdk_dir().join("node/node_modules");
    if !script.is_file() || !sdk.join("@modelcontextprotocol/sdk").is_dir() {
        unavailable(
            &format!(
                "{} or the TypeScript SDK is not installed",
                script.display()
            ),
            HOW,
        );
        return None;
    }
    Some((script, sdk.into_os_string()))
}

/// Runs `tests/mcp/memory.cjs MODE` against the server on `file`.
pub fn memory_cjs(
    server: &(PathBuf, OsString),
    mode: &str,
    file: &Path,
    graph: Option<&Value>,
) -> String {
    let cjs = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/memory.cjs");
    let mut cmd = std::process::Command::new("node");
    cmd.env("NODE_PATH", &server.1)
        .arg(cjs)
        .arg(mode)
        .arg(&server.0)
        .arg(file);
    if let Some(g) = graph {
        cmd.arg(g.to_string());
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "memory.cjs {mode}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A markdown vault of `n` notes of about 1,000 bytes each, as a bulk
/// import brings in: `topic-00` … as world topics.
pub fn vault(env: &Env, n: usize) -> PathBuf {
    let vault = env.root().join("vault");
    for i in 0..n {
        let text = format!(
            "# Topic {i}\n\n{}\n",
            "Imported text of the vault. ".repeat(35)
        );
        env.write(&vault.join(format!("topic {i:02}.md")), text);
    }
    vault
}

fn import(env: &Env, args: &[&str]) -> assert_cmd::Command {
    let mut cmd = env.cmd("axe-import");
    cmd.args(args);
    cmd
}

/// What one import printed.
struct Printed {
    stdout: String,
    stderr: String,
}

/// Runs `axe-import ARGS` to its end, which must be exit `code`.
fn imports(env: &Env, args: &[&str], code: i32) -> Printed {
    let out = import(env, args).assert().code(code).get_output().clone();
    Printed {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Importing `args` again (successfully) changes nothing in `ws`, byte
/// for byte.
fn changes_nothing(env: &Env, ws: &Path, args: &[&str]) {
    let before = snapshot(ws);
    imports(env, args, 0);
    assert_eq!(snapshot(ws), before, "importing {args:?} again changed it");
}

/// Asserts that `text` says each of `parts`, naming the one it lacks.
fn says(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "no {part:?} in: {text}");
    }
}

/// A source file `name` in the test's root, holding `content`.
fn source(env: &Env, name: &str, content: impl AsRef<[u8]>) -> PathBuf {
    let path = env.root().join(name);
    env.write(&path, content);
    path
}

/// A path as an argument of the import.
fn arg(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The names of the files under `dir`, in order.
fn names(dir: &Path) -> Vec<String> {
    snapshot(dir).into_keys().collect()
}

/// Claude Code's auto memory for the project `/home/me/src/app`: the
/// project directory is the path with every `/` a `-`, and the memory
/// directory holds MEMORY.md (an index, one line per memory) and a file
/// per memory with `name`, `description` and `type` frontmatter, as
/// Claude Code's memory instructions lay them out
/// (code.claude.com/docs/en/memory, "Auto memory").
pub fn claude_code_project(env: &Env) -> PathBuf {
    let dir = home(env).join(".claude/projects/-home-me-src-app/memory");
    env.write(
        &dir.join("MEMORY.md"),
        "- [User role](user_role.md) — a data scientist new to Rust\n- [Testing](feedback_testing.md) — integration tests hit a real database\n",
    );
    env.write(
        &dir.join("user_role.md"),
        "---\nname: User role\ndescription: a data scientist new to Rust\ntype: user\n---\n\nThe user is a data scientist, new to Rust; explain ownership when it matters.\n",
    );
    env.write(
        &dir.join("feedback_testing.md"),
        "---\nname: Testing\ndescription: integration tests hit a real database\ntype: feedback\n---\n\nIntegration tests must hit a real database, not mocks.\n\n**Why:** a mocked migration passed and prod broke.\n",
    );
    env.write(
        &home(env).join(".claude/CLAUDE.md"),
        "# Me\n\nPrefer small commits.\n",
    );
    dir
}

/// [`claude_code_project`]'s MEMORY.md as imported: each link to a
/// topic file rewritten to the world topic it became.
pub const MEMORY_LINKED: &str = "- [User role](../../world/user-role.md) — a data scientist new to Rust\n- [Testing](../../world/feedback-testing.md) — integration tests hit a real database\n";

/// Given the project folder instead of its `memory/` (the folder a user
/// finds in ~/.claude/projects), the import finds `memory/` in it; a
/// folder holding no memory is refused, naming where it looked (exit 2),
/// where it used to import nothing and succeed; a `memory` that is a
/// symlink is never entered.
#[test]
fn claude_code_finds_memory_in_a_project_folder_or_says_where_it_looked() {
    let env = Env::new();
    let memory = claude_code_project(&env);
    let project = memory.parent().unwrap();
    env.write(&project.join("0b5e.jsonl"), "{}\n");
    imports(&env, &["claude-code", arg(project)], 0);
    let ws = workspace(&env);
    assert_eq!(
        read(&ws.join("agents/home-me-src-app/MEMORY.md")),
        MEMORY_LINKED
    );
    assert!(ws.join("world/user-role.md").is_file());
    // The same project named by its memory folder: nothing new.
    changes_nothing(&env, &ws, &["claude-code", arg(&memory)]);
    let before = snapshot(&ws);

    // A project folder with sessions and no memory.
    let bare = home(&env).join(".claude/projects/-home-me-src-bare");
    env.write(&bare.join("0b5e.jsonl"), "{}\n");
    let out = imports(&env, &["claude-code", arg(&bare)], 2);
    let stderr = out.stderr.as_str();
    says(
        stderr,
        &[&format!(
            "looked for the project's memory folder {}",
            bare.join("memory").display()
        )],
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    // A project whose memory is a link to elsewhere: refused, not entered.
    let outside = env.root().join("elsewhere");
    env.write(&outside.join("MEMORY.md"), "- private index\n");
    let linked = home(&env).join(".claude/projects/-home-me-src-linked");
    fs::create_dir_all(&linked).unwrap();
    std::os::unix::fs::symlink(&outside, linked.join("memory")).unwrap();
    let out = imports(&env, &["claude-code", arg(&linked)], 2);
    let stderr = out.stderr.as_str();
    says(stderr, &["(a symlink, not followed)"]);
    assert_eq!(snapshot(&ws), before, "nothing imported");
}

#[test]
fn claude_code_projects_become_agents_and_world_topics_and_a_second_import_changes_nothing() {
    let env = Env::new();
    let dir = claude_code_project(&env);
    let out = imports(&env, &["claude-code"], 0);
    let ws = workspace(&env);
    let stdout = out.stdout.as_str();
    says(stdout, &["created\t"]);
    // MEMORY.md's links follow the topic files to their new names.
    assert_eq!(
        read(&ws.join("agents/home-me-src-app/MEMORY.md")),
        MEMORY_LINKED
    );
    assert_eq!(
        read(&ws.join("world/user-role.md")),
        read(&dir.join("user_role.md"))
    );
    assert_eq!(
        read(&ws.join("world/feedback-testing.md")),
        read(&dir.join("feedback_testing.md"))
    );
    assert!(
        !ws.join("world/claude-md.md").exists(),
        "CLAUDE.md only when asked"
    );
    let before = snapshot(&ws);
    let again = imports(&env, &["claude-code"], 0);
    assert!(again.stdout.is_empty(), "{}", again.stdout.as_str());
    assert_eq!(snapshot(&ws), before, "a second import changes nothing");
    // --with-claude-md, into an agent named outright.
    imports(
        &env,
        &[
            "claude-code",
            arg(&dir),
            "--agent",
            "app",
            "--with-claude-md",
        ],
        0,
    );
    assert_eq!(
        read(&ws.join("world/claude-md.md")),
        "# Me\n\nPrefer small commits.\n"
    );
    assert_eq!(read(&ws.join("agents/app/MEMORY.md")), MEMORY_LINKED);
    // The agent's own notes then read it: recall shows the imported MEMORY.md.
    let recalled = env
        .cmd("axe-notes-recall")
        .arg("app")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(String::from_utf8_lossy(&recalled).contains("data scientist new to Rust"));
}

/// Without a PATH, every project's memory directory is entered without
/// following a symlink, as the files in it are read: a project, or its
/// `memory`, linked to a folder elsewhere is named and left out, never
/// imported as world topics every agent shares and sync carries.
#[test]
fn claude_code_never_follows_a_linked_project_or_memory_directory() {
    let env = Env::new();
    claude_code_project(&env);
    let outside = env.root().join("elsewhere");
    env.write(&outside.join("MEMORY.md"), "- private index\n");
    env.write(&outside.join("private.md"), "private notes from outside\n");
    let projects = home(&env).join(".claude/projects");
    fs::create_dir_all(projects.join("-home-me-src-linked")).unwrap();
    std::os::unix::fs::symlink(&outside, projects.join("-home-me-src-linked/memory")).unwrap();
    // A relative link that stays inside the projects folder is no better.
    fs::create_dir_all(projects.join("-home-me-src-near")).unwrap();
    std::os::unix::fs::symlink(
        "../-home-me-src-app/memory",
        projects.join("-home-me-src-near/memory"),
    )
    .unwrap();
    let whole = env.root().join("whole");
    env.write(&whole.join("memory/other.md"), "another project's notes\n");
    std::os::unix::fs::symlink(&whole, projects.join("-home-me-src-whole")).unwrap();
    let out = imports(&env, &["claude-code"], 0);
    let stderr = out.stderr.as_str();
    for linked in [
        "-home-me-src-linked/memory",
        "-home-me-src-near/memory",
        "-home-me-src-whole",
    ] {
        assert!(
            stderr.contains(&format!("{linked}: a symlink, not followed; left out")),
            "{linked}: {stderr}"
        );
    }
    let names = names(&workspace(&env));
    assert_eq!(
        names,
        [
            "agents/home-me-src-app/MEMORY.md",
            "world/feedback-testing.md",
            "world/user-role.md"
        ],
        "only the real project's memory"
    );
}

/// Codex's memories folder as Codex's memory prompt lays it out
/// (openai/codex, `codex-rs/core/templates/memories/read_path.md`):
/// `memory_summary.md`, `MEMORY.md` (the registry), `raw_memories.md`,
/// `rollout_summaries/` (a recap per rollout).
#[test]
fn codex_memories_become_the_codex_agents_memory_and_world_topics() {
    let env = Env::new();
    let dir = home(&env).join(".codex/memories");
    env.write(
        &dir.join("MEMORY.md"),
        "# Memory\n\n## Repo: app\n- Build with `cargo build --locked`.\n",
    );
    env.write(
        &dir.join("memory_summary.md"),
        "The user works on app, a Rust CLI.\n",
    );
    env.write(
        &dir.join("raw_memories.md"),
        "- 2026-11-20: prefers ripgrep\n",
    );
    env.write(
        &dir.join("rollout_summaries/2026-11-20T10-00-00-fix-ci.md"),
        "# Fix CI\n\nrollout_path: sessions/2026/11/20/rollout-2026-11-20T10-00-00.jsonl\n\nThe CI cache key was stale.\n",
    );
    imports(&env, &["codex"], 0);
    let ws = workspace(&env);
    assert_eq!(
        read(&ws.join("agents/codex/MEMORY.md")),
        read(&dir.join("MEMORY.md"))
    );
    assert_eq!(
        read(&ws.join("world/codex-memory-summary.md")),
        read(&dir.join("memory_summary.md"))
    );
    assert_eq!(
        read(&ws.join("world/codex-raw-memories.md")),
        read(&dir.join("raw_memories.md"))
    );
    assert!(read(&ws.join("world/codex-rollout-2026-11-20t10-00-00-fix-ci.md")).contains("stale"));
    changes_nothing(&env, &ws, &["codex"]);
}

#[test]
fn the_reference_servers_graph_becomes_world_topics_and_bad_lines_are_named() {
    let Some(server) = memory_server() else {
        return;
    };
    let env = Env::new();
    let file = env.root().join("memory.jsonl");
    memory_cjs(
        &server,
        "write",
        &file,
        Some(&json!({
            "entities": [
                {"name": "John Smith", "entityType": "person", "observations": ["Speaks fluent Spanish", "Graduated in 2019"]},
                {"name": "Anthropic", "entityType": "organization", "observations": ["Makes Claude"]}
            ],
            "relations": [
                {"from": "John Smith", "to": "Anthropic", "relationType": "works_at"},
                {"from": "John Smith", "to": "Ada", "relationType": "knows"}
            ]
        })),
    );
    // A line a person broke by hand, and one more entity after it.
    let mut bytes = fs::read(&file).unwrap();
    bytes.extend_from_slice(b"\n{\"type\":\"entity\",\"name\":\"broken\n{\"type\":\"entity\",\"name\":\"After\",\"entityType\":\"t\",\"observations\":[\"kept\"]}\n");
    fs::write(&file, bytes).unwrap();
    let out = imports(&env, &["mcp-memory", arg(&file)], 0);
    let stderr = out.stderr.as_str();
    says(stderr, &["line 5: not JSON"]);
    let ws = workspace(&env);
    assert_eq!(
        read(&ws.join("world/john-smith.md")),
        "# John Smith\n\nType: person\n\n- Speaks fluent Spanish\n- Graduated in 2019\n\n## Relations\n\n- [[John Smith]] knows [[Ada]]\n- [[John Smith]] works_at [[Anthropic]]\n"
    );
    assert_eq!(
        read(&ws.join("world/anthropic.md")),
        "# Anthropic\n\nType: organization\n\n- Makes Claude\n\n## Relations\n\n- [[John Smith]] works_at [[Anthropic]]\n"
    );
    // A name only a relation gives: its topic holds the relation.
    assert_eq!(
        read(&ws.join("world/ada.md")),
        "# Ada\n\n## Relations\n\n- [[John Smith]] knows [[Ada]]\n"
    );
    assert!(read(&ws.join("world/after.md")).contains("- kept"));
    changes_nothing(&env, &ws, &["mcp-memory", arg(&file)]);
    // The server adds an observation: the topic, unchanged here since,
    // takes it (its lines all in the new text).
    let mut text = read(&file).replace("Makes Claude\"]", "Makes Claude\",\"Based in SF\"]");
    text.push('\n');
    fs::write(&file, text).unwrap();
    imports(&env, &["mcp-memory", arg(&file)], 0);
    assert!(read(&ws.join("world/anthropic.md")).contains("- Makes Claude\n- Based in SF\n"));
}

/// mem0's memories as its API's `get_all` and export return them
/// (docs.mem0.ai, "Get All Memories": `{"results": [{id, memory, hash,
/// metadata, categories, created_at, updated_at, user_id, agent_id}]}`).
#[test]
fn mem0_memories_become_daily_entries_merged_with_what_is_there() {
    let env = Env::new();
    let ws = workspace(&env);
    // alice remembered something herself that day already.
    env.write(
        &ws.join("agents/alice/daily/2026-11-20.md"),
        "# 2026-11-20\n\n## 08:00\n\nMorning standup moved to 9.\n",
    );
    let file = source(&env, "mem0.json", json!({"results": [
            {"id": "b1", "memory": "Prefers vegetarian food", "hash": "x", "metadata": null, "categories": ["food"],
             "created_at": "2026-11-20T09:30:00.123456-08:00", "updated_at": null, "user_id": "alice", "agent_id": null},
            {"id": "b2", "memory": "Is allergic to nuts\n## 12:00 not an entry", "created_at": "2026-11-20T07:15:00Z", "user_id": "alice"},
            {"id": "b3", "memory": "Deploys on Fridays are banned", "created_at": "2026-11-21T10:00:00Z", "user_id": "bob", "agent_id": "ops"},
            {"id": "b4", "memory": "no date"},
            {"id": "b5", "memory": "escapes", "created_at": "2026-11-21T10:00:00Z", "user_id": "../x"}
        ]})
        .to_string(),
    );
    let out = imports(&env, &["mem0", arg(&file)], 0);
    let stderr = out.stderr.as_str();
    says(
        stderr,
        &[
            "memory 4: no \"created_at\"",
            "memory 5: \"../x\" names no agent",
        ],
    );
    assert_eq!(
        read(&ws.join("agents/alice/daily/2026-11-20.md")),
        "# 2026-11-20\n\n## 07:15\n\nIs allergic to nuts\n ## 12:00 not an entry\n\n## 08:00\n\nMorning standup moved to 9.\n\n## 17:30\n\nPrefers vegetarian food\n"
    );
    assert_eq!(
        read(&ws.join("agents/ops/daily/2026-11-21.md")),
        "# 2026-11-21\n\n## 10:00\n\nDeploys on Fridays are banned\n"
    );
    changes_nothing(&env, &ws, &["mem0", arg(&file)]);
    // --agent takes them all.
    imports(&env, &["mem0", arg(&file), "--agent", "all"], 0);
    assert!(read(&ws.join("agents/all/daily/2026-11-21.md")).contains("Deploys on Fridays"));
}

#[test]
fn a_markdown_folder_becomes_world_topics_and_symlinks_and_huge_files_are_left_out() {
    let env = Env::new();
    let vault = env.root().join("vault");
    // basic-memory's note layout: frontmatter, observations, relations.
    let note = "---\ntitle: Coffee Brewing\ntype: note\npermalink: coffee-brewing\ntags:\n- coffee\n---\n\n# Coffee Brewing\n\n## Observations\n- [method] Pour over gives more clarity\n\n## Relations\n- relates_to [[Coffee Beans]]\n";
    env.write(&vault.join("food/Coffee Brewing.md"), note);
    env.write(
        &vault.join("index.md"),
        "# Index\n\n- [[Coffee Brewing]], [brewing](food/Coffee%20Brewing.md#observations)\n",
    );
    env.write(&vault.join(".obsidian/workspace.md"), "hidden");
    env.write(&vault.join("notes.txt"), "not markdown");
    let secret = source(&env, "secret.md", "outside the vault");
    std::os::unix::fs::symlink(&secret, vault.join("leak.md")).unwrap();
    // Past the 16 MiB bound.
    let huge = vault.join("huge.md");
    fs::write(&huge, vec![b'a'; (16 << 20) + 1]).unwrap();
    let out = imports(&env, &["markdown", arg(&vault)], 0);
    let stderr = out.stderr.as_str();
    says(
        stderr,
        &[
            "leak.md: a symlink, not followed",
            "huge.md: larger than the limit of 16 MiB",
        ],
    );
    let ws = workspace(&env);
    assert_eq!(read(&ws.join("world/food-coffee-brewing.md")), note);
    // Links to a note follow it to its new name; one to a note not
    // imported (`[[Coffee Beans]]`) is kept.
    assert_eq!(
        read(&ws.join("world/index.md")),
        "# Index\n\n- [[food-coffee-brewing|Coffee Brewing]], [brewing](food-coffee-brewing.md#observations)\n"
    );
    let names = names(&ws);
    assert_eq!(names, ["world/food-coffee-brewing.md", "world/index.md"]);
}

#[test]
fn a_note_that_differs_is_kept_and_the_import_written_beside_it_with_exit_7() {
    let env = Env::new();
    let ws = workspace(&env);
    env.write(&ws.join("world/index.md"), "# Index\n\nmine\n");
    let vault = env.root().join("vault");
    env.write(&vault.join("index.md"), "# Index\n\ntheirs\n");
    let dry = imports(&env, &["markdown", arg(&vault), "--dry-run"], 7);
    let dry_stderr = dry.stderr;
    assert_eq!(names(&ws), ["world/index.md"]);
    let out = imports(&env, &["markdown", arg(&vault)], 7);
    let stderr = out.stderr.as_str();
    says(stderr, &["index.conflict-import-"]);
    assert_eq!(read(&ws.join("world/index.md")), "# Index\n\nmine\n");
    // A dry run first wrote nothing and said what an import would keep.
    assert!(
        dry_stderr.contains(
            "1 imported text would differ from the notes there: an import would keep it beside it: "
        ) && !dry_stderr.contains("remove the file"),
        "{dry_stderr}"
    );
    let files = snapshot(&ws);
    let conflicts: Vec<_> = files.keys().filter(|k| k.contains(".conflict-")).collect();
    assert_eq!(conflicts.len(), 1, "{files:?}");
    assert_eq!(files[conflicts[0]], b"# Index\n\ntheirs\n");
    // Again: the same conflict, no second file.
    imports(&env, &["markdown", arg(&vault)], 7);
    assert_eq!(snapshot(&ws), files);
    // Recall names it, as it names sync's.
    let recalled = env
        .cmd("axe-notes-recall")
        .arg("a")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert!(String::from_utf8_lossy(&recalled).contains("index.conflict-import-"));
}

#[test]
fn secrets_are_redacted_and_dry_run_lists_every_file_and_writes_nothing() {
    let env = Env::new();
    let dir = home(&env).join(".codex/memories");
    env.write(
        &dir.join("MEMORY.md"),
        format!("- the CI token is {GITHUB}\n"),
    );
    env.write(&dir.join("memory_summary.md"), "summary\n");
    let out = imports(&env, &["codex", "--dry-run"], 0);
    let stdout = out.stdout.as_str();
    let ws = workspace(&env);
    assert!(!ws.exists(), "a dry run writes nothing");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert!(
        lines.iter().any(|l| l.starts_with("would create\t")
            && l.ends_with("/world/codex-memory-summary.md\t8 bytes")),
        "{stdout}"
    );
    let json = imports(&env, &["codex", "--dry-run", "--json"], 0).stdout;
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["dry_run"], true);
    assert_eq!(v["files"].as_array().unwrap().len(), 2);
    assert_eq!(v["redacted"], json!(["agents/codex/MEMORY.md"]));
    imports(&env, &["codex"], 0);
    let memory = read(&ws.join("agents/codex/MEMORY.md"));
    assert!(
        !memory.contains(GITHUB) && memory.contains("the CI token is"),
        "{memory}"
    );
}

#[test]
fn names_that_would_leave_the_workspace_are_refused() {
    let env = Env::new();
    let file = source(
        &env,
        "m.jsonl",
        "{\"type\":\"entity\",\"name\":\"../../../etc/passwd\",\"entityType\":\"t\",\"observations\":[\"x\"]}\n{\"type\":\"entity\",\"name\":\"../evil\",\"entityType\":\"axe-memory\",\"observations\":[\"x\"]}\n",
    );
    let out = imports(&env, &["mcp-memory", arg(&file)], 0);
    assert!(out.stderr.contains("names no agent"));
    let ws = workspace(&env);
    assert_eq!(names(&ws), ["world/etc-passwd.md"]);
    // A workspace whose world/ leads outside: refused, nothing written there.
    let outside = env.root().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::remove_dir_all(ws.join("world")).unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("world")).unwrap();
    let out = import(&env, &["mcp-memory", arg(&file)])
        .assert()
        .failure()
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&out.stderr);
    says(&stderr, &["leads outside"]);
    assert!(fs::read_dir(&outside).unwrap().next().is_none());
    // A JSON source past the 16 MiB bound is refused unread, not imported in part.
    let huge = env.root().join("huge.jsonl");
    fs::write(&huge, vec![b' '; (16 << 20) + 1]).unwrap();
    import(&env, &["mcp-memory", arg(&huge)])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("over the limit of 16 MiB"));
    imports(&env, &["claude-code", "x", "--agent", "../a"], 2);
    imports(&env, &["nope"], 1);
    imports(&env, &["mem0"], 1);
}

#[test]
fn an_import_beside_concurrent_remembers_loses_no_entry() {
    // The import reads, merges and replaces a daily log under the lock
    // every remember takes: whichever order they run in, every entry of
    // both is there after.
    let env = Env::new();
    let today = time::OffsetDateTime::now_utc();
    let day = format!(
        "{:04}-{:02}-{:02}",
        today.year(),
        u8::from(today.month()),
        today.day()
    );
    let memories: Vec<Value> = (0..50)
        .map(|i| {
            json!({"memory": format!("imported {i}"), "created_at": format!("{day}T00:{:02}:00Z", i % 60), "user_id": "a"})
        })
        .collect();
    let file = source(&env, "mem0.json", Value::Array(memories).to_string());
    let children: Vec<std::process::Child> = (0..8)
        .map(|i| {
            env.std_cmd("axe-notes-remember")
                .args(["a", &format!("remembered {i}")])
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    imports(&env, &["mem0", arg(&file)], 0);
    for mut c in children {
        assert!(c.wait().unwrap().success());
    }
    // Every day's log, should a remember fall after midnight.
    let log: String = snapshot(&workspace(&env).join("agents/a/daily"))
        .into_values()
        .map(|b| String::from_utf8(b).unwrap())
        .collect();
    for i in 0..50 {
        assert!(log.contains(&format!("\nimported {i}\n")), "{i}: {log}");
    }
    for i in 0..8 {
        assert!(log.contains(&format!("\nremembered {i}\n")), "{i}: {log}");
    }
}

/// The names a source gives agents (mem0's `user_id`, an `axe-memory`
/// entity's name) become directories synced to every machine, and are
/// printed by `--dry-run` and `--json`: one holding what looks like a
/// secret, a control character or more bytes than a file name may have
/// is named by where it came from and left out, the rest imported; and
/// no line printed, the problems included, holds the secret.
#[test]
fn agent_names_from_a_source_are_checked_and_no_secret_is_printed() {
    let env = Env::new();
    let file = source(
        &env,
        "mem0.json",
        json!([
            {"memory": "kept", "created_at": "2026-11-20T09:30:00Z", "user_id": "alice"},
            {"memory": "token", "created_at": "2026-11-20T09:31:00Z", "user_id": GITHUB},
            {"memory": "newline", "created_at": "2026-11-20T09:32:00Z", "user_id": "bob\nx"},
            {"memory": "long", "created_at": "2026-11-20T09:33:00Z", "user_id": "a".repeat(300)},
            {"memory": "hidden", "created_at": "2026-11-20T09:34:00Z", "user_id": ".git"}
        ])
        .to_string(),
    );
    let graph = source(
        &env,
        "graph.jsonl",
        format!(
            "{{\"type\":\"entity\",\"name\":\"{GITHUB}\",\"entityType\":\"axe-memory\",\"observations\":[\"x\"]}}\n{{\"type\":\"entity\",\"name\":\" {GITHUB}\",\"entityType\":\"t\",\"observations\":[\"x\"]}}\n"
        ),
    );
    let ws = workspace(&env);
    for (source, path) in [("mem0", &file), ("mcp-memory", &graph)] {
        for flags in [&["--dry-run", "--json"][..], &["--dry-run"], &[]] {
            let mut args = vec![source, arg(path)];
            args.extend_from_slice(flags);
            let out = imports(&env, &args, 0);
            let printed = format!("{}{}", out.stdout, out.stderr);
            assert!(!printed.contains("AbCdEfGhIjKl"), "{args:?}: {printed}");
            if source == "mem0" {
                for n in 2..=5 {
                    assert!(printed.contains(&format!("memory {n}: ")), "{n}: {printed}");
                }
            } else {
                assert!(
                    printed.contains("names no agent: it looks like a secret")
                        && printed.contains("line 2: "),
                    "{printed}"
                );
            }
        }
    }
    let agents: Vec<String> = fs::read_dir(ws.join("agents"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(agents, ["alice"]);
    assert!(read(&ws.join("agents/alice/daily/2026-11-20.md")).contains("kept"));
}

/// A file or folder whose name is not UTF-8 cannot name a topic: it is
/// named on stderr (as well as it can be shown) and left out, not passed
/// over in silence; a FIFO named like a note neither hangs the import nor
/// stops it.
#[test]
fn notes_that_cannot_be_imported_are_named_not_passed_over() {
    use std::os::unix::ffi::OsStrExt;
    let env = Env::new();
    let vault = env.root().join("vault");
    env.write(&vault.join("kept.md"), "kept\n");
    let bad = std::ffi::OsStr::from_bytes(b"caf\xe9");
    env.write(&vault.join(bad).with_extension("md"), "latin-1 name\n");
    env.write(&vault.join(bad).join("inner.md"), "in a latin-1 folder\n");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(vault.join("pipe.md"))
            .status()
            .unwrap()
            .success()
    );
    let dir = home(&env).join(".codex/memories");
    env.write(&dir.join("MEMORY.md"), "- registry\n");
    env.write(&dir.join(bad).with_extension("md"), "latin-1 name\n");
    let out = imports(&env, &["markdown", arg(&vault)], 0);
    let stderr = out.stderr.as_str();
    says(
        stderr,
        &[
            "caf\u{fffd}.md: the name is not UTF-8",
            "caf\u{fffd}: the name is not UTF-8",
        ],
    );
    says(stderr, &["pipe.md: not a regular file"]);
    let ws = workspace(&env);
    assert_eq!(read(&ws.join("world/kept.md")), "kept\n");
    let out = imports(&env, &["codex"], 0);
    let stderr = out.stderr.as_str();
    says(stderr, &["caf\u{fffd}.md: the name is not UTF-8"]);
}

/// mem0's dates as a person may have left them: one whose day in UTC is
/// past year 9999 is named and left out (not a panic), as is a malformed
/// one and one without a zone (its day unknown); the rest imported, a
/// future one too.
/// A mem0 user id with a bidi override would name a folder that shows
/// in another order than it has, synced to every machine, and was printed
/// raw: it names no agent, and is shown escaped.
#[test]
fn a_mem0_user_id_with_a_bidi_override_names_no_agent_and_is_shown_escaped() {
    let env = Env::new();
    let file = env.root().join("mem0.json");
    let memories = json!([
        {"memory": "Likes tea", "user_id": "alice\u{202e}gpj.exe", "created_at": "2026-01-02T10:00:00Z"},
        {"memory": "Likes coffee", "user_id": "bob", "created_at": "2026-01-02T11:00:00Z"},
    ]);
    fs::write(&file, memories.to_string()).unwrap();
    let out = import(&env, &["mem0", arg(&file)])
        .assert()
        .success()
        .get_output()
        .clone();
    let (stdout, stderr) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert!(!stdout.contains('\u{202e}') && !stderr.contains('\u{202e}'));
    says(
        &stderr,
        &["\"alice\\u{202e}gpj.exe\" names no agent: it holds a bidi control"],
    );
    says(&stdout, &["agents/bob/daily/2026-01-02.md"]);
    let names = names(&workspace(&env));
    assert_eq!(names, ["agents/bob/daily/2026-01-02.md"]);
}

#[test]
fn mem0_dates_out_of_range_or_without_a_zone_are_named_and_left_out() {
    let env = Env::new();
    let file = source(
        &env,
        "mem0.json",
        json!([
            {"memory": "kept", "created_at": "2026-11-20T09:30:00Z", "user_id": "a"},
            {"memory": "late", "created_at": "9999-12-31T23:59:59-05:00", "user_id": "a"},
            {"memory": "malformed", "created_at": "2026-13-40T00:00:00Z", "user_id": "a"},
            {"memory": "no zone", "created_at": "2026-11-20T09:30:00", "user_id": "a"},
            {"memory": "future", "created_at": "2999-01-01T00:00:00+01:00", "user_id": "a"}
        ])
        .to_string(),
    );
    let out = imports(&env, &["mem0", arg(&file)], 0);
    let stderr = out.stderr.as_str();
    says(stderr, &["memory 2: \"created_at\" is out of range in UTC"]);
    for n in 3..=4 {
        assert!(
            stderr.contains(&format!(
                "memory {n}: \"created_at\" is not an RFC 3339 time with a zone"
            )),
            "{n}: {stderr}"
        );
    }
    let ws = workspace(&env);
    assert!(read(&ws.join("agents/a/daily/2026-11-20.md")).contains("kept"));
    assert_eq!(
        read(&ws.join("agents/a/daily/2998-12-31.md")),
        "# 2998-12-31\n\n## 23:00\n\nfuture\n"
    );
}

/// A graph as large as the bound lets in (16 MiB holds some 100,000
/// entities) is read in one pass: each entity and relation is found by
/// its name, not compared with every one before it. 40,000 entities and
/// their relations took 80 s of comparisons; the bound below is many
/// times what one pass takes on a loaded machine.
#[test]
fn a_large_graph_is_imported_in_one_pass() {
    let env = Env::new();
    let n = 40_000;
    let mut jsonl = String::new();
    for i in 0..n {
        jsonl.push_str(&format!(
            "{{\"type\":\"entity\",\"name\":\"e{i}\",\"entityType\":\"t\",\"observations\":[\"x\"]}}\n"
        ));
    }
    for i in 0..n {
        jsonl.push_str(&format!(
            "{{\"type\":\"relation\",\"from\":\"e{i}\",\"to\":\"e{}\",\"relationType\":\"r\"}}\n",
            (i + 1) % n
        ));
    }
    let file = source(&env, "big.jsonl", jsonl);
    let out = import(&env, &["mcp-memory", arg(&file), "--dry-run", "--json"])
        .timeout(std::time::Duration::from_secs(30))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["files"].as_array().unwrap().len(), n);
    assert_eq!(v["problems"], json!([]));
}

/// A mem0 export of many memories of one day becomes that day's log in
/// one pass, the same log as merging them one by one would make (each
/// once, in time order): 20,000 memories took six minutes merged one at
/// a time.
#[test]
fn a_day_of_many_mem0_memories_is_one_log_made_in_one_pass() {
    let env = Env::new();
    let n = 20_000;
    let memories: Vec<Value> = (0..n)
        .map(|i| {
            json!({"memory": format!("memory {i}"), "created_at": format!("2026-11-20T{:02}:{:02}:00Z", (i / 60) % 24, i % 60), "user_id": "a"})
        })
        .chain(std::iter::once(
            json!({"memory": "memory 0", "created_at": "2026-11-20T00:00:59Z", "user_id": "a"}),
        ))
        .collect();
    let file = source(&env, "mem0.json", Value::Array(memories).to_string());
    import(&env, &["mem0", arg(&file)])
        .timeout(std::time::Duration::from_secs(30))
        .assert()
        .success();
    let log = read(&workspace(&env).join("agents/a/daily/2026-11-20.md"));
    assert_eq!(log.matches("\n## ").count(), n, "the repeated memory once");
    // 00:00 holds memories 0, 1440, 2880, ... in the file's order.
    assert!(
        log.starts_with("# 2026-11-20\n\n## 00:00\n\nmemory 0\n\n## 00:00\n\nmemory 1440\n"),
        "{}",
        &log[..200]
    );
    assert!(
        log.ends_with("## 23:59\n\nmemory 18719\n"),
        "{}",
        &log[log.len() - 200..]
    );
}

/// Many notes that differ from what is imported: each conflict is looked
/// for among the files beside its note from one listing of their folder,
/// not a listing per conflict (20,000 took seven minutes).
#[test]
fn many_conflicts_list_their_folder_once() {
    let env = Env::new();
    let world = workspace(&env).join("world");
    fs::create_dir_all(&world).unwrap();
    let n = 20_000;
    let mut jsonl = String::new();
    for i in 0..n {
        fs::write(world.join(format!("e{i}.md")), format!("# e{i}\n\nmine\n")).unwrap();
        jsonl.push_str(&format!(
            "{{\"type\":\"entity\",\"name\":\"e{i}\",\"entityType\":\"t\",\"observations\":[\"theirs\"]}}\n"
        ));
    }
    let file = source(&env, "graph.jsonl", jsonl);
    let out = import(&env, &["mcp-memory", arg(&file), "--dry-run", "--json"])
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .code(7)
        .get_output()
        .stdout
        .clone();
    let v: Value = serde_json::from_slice(&out).unwrap();
    let files = v["files"].as_array().unwrap();
    assert_eq!(files.len(), n);
    assert!(files.iter().all(|f| f["action"] == "conflict"));
}

/// A file saved by an editor that starts it with a byte order mark (and
/// ends its lines with CRLF) is the same JSON: its first entity or its
/// whole list is not refused for the mark.
#[test]
fn a_byte_order_mark_does_not_cost_the_first_line() {
    let env = Env::new();
    let graph = source(
        &env,
        "graph.jsonl",
        "\u{feff}{\"type\":\"entity\",\"name\":\"First\",\"entityType\":\"t\",\"observations\":[\"x\"]}\r\n{\"type\":\"entity\",\"name\":\"Second\",\"entityType\":\"t\",\"observations\":[\"y\"]}\r\n",
    );
    let out = imports(&env, &["mcp-memory", arg(&graph)], 0);
    assert!(out.stderr.is_empty(), "{}", out.stderr.as_str());
    let ws = workspace(&env);
    assert!(read(&ws.join("world/first.md")).contains("- x"));
    assert!(read(&ws.join("world/second.md")).contains("- y"));
    let mem0 = source(
        &env,
        "mem0.json",
        "\u{feff}[{\"memory\": \"kept\", \"created_at\": \"2026-11-20T09:30:00Z\", \"user_id\": \"a\"}]\r\n",
    );
    imports(&env, &["mem0", arg(&mem0)], 0);
    assert!(read(&ws.join("agents/a/daily/2026-11-20.md")).contains("kept"));
}

/// Two of Claude Code's projects each with a `debugging.md` of its own:
/// both are world topic `debugging`. The second is not dropped: it merges
/// with the first as with a note already there, so a text that differs is
/// kept beside it (exit 7), and a dry run says so before anything is
/// written. Importing again changes nothing.
#[test]
fn two_sources_of_one_topic_are_merged_not_dropped() {
    let env = Env::new();
    let projects = home(&env).join(".claude/projects");
    env.write(
        &projects.join("-home-me-a/memory/debugging.md"),
        "# Debugging\n\nrun with RUST_LOG=debug\n",
    );
    env.write(
        &projects.join("-home-me-b/memory/debugging.md"),
        "# Debugging\n\nattach gdb to the worker\n",
    );
    let dry = imports(&env, &["claude-code", "--dry-run"], 7).stdout;
    assert!(
        dry.contains("would create\t") && dry.contains("would conflict\t"),
        "{dry}"
    );
    let ws = workspace(&env);
    assert!(!ws.exists());
    imports(&env, &["claude-code"], 7);
    let files = snapshot(&ws);
    assert_eq!(
        files["world/debugging.md"],
        b"# Debugging\n\nrun with RUST_LOG=debug\n"
    );
    let beside: Vec<&Vec<u8>> = files
        .iter()
        .filter(|(k, _)| k.starts_with("world/debugging.conflict-import-"))
        .map(|(_, v)| v)
        .collect();
    assert_eq!(beside, [b"# Debugging\n\nattach gdb to the worker\n"]);
    imports(&env, &["claude-code"], 7);
    assert_eq!(snapshot(&ws), files);
}
