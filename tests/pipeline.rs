//! The README's shell pipeline (`axe-mem-load` -> `axe-llm` ->
//! `axe-mem-append`) against `axe-run`: the same request, the same log.

use std::path::Path;

use serde_json::Value;

use crate::server::{Answer, Server};
use crate::util::{Env, entries, read};
use crate::wire::{anthropic_reply, served_by};

const ANSWER: &str = "Two problems:\n## not a header\n- the lock";
const TASK: &str = "Review this diff:\n+ let x = 1;\n\n";

/// The script under `<!-- pipeline` in the README.
fn readme_pipeline() -> String {
    let readme = crate::readme::guide();
    let start = readme
        .find("<!-- pipeline")
        .expect("README marks its pipeline");
    let body = &readme[start..];
    let open = body.find("```sh\n").unwrap() + "```sh\n".len();
    let close = body[open..].find("```").unwrap();
    body[open..open + close].to_owned()
}

/// A world with the README's agent and a log of three entries.
fn world() -> Env {
    let env = Env::new();
    env.agent(
        "reviewer",
        "name = \"reviewer\"\nmodel = \"anthropic/claude-sonnet-4-20250514\"\n\
         system_prompt = \"You review pull requests.\"\n[memory]\nenabled = true\nlast_n = 2\n",
    );
    env.write(&env.log_path("reviewer"), entries(3));
    env
}

/// The log without the new entry's timestamp.
fn untimed(log: &str) -> String {
    let at = log.rfind("\n## ").unwrap() + 4;
    format!(
        "{}<time>{}",
        &log[..at],
        &log[at + "2026-01-01T00:00:00Z".len()..]
    )
}

#[test]
fn the_readme_pipeline_matches_axe_run() {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_axe-run")).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    let server = Server::start(vec![Answer::json(200, &anthropic_reply(ANSWER))]);

    let by_run = world();
    let out = served_by(by_run.cmd("axe-run"), &server.url)
        .arg("reviewer")
        .write_stdin(TASK)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8(out.stdout).unwrap(), ANSWER);

    let by_pipe = world();
    let work = by_pipe.root().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let out = served_by(by_pipe.program("bash"), &server.url)
        .args(["-euc", &readme_pipeline()])
        .current_dir(&work)
        .env("PATH", path)
        .write_stdin(TASK)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8(out.stdout).unwrap(), ANSWER);

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let bodies: Vec<Value> = requests.iter().map(|r| r.json()).collect();
    assert_eq!(bodies[0], bodies[1], "the same request");
    assert!(bodies[0]["system"].as_str().unwrap().contains("## Memory"));
    assert_eq!(requests[0].headers, requests[1].headers);

    let (a, b) = (
        read(&by_run.log_path("reviewer")),
        read(&by_pipe.log_path("reviewer")),
    );
    assert_eq!(untimed(&a), untimed(&b), "the same log");
    assert!(a.starts_with(&entries(3)) && a.len() > entries(3).len());
}

/// The script under `<!-- while-read` in the README.
fn readme_loop() -> String {
    let readme = crate::readme::guide();
    let start = readme
        .find("<!-- while-read")
        .expect("README marks its while-read loop");
    let body = &readme[start..];
    let open = body.find("```sh\n").unwrap() + "```sh\n".len();
    let close = body[open..].find("```").unwrap();
    body[open..open + close].to_owned()
}

/// The README's loop, with `-n` or with it taken out, run by bash:
/// the user messages the server got.
fn run_loop(script: &str) -> Vec<String> {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_axe-run")).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    let server = Server::route(|_| Answer::json(200, &anthropic_reply("ok")));
    let env = world();
    let work = env.root().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let out = served_by(env.program("bash"), &server.url)
        .args(["-euc", script])
        .current_dir(&work)
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    server
        .requests()
        .iter()
        .map(|r| {
            r.json()["messages"][0]["content"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

#[test]
fn the_readme_while_read_loop_runs_once_per_line_with_no_stdin() {
    let script = readme_loop();
    assert!(script.contains("axe-run -n "), "{script}");
    assert_eq!(
        run_loop(&script),
        ["Review src/a.rs", "Review src/b.rs", "Review src/c.rs"]
    );
    // The trap -n is for: the first run reads the loop's other lines as
    // its standard input, and the loop ends after one run.
    assert_eq!(
        run_loop(&script.replace("axe-run -n ", "axe-run ")),
        ["Review src/a.rs\n\nsrc/b.rs\nsrc/c.rs\n"]
    );
}

#[test]
fn no_stdin_leaves_standard_input_unread_for_axe_llm_and_axe_gc() {
    let server = Server::route(|_| Answer::json(200, &anthropic_reply("ok")));
    let env = world();
    served_by(env.cmd("axe-llm"), &server.url)
        .args(["-n", "-m", "anthropic/claude-test", "hello"])
        .write_stdin("the loop's next line\n")
        .assert()
        .success()
        .stdout("ok");
    let sent = server.only_request().json();
    assert_eq!(sent["messages"][0]["content"], "hello");
    // axe-gc reads no standard input; -n is taken so one loop line
    // serves each of the three.
    served_by(env.cmd("axe-gc"), &server.url)
        .args(["-n", "reviewer", "--dry-run"])
        .write_stdin("the loop's next line\n")
        .assert()
        .success();
}
