//! The faults users meet, each reproduced in the shape it was found in:
//! a file-size limit, signals in the middle of a trim, streams cut short,
//! odd keys, FIFOs, absurd numbers, control characters, huge bodies.

use std::fs;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use predicates::prelude::*;
use serde_json::json;

use crate::server::{Answer, Server, sse_data, sse_event};
use crate::util::{Env, entries, header_count, read};
use crate::wire::{KEY, anthropic_reply, openai_reply, served_by};

/// `script` in bash, with this package's executables first on `PATH`.
fn bash(env: &Env, script: &str) -> assert_cmd::Command {
    let mut cmd = env.shell("bash");
    cmd.args(["-c", script]);
    cmd
}

/// One line on stderr, with nothing a terminal would act on.
fn one_clean_line(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr).into_owned();
    assert_eq!(text.lines().count(), 1, "one line: {text:?}");
    assert!(
        !text.trim_end_matches('\n').chars().any(char::is_control),
        "control characters: {text:?}"
    );
    text
}

// --- 1. a file-size limit ------------------------------------------------

#[test]
fn a_file_size_limit_fails_the_append_whole_and_the_next_one_is_not_glued_on() {
    let env = Env::new();
    for _ in 0..3 {
        let out = bash(
            &env,
            "ulimit -f 1; head -c 2000 /dev/zero | tr '\\0' x | axe-mem-append --file log.md --task big",
        )
        .assert()
        .code(1)
        .get_output()
        .clone();
        let err = one_clean_line(&out.stderr);
        assert!(err.contains("file too large"), "{err}");
    }
    let log = env.root().join("log.md");
    assert_eq!(fs::read(&log).unwrap(), b"", "nothing of the big entries");
    bash(
        &env,
        "ulimit -f 1; axe-mem-append --file log.md --task small --result ok",
    )
    .assert()
    .success();
    env.cmd("axe-mem-count")
        .args(["--file", "log.md"])
        .assert()
        .success()
        .stdout("1\n");
    assert!(read(&log).ends_with("**Task:** small\n**Result:** ok\n\n"));
}

#[test]
fn a_run_under_a_file_size_limit_answers_warns_and_keeps_the_log() {
    let env = Env::new();
    env.memory_agent("big", "");
    let before = entries(30);
    assert!(before.len() > 1024);
    env.write(&env.log_path("big"), &before);
    let server = Server::start(vec![Answer::json(200, &anthropic_reply("fine"))]);
    let out = served_by(bash(&env, "ulimit -f 1; axe-run big"), &server.url)
        .write_stdin("task")
        .assert()
        .success()
        .stdout("fine")
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("Warning: failed to save memory for \"big\"")
            && err.contains("file too large"),
        "{err}"
    );
    assert_eq!(read(&env.log_path("big")), before);
}

// --- 2. signals during a trim --------------------------------------------

/// A log big enough that copying it takes a while: `n` entries of 1 MB.
fn big_log(path: &Path, n: usize) -> Vec<u8> {
    let mut log = Vec::with_capacity(n << 20);
    for i in 0..n {
        log.extend_from_slice(
            format!(
                "## 2026-01-01T00:00:{:02}Z\n**Task:** t{i}\n**Result:** ",
                i % 60
            )
            .as_bytes(),
        );
        log.resize(log.len() + (1 << 20), b'x');
        log.extend_from_slice(b"\n\n");
    }
    fs::write(path, &log).unwrap();
    log
}

/// Names in `dir` other than `keep`.
fn others(dir: &Path, keep: &str) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != keep)
        .collect();
    names.sort();
    names
}

