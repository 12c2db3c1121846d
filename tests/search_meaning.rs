//! Search by meaning: `axe-notes-search --mode`, its default, the vector
//! cache beside the index (each section embedded once, a torn cache
//! rebuilt), axe-mcp's search_notes ranking the same way; with a tiny
//! model the tests write (random weights: its rankings mean nothing, its
//! files and counts are real), and a paraphrase found with the real
//! all-MiniLM-L6-v2 (tests/embed_model.rs installs it, or skipped).

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::util::Env;

/// The notes: two days of a log and a world topic, five sections.
fn notes(env: &Env) -> PathBuf {
    let ws = env.data_dir().join("axe/notes");
    env.write(
        &ws.join("agents/claude/daily/2026-11-20.md"),
        "## 10:00\nMaya goes hiking in the mountains every Sunday.\n\n\
         ## 11:00\nThe deploy failed because the database migration timed out.\n",
    );
    env.write(
        &ws.join("agents/claude/daily/2026-11-21.md"),
        "## 09:00\nWe bought a new coffee machine for the office.\n\n\
         ## 15:30\nRolled back the canary after the error rate doubled.\n",
    );
    env.write(
        &ws.join("world/deploys.md"),
        "Blue-green deploys, never on Mondays.\n",
    );
    ws
}

const SECTIONS: u64 = 5;

/// The tiny model, written into the test's world.
fn tiny(env: &Env) -> PathBuf {
    let dir = env.root().join("model");
    axe_embed::tiny::write(&dir, 7, axe_embed::Pooling::Mean).unwrap();
    dir
}

/// `axe-notes-search --json` of `args`, with the model `model` if any;
/// its exit code and JSON (null when nothing was printed).
fn search(env: &Env, model: Option<&Path>, args: &[&str]) -> (i32, Value, String) {
    search_with(env, model, &[], args)
}

/// [`search`] with more of the environment set.
fn search_with(
    env: &Env,
    model: Option<&Path>,
    vars: &[(&str, &Path)],
    args: &[&str],
) -> (i32, Value, String) {
    let mut cmd = env.cmd("axe-notes-search");
    cmd.envs(vars.iter().copied());
    if let Some(dir) = model {
        cmd.env("AXE_EMBEDDINGS", dir);
    }
    let out = cmd.arg("--json").args(args).output().unwrap();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    (out.status.code().unwrap(), json, stderr)
}

fn paths(json: &Value) -> Vec<String> {
    json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| format!("{}:{}", r["path"].as_str().unwrap(), r["line"]))
        .collect()
}

/// The pool of vectors (`base`: false) or the base's column (true).
fn vectors_file_of(env: &Env, base: bool) -> PathBuf {
    let root = env.root().join("home/.cache/axe/notes-index");
    for dir in fs::read_dir(&root).unwrap() {
        for f in fs::read_dir(dir.unwrap().path()).unwrap() {
            let f = f.unwrap().path();
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with("vectors-") && name.ends_with(".base") == base {
                return f;
            }
        }
    }
    panic!("no vectors file under {}", root.display());
}

fn vectors_file(env: &Env) -> PathBuf {
    vectors_file_of(env, false)
}

/// The scores of a search's results, best first.
fn scores(json: &Value) -> Vec<f64> {
    json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["score"].as_f64().unwrap())
        .collect()
}

/// `days` logs of `entries` short entries each: more sections than the
/// pool holds, or a search embeds before it keeps what it has.
fn many(env: &Env, days: usize, entries: usize) -> PathBuf {
    let ws = env.data_dir().join("axe/notes");
    for d in 0..days {
        let text: String = (0..entries)
            .map(|e| format!("## {e}\nentry {e} of day {d}: we deploy the search note\n\n"))
            .collect();
        env.write(
            &ws.join(format!("agents/claude/daily/2020-{d:03}.md")),
            text,
        );
    }
    ws
}

