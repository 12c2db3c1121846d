//! Every shell example of the README runs as written: each ```sh block is
//! run by bash with `-e` in a world that has what the examples assume (the
//! agents they name, a git repository with a change, the files they read,
//! a local server answering for every provider), and must succeed. A block
//! is left out only when a comment before it says why (`<!-- not run:
//! ... -->`) or names the test that runs it (`<!-- quickstart: run by
//! ... -->`, `<!-- install: ... -->`), so a new example is run unless
//! someone decides otherwise in the README itself.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::server::{Recorded, Server};
use crate::util::{Env, have};
use crate::wire::{reply_for, served_by, stream_answer};

/// The README's ```sh blocks that no comment keeps from running here:
/// (line, script).
fn runnable_blocks() -> Vec<(usize, String)> {
    let readme = include_str!("../README.md");
    let lines: Vec<&str> = readme.lines().collect();
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if !line.starts_with("```") {
            i += 1;
            continue;
        }
        let lang = line.trim_start_matches('`');
        let start = i;
        i += 1;
        let mut body = String::new();
        while i < lines.len() && !lines[i].starts_with("```") {
            body.push_str(lines[i]);
            body.push('\n');
            i += 1;
        }
        i += 1;
        let marked = start > 0 && lines[start - 1].trim_start().starts_with("<!--");
        if lang == "sh" && !marked {
            blocks.push((start + 1, body));
        }
    }
    blocks
}

/// What the local server answers: a reply in the wire format the path asks
/// for, streamed when the request asks for a stream.
fn answer(r: &Recorded) -> crate::server::Answer {
    let provider = match r.path.as_str() {
        p if p.ends_with("/messages") => "anthropic",
        p if p.ends_with("/chat/completions") => "openai",
        p if p.starts_with("/v1beta/models/") => "google",
        _ => "ollama",
    };
    let text = "Two problems: the lock is taken after the read.";
    // Gemini streams from another method; the rest say so in the body.
    let stream = r.path.contains(":streamGenerateContent")
        || serde_json::from_slice::<Value>(&r.body)
            .ok()
            .and_then(|b| b["stream"].as_bool())
            .unwrap_or(false);
    match stream {
        true => stream_answer(provider, &[text]),
        false => crate::server::Answer::json(200, &reply_for(provider, text)),
    }
}

/// The agents, files and programs the examples take for granted.
fn world(env: &Env, work: &Path) {
    let claude = "anthropic/claude-sonnet-4-20250514";
    for (name, extra) in [
        (
            "reviewer",
            "[memory]\nenabled = true\n[notes]\nenabled = true\n",
        ),
        ("pr-reviewer", "[memory]\nenabled = true\nlast_n = 10\n"),
        ("slow-local-agent", "[memory]\nenabled = true\nlast_n = 2\n"),
        ("builder", "[state]\nenabled = true\n"),
    ] {
        let model = match name {
            "slow-local-agent" => "ollama/llama3",
            _ => claude,
        };
        env.agent(
            name,
            &format!(
                "name = \"{name}\"\nmodel = \"{model}\"\nsystem_prompt = \"You review.\"\n{extra}"
            ),
        );
    }
    // The reader of `axe-agents init r3` set a default model.
    fs::write(
        env.config_dir().join("axe/config.toml"),
        format!("default_model = \"{claude}\"\n"),
    )
    .unwrap();
    fs::create_dir_all(work).unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(work)
            .env("HOME", env.root().join("home"))
            .env("GIT_AUTHOR_NAME", "Ada")
            .env("GIT_AUTHOR_EMAIL", "ada@example.org")
            .env("GIT_COMMITTER_NAME", "Ada")
            .env("GIT_COMMITTER_EMAIL", "ada@example.org")
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    fs::write(work.join("lib.rs"), "fn f() {}\n").unwrap();
    git(&["add", "lib.rs"]);
    git(&["commit", "-q", "-m", "Add f"]);
    fs::write(work.join("lib.rs"), "fn f() { g() }\n").unwrap();
    fs::write(work.join("diff"), "- fn f() {}\n+ fn f() { g() }\n").unwrap();
    fs::write(work.join("MEMORY.md"), "Ada reviews Rust.\n").unwrap();
    fs::write(
        work.join("deploys.md"),
        "Deploys are blue-green: the new release goes green, then traffic moves.\n",
    )
    .unwrap();
    fs::write(work.join("task.md"), "Build the parser.\n").unwrap();
    fs::write(work.join("persona.md"), "You answer briefly.\n").unwrap();
    fs::write(work.join("question.txt"), "What is a pipe?\n").unwrap();
    // `llm-review` stands for any program of the reader's that reviews.
    let bin = env.root().join("stub-bin");
    fs::create_dir_all(&bin).unwrap();
    let stub = bin.join("llm-review");
    fs::write(&stub, "#!/bin/sh\ncat >/dev/null\necho 'Looks fine.'\n").unwrap();
    crate::util::set_mode(&stub, 0o755);
}

#[test]
fn every_shell_example_of_the_readme_runs_as_written() {
    if !have("bash") || !have("git") || !have("jq") {
        return;
    }
    let blocks = runnable_blocks();
    assert!(blocks.len() >= 6, "the README lost its examples?");
    let server = Server::route(answer);
    for (line, script) in blocks {
        // Each example in a world of its own, as a reader would try it.
        let env = Env::new();
        let work = env.root().join("repo");
        world(&env, &work);
        // This package's executables first, as after `cargo install`, then
        // the stub, then the system's.
        let bins = assert_cmd::cargo::cargo_bin("axe");
        let path = format!(
            "{}:{}:{}",
            bins.parent().unwrap().display(),
            env.root().join("stub-bin").display(),
            std::env::var("PATH").unwrap()
        );
        let out = served_by(env.program("bash"), &server.url)
            .env("PATH", path)
            // The pipeline example sets `model`; the state example uses it.
            .env("model", "anthropic/claude-sonnet-4-20250514")
            // `axe-agents edit` opens it; here it closes at once.
            .env("EDITOR", "true")
            .current_dir(&work)
            .args(["-e", "-c", &script])
            .timeout(std::time::Duration::from_secs(60))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "README line {line}: exit {:?}\n--- script\n{script}--- stdout\n{}--- stderr\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