/// Runs `axe-mem-trim` on `log`, which holds `old`, and sends it `signal`
/// once its temp file is seen: how it ended, from a trim the signal caught
/// mid-write, with the log still `old`. A trim that finished first (the
/// log already new, whole) is undone and run again: the copy of 75 MB
/// takes far longer than the polling, yet at most 20 runs are tried.
fn trim_signalled_mid_write(env: &Env, log: &Path, old: &[u8], signal: &str) -> ExitStatus {
    let dir = log.parent().unwrap();
    for _ in 0..20 {
        let mut child = env
            .std_cmd("axe-mem-trim")
            .args(["--file", log.to_str().unwrap(), "--keep", "75"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        let seen_writing = loop {
            if !others(dir, "log.md").is_empty() {
                break true;
            }
            if child.try_wait().unwrap().is_some() {
                break false;
            }
            if Instant::now() > deadline {
                child.kill().unwrap();
                child.wait().unwrap();
                panic!("the trim neither wrote nor finished");
            }
            sleep(Duration::from_micros(200));
        };
        if seen_writing {
            std::process::Command::new("kill")
                .args([&format!("-{signal}"), &child.id().to_string()])
                .status()
                .unwrap();
        }
        let status = child.wait().unwrap();
        let now = fs::read(log).unwrap();
        if seen_writing && now == old {
            return status;
        }
        // Done before it was seen, or before the signal landed: the log
        // trimmed, whole, nothing beside it.
        let entries = header_count(&String::from_utf8_lossy(&now));
        assert!(
            entries == 75 && old.ends_with(&now),
            "a trim not caught mid-write left {} bytes, {entries} entries",
            now.len()
        );
        assert_eq!(others(dir, "log.md"), Vec::<String>::new());
        fs::write(log, old).unwrap();
    }
    panic!("never caught a trim mid-write in 20 runs");
}

#[test]
fn an_interrupted_trim_removes_its_temp_file_and_leaves_old_or_new() {
    use std::os::unix::process::ExitStatusExt;
    let env = Env::new();
    let dir = env.root().join("logs");
    fs::create_dir(&dir).unwrap();
    let log = dir.join("log.md");
    let old = big_log(&log, 100);
    for (signal, number) in [
        ("INT", libc::SIGINT),
        ("TERM", libc::SIGTERM),
        ("HUP", libc::SIGHUP),
    ] {
        for _ in 0..3 {
            // Each caught mid-write, the old log still in place.
            let status = trim_signalled_mid_write(&env, &log, &old, signal);
            // It died of the signal, after removing its temp file.
            assert_eq!(status.signal(), Some(number), "SIG{signal}: {status:?}");
            assert_eq!(others(&dir, "log.md"), Vec::<String>::new(), "SIG{signal}");
            assert!(fs::read(&log).unwrap() == old, "SIG{signal}");
        }
    }
}

#[test]
fn a_killed_trims_leftover_is_swept_by_the_next_write_to_that_log() {
    let env = Env::new();
    let dir = env.root().join("logs");
    fs::create_dir(&dir).unwrap();
    let log = dir.join("log.md");
    let old = big_log(&log, 100);
    // Killed mid-write, the old log still in place, with no chance to
    // clean up.
    let status = trim_signalled_mid_write(&env, &log, &old, "KILL");
    assert!(!status.success(), "{status:?}");
    let left = others(&dir, "log.md");
    assert_eq!(left, [".log.md.axe-new"]);
    // Another log's write does not touch it...
    env.cmd("axe-mem-append")
        .args([
            "--file",
            dir.join("other.md").to_str().unwrap(),
            "--task",
            "t",
            "--result",
            "r",
        ])
        .assert()
        .success();
    assert!(dir.join(".log.md.axe-new").exists());
    // ...the next append to this one does.
    env.cmd("axe-mem-append")
        .args([
            "--file",
            log.to_str().unwrap(),
            "--task",
            "after",
            "--result",
            "r",
        ])
        .assert()
        .success();
    assert_eq!(others(&dir, "log.md"), ["other.md"]);
    assert!(read(&log).ends_with("**Task:** after\n**Result:** r\n\n"));
}

#[test]
fn a_trim_sweeps_a_leftover_too() {
    let env = Env::new();
    let log = env.root().join("log.md");
    fs::write(&log, entries(5)).unwrap();
    let leftover = env.root().join(".log.md.axe-new");
    fs::write(&leftover, "half a trim").unwrap();
    env.cmd("axe-mem-trim")
        .args(["--file", "log.md", "--keep", "2"])
        .assert()
        .success();
    assert!(!leftover.exists());
    assert_eq!(header_count(&read(&log)), 2);
}

// --- 3. a stream cut between events --------------------------------------

/// One piece of text in each provider's stream format, then the end of
/// the body: no `[DONE]` or finish reason, no `message_stop`, no `done`.
fn cut_stream(provider: &str) -> Answer {
    match provider {
        "anthropic" => Answer::sse(&[
            sse_event(
                "message_start",
                &json!({"type": "message_start", "message": {"model": "claude-test", "usage": {"input_tokens": 3}}}),
            ),
            sse_event(
                "content_block_start",
                &json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ),
            sse_event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "half an"}}),
            ),
        ]),
        "openai" => Answer::sse(&[sse_data(
            &json!({"model": "gpt-test", "choices": [{"index": 0, "delta": {"content": "half an"}, "finish_reason": null}]})
                .to_string(),
        )]),
        _ => Answer::lines(&[
            json!({"model": "llama-test", "message": {"role": "assistant", "content": "half an"}, "done": false}),
        ]),
    }
}