#[test]
fn the_base_sections_vectors_are_one_column_kept_across_a_rebuild() {
    // Past 4,096 sections (the pool's bound).
    let env = Env::new();
    let ws = many(&env, 60, 70);
    let sections = 60 * 70;
    let model = tiny(&env);
    let vector = ["--mode", "vector", "--limit", "20", "deploy"];
    let (code, first, err) = search(&env, Some(&model), &vector);
    assert_eq!(code, 0, "{err}");
    let v = &first["vectors"];
    assert_eq!(
        (&v["embedded"], &v["sections"]),
        (&json!(sections), &json!(sections)),
        "{v}"
    );
    assert_eq!(v["folded"], true, "written into the column: {v}");
    let column = vectors_file_of(&env, true);
    let pool = vectors_file_of(&env, false);
    // One byte a number, 12 a row besides: the column is a fraction of
    // what the pool of f32 would be, and the pool is left (almost) empty.
    let dim = 16;
    assert!(fs::metadata(&column).unwrap().len() < (sections * (12 + dim) + 4096) as u64);
    assert!(
        fs::metadata(&pool).unwrap().len() < 4096,
        "{}",
        fs::metadata(&pool).unwrap().len()
    );

    // From the column: nothing embedded, the same cosines to a byte's
    // precision (ties may change places).
    let (_, second, _) = search(&env, Some(&model), &vector);
    let v = &second["vectors"];
    assert_eq!(
        (&v["embedded"], &v["cached"]),
        (&json!(0), &json!(sections)),
        "{v}"
    );
    assert!(v.get("folded").is_none(), "{v}");
    for (a, b) in scores(&first).iter().zip(scores(&second)) {
        assert!((a - b).abs() < 0.02, "{a} {b}");
    }
    // Only the files shown are read: the sections come from the index.
    assert!(
        second["index"]["read"].as_u64().unwrap() <= 20,
        "{}",
        second["index"]
    );

    // The base built again: its sections renumbered, the column made anew
    // from the old one's rows by key; nothing embedded again.
    let out = env
        .cmd("axe-notes-search")
        .arg("--reindex")
        .output()
        .unwrap();
    assert!(out.status.success());
    let (_, third, _) = search(&env, Some(&model), &vector);
    let v = &third["vectors"];
    assert_eq!(
        (&v["embedded"], &v["folded"]),
        (&json!(0), &json!(true)),
        "{v}"
    );
    assert_eq!(third["results"], second["results"]);

    // A new entry: it alone is embedded, into the pool.
    let log = fs::read_dir(ws.join("agents/claude/daily"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut text = fs::read_to_string(&log).unwrap();
    text.push_str("## 23:59\nMaya booked the train to Zurich.\n");
    fs::write(&log, text).unwrap();
    let (_, fourth, _) = search(&env, Some(&model), &vector);
    let v = &fourth["vectors"];
    assert_eq!(
        (&v["embedded"], &v["cached"]),
        (&json!(1), &json!(sections)),
        "{v}"
    );

    // A block of the column damaged: its rows are embedded again (not
    // trusted), the others not, and the column is written whole again.
    let mut bytes = fs::read(&column).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x10;
    fs::write(&column, &bytes).unwrap();
    let (_, fifth, _) = search(&env, Some(&model), &vector);
    let v = &fifth["vectors"];
    let again = v["embedded"].as_u64().unwrap();
    assert!((1..=256).contains(&again), "{v}");
    assert_eq!(v["folded"], true, "{v}");
    let (_, sixth, _) = search(&env, Some(&model), &vector);
    assert_eq!(sixth["vectors"]["embedded"], 0, "{}", sixth["vectors"]);
}

#[test]
fn the_mode_is_lexical_without_a_model_and_hybrid_with_one() {
    let env = Env::new();
    notes(&env);
    let model = tiny(&env);
    let (code, lexical, _) = search(&env, None, &["deploy"]);
    assert_eq!(code, 0);
    assert_eq!(lexical["mode"], "lexical");
    assert!(lexical.get("vectors").is_none(), "{lexical}");

    let (code, hybrid, _) = search(&env, Some(&model), &["deploy"]);
    assert_eq!(code, 0);
    assert_eq!(hybrid["mode"], "hybrid");
    assert_eq!(hybrid["vectors"]["sections"], SECTIONS, "{hybrid}");
    // Both sides fused: every section is a candidate by meaning, so more
    // come back than the two that name the word.
    assert_eq!(paths(&lexical).len(), 2);
    assert_eq!(paths(&hybrid).len(), SECTIONS as usize);
    for p in paths(&lexical) {
        assert!(paths(&hybrid).contains(&p), "{p}");
    }

    // --mode lexical with a model is the search without one.
    let (_, forced, _) = search(&env, Some(&model), &["--mode", "lexical", "deploy"]);
    assert_eq!(forced["mode"], "lexical");
    assert_eq!(forced["results"], lexical["results"]);

    // --mode vector: by meaning alone, scores are cosines.
    let (code, vector, _) = search(&env, Some(&model), &["--mode", "vector", "deploy"]);
    assert_eq!(code, 0);
    assert_eq!(vector["mode"], "vector");
    let first = vector["results"][0]["score"].as_f64().unwrap();
    assert!((-1.0..=1.0).contains(&first), "{vector}");

    // config.toml's [search] embeddings, relative to the config directory.
    env.write(
        &env.config_dir().join("axe/config.toml"),
        "[search]\nembeddings = \"../../model\"\n",
    );
    let (_, configured, _) = search(&env, None, &["deploy"]);
    assert_eq!(configured["mode"], "hybrid", "{configured}");
    assert_eq!(configured["results"], hybrid["results"]);
    // AXE_EMBEDDINGS set empty: none, whatever the file says.
    let mut cmd = env.cmd("axe-notes-search");
    let out = cmd
        .env("AXE_EMBEDDINGS", "")
        .args(["--json", "deploy"])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["mode"], "lexical");
}

/// Without an index (its cache directory inside the workspace, where
/// none is kept) search by meaning reads every file and ranks the same.
#[test]
fn meaning_without_the_index_ranks_the_same() {
    let env = Env::new();
    let ws = notes(&env);
    let model = tiny(&env);
    for mode in ["hybrid", "vector"] {
        let (_, with, _) = search(&env, Some(&model), &["--mode", mode, "deploy"]);
        assert_eq!(with["index"]["used"], true, "{with}");
        let cache = ws.join(".cache");
        let vars = [("XDG_CACHE_HOME", cache.as_path())];
        let (code, without, err) =
            search_with(&env, Some(&model), &vars, &["--mode", mode, "deploy"]);
        assert_eq!(code, 0, "{err}");
        assert_eq!(without["index"]["used"], false, "{without}");
        assert_eq!(without["vectors"]["sections"], SECTIONS, "{without}");
        assert_eq!(paths(&without), paths(&with), "{mode}");
    }
}

#[test]
fn meaning_without_a_model_is_a_usage_error() {
    let env = Env::new();
    notes(&env);
    for mode in ["hybrid", "vector"] {
        let (code, json, stderr) = search(&env, None, &["--mode", mode, "deploy"]);
        assert_eq!(code, 1, "{stderr}");
        assert_eq!(json, Value::Null);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains(&format!("--mode {mode} needs an embedding model"))
                && stderr.contains("AXE_EMBEDDINGS"),
            "{stderr}"
        );
    }
    let (code, _, stderr) = search(&env, None, &["--mode", "semantic", "deploy"]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("give lexical, hybrid or vector"),
        "{stderr}"
    );
    // A model folder that is not one: a config error naming the file.
    let broken = env.root().join("broken");
    fs::create_dir_all(&broken).unwrap();
    let (code, _, stderr) = search(&env, Some(&broken), &["deploy"]);
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("config.json"), "{stderr}");
}