const PROVIDERS: [&str; 3] = ["anthropic", "openai", "ollama"];

#[test]
fn a_stream_cut_before_its_end_is_an_api_error_and_is_not_remembered() {
    let env = Env::new();
    for provider in PROVIDERS {
        env.agent(
            provider,
            &format!("name = \"{provider}\"\nmodel = \"{provider}/m\"\n[memory]\nenabled = true\n"),
        );
        let server = Server::start(vec![cut_stream(provider)]);
        served_by(env.cmd("axe-llm"), &server.url)
            .args(["-m", &format!("{provider}/m"), "--stream", "q"])
            .assert()
            .code(3)
            .stdout("half an")
            .stderr("server: the reply ended before it was complete\n");
        let server = Server::start(vec![cut_stream(provider)]);
        served_by(env.cmd("axe-run"), &server.url)
            .args([provider, "--stream"])
            .write_stdin("task")
            .assert()
            .code(3)
            .stdout("half an")
            .stderr("server: the reply ended before it was complete\n");
        assert!(!env.log_path(provider).exists(), "{provider}: remembered");
    }
}

// --- 4. absurd numbers ---------------------------------------------------

/// Values no flag or field should meet, and none should panic on.
const EXTREMES: &[&str] = &[
    "-1",
    "0",
    "-0",
    "0.0000000001",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "-9223372036854775808",
    "1e20",
    "1e400",
    "-1e400",
    "NaN",
    "inf",
    "-inf",
    "9999-12-31T23:59:59-23:59",
    "0000-01-01T00:00:00+23:59",
    "",
];

/// Ran without a panic, and a failure is one line.
fn no_panic(what: &str, out: &std::process::Output) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(101), "{what}: {err}");
    assert!(out.status.code().is_some(), "{what}: killed");
    assert!(!err.contains("panicked"), "{what}: {err}");
    // A failure says one line, or nothing (a search that found nothing).
    if !out.status.success() {
        assert!(err.lines().count() <= 1, "{what}: {err}");
    }
}

/// A model server for the extreme-value runs: a sub-agent call for a
/// request that offers tools and has not had a tool result yet, else text.
fn delegating_server() -> Server {
    Server::route(|r| {
        let body = r.json();
        let offers = body["tools"].as_array().is_some_and(|t| !t.is_empty());
        let answered = body.to_string().contains("tool_result");
        if offers && !answered {
            Answer::json(
                200,
                &crate::run::tool_use(&[("c1", json!({"agent": "helper", "task": "x"}))]),
            )
        } else {
            Answer::json(200, &anthropic_reply("ok"))
        }
    })
}

#[test]
fn extreme_values_in_every_numeric_flag_never_panic() {
    let env = Env::new();
    env.memory_agent("a", "last_n = 2");
    env.write(&env.log_path("a"), entries(5));
    let server = delegating_server();
    let base = |name: &str| -> Vec<&str> {
        match name {
            "axe-llm" => vec!["-m", "anthropic/claude-test", "hi"],
            "axe-mem-append" => vec!["a", "--task", "t", "--result", "r"],
            "axe" | "axe-config path" | "axe-config init" | "axe-agents list" => vec![],
            _ => vec!["a"],
        }
    };
    let mut runs = 0;
    let all = axe::commands::ALL
        .iter()
        .chain([&&axe::commands::axe::COMMAND]);
    for command in all.flat_map(|c| c.tree()) {
        let mut words: Vec<&str> = command.name.split(' ').collect();
        let program = words.remove(0);
        for flag in command.flags.iter().filter(|f| f.value.is_some()) {
            for value in EXTREMES {
                let long = format!("--{}", flag.long);
                let out = served_by(env.cmd(program), &server.url)
                    .args(&words)
                    .args(base(command.name))
                    .args([long.as_str(), value])
                    // `axe-agents edit --agents-dir` opens the agent.
                    .env("EDITOR", "true")
                    .write_stdin("task")
                    .timeout(Duration::from_secs(20))
                    .output()
                    .unwrap();
                no_panic(&format!("{} {long} {value:?}", command.name), &out);
                runs += 1;
            }
        }
    }
    assert!(runs > 300, "only {runs} runs: the tables lost their flags?");
}

#[test]
fn extreme_values_in_every_numeric_agent_field_never_panic() {
    let env = Env::new();
    env.agent(
        "helper",
        "name = \"helper\"\nmodel = \"anthropic/claude-test\"\n",
    );
    env.write(&env.log_path("a"), entries(5));
    let server = delegating_server();
    let fields = [
        ("sub_agents_config", "max_depth"),
        ("sub_agents_config", "timeout"),
        ("memory", "last_n"),
        ("memory", "max_entries"),
        ("params", "temperature"),
        ("params", "max_tokens"),
    ];
    let values = [
        "-1",
        "0",
        "1",
        "9223372036854775807",
        "-9223372036854775808",
        "0.5",
        "1e308",
        "inf",
        "-inf",
        "nan",
    ];
    let runs: &[&[&str]] = &[
        &["axe-run", "a"],
        &["axe-run", "a", "--dry-run"],
        &["axe-run", "a", "--dry-run", "--json"],
        &["axe-agents", "show", "a"],
        &["axe-agents", "show", "a", "--json"],
        &["axe-mem-load", "a"],
        &["axe-mem-count", "a"],
        &["axe-mem-trim", "a"],
        &["axe-gc", "a", "--dry-run"],
    ];
    for (section, field) in fields {
        for value in values {
            // The field in its section; memory stays enabled.
            let sections = match section {
                "memory" => format!("[memory]\nenabled = true\n{field} = {value}\n"),
                _ => format!("[memory]\nenabled = true\n[{section}]\n{field} = {value}\n"),
            };
            env.agent(
                "a",
                &format!(
                    "name = \"a\"\nmodel = \"anthropic/claude-test\"\nsub_agents = [\"helper\"]\n{sections}"
                ),
            );
            for run in runs {
                let out = served_by(env.cmd(run[0]), &server.url)
                    .args(&run[1..])
                    .write_stdin("task")
                    .timeout(Duration::from_secs(20))
                    .output()
                    .unwrap();
                no_panic(&format!("{section}.{field} = {value}: {run:?}"), &out);
            }
        }
    }
}

#[test]
fn a_retry_after_of_any_size_never_panics() {
    let env = Env::new();
    for wait in ["18446744073709551615", "99999999999999999999999", "-5"] {
        let server = Server::start(vec![
            Answer::json(429, &json!({"error": {"message": "slow down"}}))
                .with_header("retry-after", wait),
        ]);
        let out = served_by(env.cmd("axe-llm"), &server.url)
            .args(["-m", "openai/m", "--retries", "3", "--timeout", "5", "q"])
            .timeout(Duration::from_secs(20))
            .output()
            .unwrap();
        no_panic(wait, &out);
        assert_eq!(out.status.code(), Some(3));
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!(
                "rate_limit: slow down ({}/v1/chat/completions answered 429)\n",
                server.url
            )
        );
    }
}