#[test]
fn each_section_is_embedded_once() {
    let env = Env::new();
    let ws = notes(&env);
    let model = tiny(&env);
    let (_, first, _) = search(&env, Some(&model), &["deploy"]);
    let v = &first["vectors"];
    assert_eq!(
        (&v["embedded"], &v["cached"]),
        (&json!(SECTIONS), &json!(0)),
        "{first}"
    );
    assert_eq!(v["saved"], true);
    // The second search embeds nothing: every vector is the cache's.
    let (_, second, _) = search(&env, Some(&model), &["canary"]);
    let v = &second["vectors"];
    assert_eq!(
        (&v["embedded"], &v["cached"]),
        (&json!(0), &json!(SECTIONS)),
        "{second}"
    );
    assert_eq!(v["saved"], false);
    // A new entry: only it is embedded.
    let log = ws.join("agents/claude/daily/2026-11-21.md");
    let mut text = fs::read_to_string(&log).unwrap();
    text.push_str("\n## 18:00\nMaya booked the train to Zurich.\n");
    fs::write(&log, text).unwrap();
    let (_, third, _) = search(&env, Some(&model), &["deploy"]);
    let v = &third["vectors"];
    assert_eq!(
        (&v["embedded"], &v["cached"]),
        (&json!(1), &json!(SECTIONS)),
        "{third}"
    );
    // Another model's vectors are its own: nothing of the first is used.
    let other = env.root().join("other");
    axe_embed::tiny::write(&other, 8, axe_embed::Pooling::Cls).unwrap();
    let (_, fourth, _) = search(&env, Some(&other), &["deploy"]);
    assert_eq!(
        fourth["vectors"]["embedded"],
        json!(SECTIONS + 1),
        "{fourth}"
    );
    assert_ne!(fourth["vectors"]["model"], third["vectors"]["model"]);
}