#[test]
fn every_timeout_takes_fractions_and_refuses_past_a_day() {
    let env = Env::new();
    env.memory_agent("a", "");
    let server = Server::start(vec![Answer::json(200, &anthropic_reply("ok"))]);
    for (bin, args) in [
        ("axe-llm", &["-m", "anthropic/m", "q"][..]),
        ("axe-run", &["a"][..]),
        ("axe-gc", &["a", "--dry-run"][..]),
    ] {
        served_by(env.cmd(bin), &server.url)
            .args(args)
            .args(["--timeout", "0.5"])
            .write_stdin("task")
            .assert()
            .success();
        for huge in [
            "86400.5",
            "1e20",
            "18446744073709551615",
            "9223372036854775807",
        ] {
            served_by(env.cmd(bin), &server.url)
                .args(args)
                .args(["--timeout", huge])
                .assert()
                .code(1)
                .stderr("--timeout cannot exceed 86400 seconds (a day)\n");
        }
    }
    env.cmd("axe-run")
        .args(["a", "--dry-run", "--timeout", "2.5"])
        .assert()
        .success()
        .stdout(predicate::str::contains("Timeout:  2.5s\n"));
    env.agent(
        "slow",
        "name = \"slow\"\nmodel = \"anthropic/m\"\n[sub_agents_config]\ntimeout = 9223372036854775807\n",
    );
    env.cmd("axe-run")
        .args(["slow", "--dry-run"])
        .assert()
        .code(2)
        .stderr("sub_agents_config.timeout cannot exceed 86400\n");
}

// --- 5 and 6. keys as they come from .env files and local servers -------

#[test]
fn keys_with_a_trailing_cr_are_trimmed_and_never_leak() {
    let env = Env::new();
    env.agent(
        "a",
        "name = \"a\"\nmodel = \"openai/m\"\n[memory]\nenabled = true\n",
    );
    // The server strips the CR, as real ones do, and echoes the key back.
    let server = Server::route(|r| {
        let auth = r.header("authorization").unwrap_or_default().to_owned();
        if r.json().to_string().contains("fail") {
            Answer::json(
                401,
                &json!({"error": {"message": format!("bad key: {auth}")}}),
            )
        } else {
            Answer::json(200, &openai_reply(&format!("you sent {auth}")))
        }
    });
    for key in [
        format!("{KEY}\r"),
        format!("  {KEY}\r\n"),
        format!("{KEY}\t"),
    ] {
        let runs: [&[&str]; 4] = [
            &["axe-llm", "-m", "openai/m", "hello"],
            &["axe-llm", "-m", "openai/m", "--json", "fail"],
            &["axe-run", "a", "-v"],
            &["axe-run", "a", "--json"],
        ];
        for run in runs {
            let out = served_by(env.cmd(run[0]), &server.url)
                .env("OPENAI_API_KEY", &key)
                .args(&run[1..])
                .write_stdin("task")
                .output()
                .unwrap();
            let all = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(!all.contains("SECRET"), "{run:?} leaked: {all}");
            assert!(all.contains("[REDACTED]"), "{run:?}: {all}");
        }
        for r in server.requests() {
            assert_eq!(
                r.header("authorization"),
                Some(format!("Bearer {KEY}").as_str())
            );
        }
    }
    assert!(!read(&env.log_path("a")).contains("SECRET"));
    // The same from config.toml.
    env.write(
        &env.config_dir().join("axe/config.toml"),
        format!(
            "[providers.openai]\napi_key = \"{KEY}\\r\\n\"\nbase_url = \"{}\"\n",
            server.url
        ),
    );
    env.cmd("axe-llm")
        .args(["-m", "openai/m", "hello"])
        .assert()
        .success()
        .stdout("you sent Bearer [REDACTED]");
}

#[test]
fn a_key_with_a_line_break_inside_is_refused_without_showing_it() {
    let env = Env::new();
    let server = Server::start(vec![Answer::json(200, &openai_reply("ok"))]);
    let out = served_by(env.cmd("axe-llm"), &server.url)
        .env("OPENAI_API_KEY", "sk-abc\r\nX-Injected: yes")
        .args(["-m", "openai/m", "q"])
        .assert()
        .code(2)
        .get_output()
        .clone();
    let err = one_clean_line(&out.stderr);
    assert_eq!(
        err,
        "API key for provider \"openai\" from OPENAI_API_KEY contains a control character (a line break?)\n"
    );
    assert!(server.requests().is_empty(), "nothing may be sent");
}

#[test]
fn a_short_key_does_not_mangle_answers() {
    let env = Env::new();
    env.agent(
        "a",
        "name = \"a\"\nmodel = \"openai/m\"\n[memory]\nenabled = true\n",
    );
    let server = Server::start(vec![Answer::json(200, &openai_reply("x marks the box"))]);
    env.write(
        &env.config_dir().join("axe/config.toml"),
        format!(
            "[providers.openai]\napi_key = \"x\"\nbase_url = \"{}\"\n",
            server.url
        ),
    );
    env.cmd("axe-run")
        .arg("a")
        .write_stdin("where?")
        .assert()
        .success()
        .stdout("x marks the box");
    assert!(read(&env.log_path("a")).contains("**Result:** x marks the box\n"));
}

// --- 7. FIFOs ------------------------------------------------------------

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn fifos_in_a_workdir_are_skipped_without_waiting() {
    let env = Env::new();
    let work = env.root().join("work");
    fs::create_dir(&work).unwrap();
    fs::write(work.join("notes.md"), "plain").unwrap();
    mkfifo(&work.join("pipe"));
    env.agent(
        "a",
        &format!(
            "name = \"a\"\nmodel = \"anthropic/m\"\nfiles = [\"*\"]\nworkdir = \"{}\"\n",
            work.display()
        ),
    );
    env.cmd("axe-run")
        .args(["a", "--dry-run"])
        .timeout(Duration::from_secs(10))
        .assert()
        .success()
        .stdout(predicate::str::contains("--- Files (1) ---\nnotes.md\n"));
    let server = Server::start(vec![Answer::json(200, &anthropic_reply("ok"))]);
    served_by(env.cmd("axe-run"), &server.url)
        .arg("a")
        .timeout(Duration::from_secs(10))
        .assert()
        .success();
    assert!(
        !server.only_request().json()["system"]
            .to_string()
            .contains("pipe")
    );
}

#[test]
fn a_fifo_as_the_log_is_a_one_line_error_not_a_hang() {
    let env = Env::new();
    let fifo = env.root().join("log.fifo");
    mkfifo(&fifo);
    env.memory_agent("a", &format!("path = \"{}\"", fifo.display()));
    let not_regular = format!("{}: not a regular file\n", fifo.display());
    for (bin, args) in [
        ("axe-mem-load", &["a"][..]),
        ("axe-mem-count", &["a"][..]),
        ("axe-mem-trim", &["a", "--keep", "1"][..]),
        ("axe-mem-append", &["a", "--task", "t", "--result", "r"][..]),
        ("axe-gc", &["a"][..]),
    ] {
        let out = env
            .cmd(bin)
            .args(args)
            .timeout(Duration::from_secs(10))
            .assert()
            .code(1)
            .get_output()
            .clone();
        let err = one_clean_line(&out.stderr);
        assert!(err.ends_with(&not_regular), "{bin}: {err}");
    }
    // A run warns, answers, and goes on.
    let server = Server::start(vec![Answer::json(200, &anthropic_reply("ok"))]);
    let out = served_by(env.cmd("axe-run"), &server.url)
        .arg("a")
        .timeout(Duration::from_secs(10))
        .assert()
        .success()
        .stdout("ok")
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("Warning: failed to load memory for \"a\""),
        "{err}"
    );
    assert!(
        err.contains("Warning: failed to save memory for \"a\""),
        "{err}"
    );
}