#[test]
fn a_first_embedding_killed_keeps_what_it_had_written() {
    // 70,000 sections: past the 65,536 a search embeds before it writes
    // them into the column and goes on.
    let env = Env::new();
    many(&env, 100, 700);
    let sections = 100 * 700;
    let model = tiny(&env);
    let out = env
        .cmd("axe-notes-search")
        .env("AXE_EMBEDDINGS", &model)
        .env("AXE_TEST_VECTORS_DIE_AFTER", "66000")
        .args(["--json", "--mode", "vector", "note"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "killed before it saved");
    let (code, after, err) = search(&env, Some(&model), &["--mode", "vector", "note"]);
    assert_eq!(code, 0, "{err}");
    let v = &after["vectors"];
    let cached = v["cached"].as_u64().unwrap();
    assert!(cached >= 65_536, "the checkpoint's vectors were kept: {v}");
    assert_eq!(cached + v["embedded"].as_u64().unwrap(), sections, "{v}");
}

#[test]
fn a_torn_vector_cache_is_rebuilt() {
    let env = Env::new();
    notes(&env);
    let model = tiny(&env);
    let (_, whole, _) = search(&env, Some(&model), &["deploy"]);
    assert_eq!(whole["vectors"]["rebuilt"], true, "none yet");
    let file = vectors_file(&env);
    let bytes = fs::read(&file).unwrap();
    // Cut short, a byte changed, garbage: each found, and rebuilt.
    let mut flipped = bytes.clone();
    flipped[60] ^= 0x40;
    for torn in [
        bytes[..bytes.len() / 2].to_vec(),
        flipped,
        b"garbage".to_vec(),
    ] {
        fs::write(&file, &torn).unwrap();
        let (_, again, _) = search(&env, Some(&model), &["deploy"]);
        let v = &again["vectors"];
        assert_eq!(v["rebuilt"], true, "{again}");
        assert_eq!(v["embedded"], json!(SECTIONS), "{again}");
        assert_eq!(again["results"], whole["results"]);
        assert_eq!(fs::read(&file).unwrap(), bytes, "written whole again");
    }
    // A writer that died mid-write (the test hook leaves half the file
    // where the whole should be): the next search does not trust it.
    fs::remove_file(&file).unwrap();
    let out = env
        .cmd("axe-notes-search")
        .env("AXE_EMBEDDINGS", &model)
        .env("AXE_TEST_VECTORS_TORN", "1")
        .args(["--json", "deploy"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(fs::read(&file).unwrap().len(), bytes.len() / 2);
    let (_, after, _) = search(&env, Some(&model), &["deploy"]);
    assert_eq!(after["vectors"]["rebuilt"], true, "{after}");
    assert_eq!(after["results"], whole["results"]);
}

#[test]
fn search_notes_over_mcp_ranks_as_the_command_does() {
    let env = Env::new();
    notes(&env);
    let model = tiny(&env);
    env.write(
        &env.config_dir().join("axe/config.toml"),
        format!("[search]\nembeddings = {:?}\n", model.display().to_string()),
    );
    let (_, cli, _) = search(&env, None, &["--agent", "claude", "what broke?"]);
    assert_eq!(cli["mode"], "hybrid", "{cli}");
    let mut c = crate::mcp::Client::start(&env, &["claude"]);
    c.initialize();
    let found = c.request(
        "tools/call",
        json!({"name": "search_notes", "arguments": {"query": "what broke?"}}),
    )["result"]
        .clone();
    let got: Vec<String> = found["structuredContent"]["results"]
        .as_array()
        .unwrap_or_else(|| panic!("{found}"))
        .iter()
        .map(|r| format!("{}:{}", r["path"].as_str().unwrap(), r["line"]))
        .collect();
    assert_eq!(got, paths(&cli));
    assert!(got.len() > 1, "{found}");
    c.finish();
}

/// The real model finds what the words cannot: a question sharing no word
/// with its answer.
#[test]
fn a_paraphrase_is_found_by_meaning_with_a_real_model() {
    let Some(model) = crate::embed_model::minilm() else {
        return;
    };
    let env = Env::new();
    notes(&env);
    let question = "How does she unwind outdoors?";
    let (code, lexical, _) = search(&env, None, &[question]);
    let answer = "agents/claude/daily/2026-11-20.md:2";
    assert!(
        code == 1 || !paths(&lexical).contains(&answer.to_owned()),
        "{lexical}"
    );
    let (code, hybrid, _) = search(&env, Some(&model), &[question]);
    assert_eq!(code, 0);
    assert_eq!(paths(&hybrid)[0], answer, "{hybrid}");
}

/// Over HTTP too (stateless requests, each opening the agent's memory
/// afresh): search_notes ranks as the command does.
#[test]
fn search_notes_over_http_ranks_as_the_command_does() {
    let env = Env::new();
    let ws = env.data_dir().join("axe/notes");
    notes(&env);
    // The same notes as the team agent's, where axe-mcp --http serves them.
    let team = crate::mcp_http::team_dir(&env).join("notes");
    fs::create_dir_all(team.join("agents")).unwrap();
    fs::rename(ws.join("agents/claude"), team.join("agents/team")).unwrap();
    fs::rename(ws.join("world"), team.join("world")).unwrap();
    let model = tiny(&env);
    env.write(
        &env.config_dir().join("axe/config.toml"),
        format!("[search]\nembeddings = {:?}\n", model.display().to_string()),
    );
    let team = team.to_str().unwrap();
    let (_, cli, _) = search(&env, None, &["--workspace", team, "what broke?"]);
    assert_eq!(cli["mode"], "hybrid", "{cli}");
    let server = crate::mcp_http::Served::start(&env, &[]);
    for id in 1..=2 {
        let body = crate::mcp_http::stateless(
            id,
            "tools/call",
            json!({"name": "search_notes", "arguments": {"query": "what broke?"}}),
        );
        let a = server.post(
            "team",
            &[
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "search_notes"),
            ],
            &body,
        );
        assert_eq!(a.status, 200, "{a:?}");
        let found = a.json()["result"]["structuredContent"]["results"].clone();
        let got: Vec<String> = found
            .as_array()
            .unwrap_or_else(|| panic!("{a:?}"))
            .iter()
            .map(|r| format!("{}:{}", r["path"].as_str().unwrap(), r["line"]))
            .collect();
        assert_eq!(got, paths(&cli), "request {id}");
    }
}