// --- 8. huge tasks -------------------------------------------------------

#[test]
fn a_huge_task_is_stored_cut_like_a_result() {
    let env = Env::new();
    env.memory_agent("a", "");
    let server = Server::start(vec![Answer::json(200, &anthropic_reply("done"))]);
    let task = "y".repeat(5 << 20);
    served_by(env.cmd("axe-run"), &server.url)
        .arg("a")
        .write_stdin(task.as_str())
        .assert()
        .success();
    assert_eq!(
        server.only_request().json()["messages"][0]["content"]
            .as_str()
            .map(str::len),
        Some(task.len()),
        "the model still gets the whole task"
    );
    let log = read(&env.log_path("a"));
    assert!(log.contains(&format!(
        "**Task:** {}...\n**Result:** done\n",
        "y".repeat(1000)
    )));
    assert!(log.len() < 1200, "{} bytes", log.len());

    // --task-file: bytes exact up to the cut, even bytes that are not UTF-8.
    let mut bytes = b"\xff\xfe ".to_vec();
    bytes.extend("é".repeat(1500).as_bytes());
    fs::write(env.root().join("task.bin"), &bytes).unwrap();
    let out = env
        .cmd("axe-mem-append")
        .args([
            "--file",
            "cut.md",
            "--task-file",
            "task.bin",
            "--result",
            "r",
            "--json",
        ])
        .assert()
        .success()
        .get_output()
        .clone();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (
            json["truncated"].as_bool(),
            json["task_truncated"].as_bool()
        ),
        (Some(false), Some(true))
    );
    let stored = fs::read(env.root().join("cut.md")).unwrap();
    let mut want = b"**Task:** \xff\xfe ".to_vec();
    want.extend("é".repeat(997).as_bytes());
    want.extend(b"...\n**Result:** r\n\n");
    assert!(stored.ends_with(&want));
}

// --- 9. control characters -----------------------------------------------

#[test]
fn control_characters_from_models_and_arguments_never_reach_the_terminal() {
    let env = Env::new();
    env.agent(
        "boss",
        "name = \"boss\"\nmodel = \"anthropic/m\"\nsub_agents = [\"helper\"]\n",
    );
    env.agent("helper", "name = \"helper\"\nmodel = \"anthropic/m\"\n");
    let evil = "\u{1b}]0;pwned\u{7}\u{1b}[2J\nnext line";
    let server = Server::start(vec![
        Answer::json(
            200,
            &crate::run::tool_use(&[("c1", json!({"agent": "helper", "task": evil}))]),
        ),
        Answer::json(200, &anthropic_reply("helped")),
        Answer::json(200, &anthropic_reply("answer \u{1b}[2J kept")),
    ]);
    let out = served_by(env.cmd("axe-run"), &server.url)
        .args(["boss", "-v"])
        .assert()
        .success()
        .stdout("answer \u{1b}[2J kept")
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains('\u{1b}') && !err.contains('\u{7}'), "{err:?}");
    assert!(
        err.contains("with task: \\x1b]0;pwned\\x07\\x1b[2J\\nnext line\n"),
        "{err}"
    );

    for name in ["a\u{1b}[2Jb", "two\nlines"] {
        let out = env
            .cmd("axe-run")
            .arg(name)
            .assert()
            .code(2)
            .get_output()
            .clone();
        let err = one_clean_line(&out.stderr);
        assert!(err.starts_with("agent config not found: "), "{err}");
    }
    env.memory_agent("a", "");
    let out = env
        .cmd("axe-mem-load")
        .args(["a", "--last", "\u{1b}[31m"])
        .assert()
        .code(1)
        .get_output()
        .clone();
    assert_eq!(
        one_clean_line(&out.stderr),
        "error parsing flag --last: invalid number \"\\x1b[31m\"\n"
    );
}

// --- 10 and 11. odd replies ---------------------------------------------

#[test]
fn openai_replies_without_content_or_tool_calls_are_bad_replies() {
    let env = Env::new();
    env.memory_agent("a", "");
    env.agent(
        "a",
        "name = \"a\"\nmodel = \"openai/m\"\n[memory]\nenabled = true\n",
    );
    for content in [json!(null), json!(42), json!({"text": "x"})] {
        let reply = json!({
            "model": "gpt-test",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        });
        let server = Server::start(vec![Answer::json(200, &reply)]);
        for bin in ["axe-llm", "axe-run"] {
            let args: &[&str] = if bin == "axe-llm" {
                &["-m", "openai/m", "q"]
            } else {
                &["a"]
            };
            served_by(env.cmd(bin), &server.url)
                .args(args)
                .assert()
                .code(3)
                .stdout("")
                .stderr("server: response contains no content\n");
        }
    }
    assert!(!env.log_path("a").exists());
}

#[test]
fn a_huge_error_body_is_cut_to_a_readable_line() {
    let env = Env::new();
    let message = "z".repeat(5 << 20);
    let server = Server::start(vec![Answer::json(
        500,
        &json!({"error": {"message": message}}),
    )]);
    let out = served_by(env.cmd("axe-llm"), &server.url)
        .args(["-m", "openai/m", "q"])
        .assert()
        .code(3)
        .get_output()
        .clone();
    let err = one_clean_line(&out.stderr);
    assert!(err.len() < 1100, "{} bytes", err.len());
    assert!(
        err.starts_with(&format!("server: {}", "z".repeat(100))),
        "{err}"
    );
    let small = Server::start(vec![Answer::json(
        500,
        &json!({"error": {"message": "z".repeat(1500)}}),
    )]);
    served_by(env.cmd("axe-llm"), &small.url)
        .args(["-m", "openai/m", "q"])
        .assert()
        .code(3)
        .stderr(format!(
            "server: {}... (500 more characters) ({}/v1/chat/completions answered 500)\n",
            "z".repeat(1000),
            small.url
        ));
}

// --- 12. ownership -------------------------------------------------------

#[test]
fn a_trim_by_root_keeps_the_logs_owner() {
    use std::os::unix::fs::MetadataExt;
    if !crate::util::running_as_root("owning a file as another user") {
        return;
    }
    let env = Env::new();
    let dir = env.root().join("logs");
    fs::create_dir(&dir).unwrap();
    std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
    let log = dir.join("log.md");
    fs::write(&log, entries(5)).unwrap();
    std::os::unix::fs::chown(&log, Some(65534), Some(65534)).unwrap();
    crate::util::set_mode(&log, 0o640);
    env.cmd("axe-mem-trim")
        .args(["--file", log.to_str().unwrap(), "--keep", "2"])
        .assert()
        .success();
    let meta = fs::metadata(&log).unwrap();
    assert_eq!(
        (meta.uid(), meta.gid(), crate::util::mode(&log)),
        (65534, 65534, 0o640)
    );
    env.unprivileged("axe-mem-append")
        .args([
            "--file",
            log.to_str().unwrap(),
            "--task",
            "mine",
            "--result",
            "still",
        ])
        .assert()
        .success();
    assert_eq!(header_count(&read(&log)), 3);
}

// --- 13. passwords in URLs -----------------------------------------------

#[test]
fn a_password_in_a_base_url_is_never_printed() {
    let env = Env::new();
    let server = Server::start(vec![Answer::json(200, &openai_reply("ok"))]);
    let url = server.url.replace("http://", "http://user:hunter2@");
    let out = env
        .cmd("axe-llm")
        .env("AXE_OPENAI_BASE_URL", &url)
        .env("OPENAI_API_KEY", KEY)
        .args(["-m", "openai/m", "q"])
        .assert()
        .code(2)
        .get_output()
        .clone();
    let err = one_clean_line(&out.stderr);
    assert!(!err.contains("hunter2") && !err.contains("user:"), "{err}");
    assert_eq!(
        err,
        format!(
            "base URL {} for provider \"openai\" has a user name or password in it, which axe does not send: remove it and put the key in OPENAI_API_KEY or api_key\n",
            server.url
        )
    );
    assert!(server.requests().is_empty());
}
