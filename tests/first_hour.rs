//! What a new user meets in the first hour: the README's Quickstart and
//! install lines, run as written in a fresh `HOME`; Nushell for real; the
//! test suite on a machine without the optional programs; and the small
//! things that used to trip people up.

use std::fs;
use std::path::{Path, PathBuf};

use predicates::prelude::*;
use serde_json::{Value, json};

use crate::server::{Answer, Server};
use crate::util::{Env, entries, have, read, stdout};
use crate::wire::{KEY, anthropic_reply, openai_reply, served_by, stream_answer};

fn readme() -> &'static str {
    crate::readme::guide()
}

/// The code block after the `<!-- {marker}` comment, in the README or the
/// guide (docs/guide/*.md).
fn block_after(marker: &str) -> String {
    let readme = readme();
    let start = readme
        .find(&format!("<!-- {marker}"))
        .unwrap_or_else(|| panic!("neither the README nor the guide has a <!-- {marker} block"));
    let body = &readme[start..];
    let open = body.find("```").unwrap();
    let open = open + body[open..].find('\n').unwrap() + 1;
    let close = body[open..].find("```").unwrap();
    body[open..open + close].to_owned()
}

/// Every ```nu block of the README and the guide that is not an install
/// step.
fn nushell_examples() -> Vec<String> {
    let readme = readme();
    let mut examples = Vec::new();
    let mut rest = readme;
    while let Some(at) = rest.find("```nu\n") {
        let before = &rest[..at];
        let body = &rest[at + 6..];
        let end = body.find("```").unwrap();
        if !before.trim_end().ends_with("-->") {
            examples.push(body[..end].to_owned());
        }
        rest = &body[end..];
    }
    examples
}

/// A fresh home with no XDG variables: everything goes where a new user's
/// would, under `~/.config` and `~/.local/share`. `~/.cargo/bin` is first
/// on `PATH` and holds the executables, as after `cargo install`.
fn fresh_home(env: &Env) -> (PathBuf, String) {
    let home = env.root().join("home");
    let bin = home.join(".cargo/bin");
    fs::create_dir_all(&bin).unwrap();
    let built = assert_cmd::cargo::cargo_bin("axe");
    for entry in fs::read_dir(built.parent().unwrap()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if (name == "axe" || name.starts_with("axe-")) && !name.contains('.') {
            std::os::unix::fs::symlink(&path, bin.join(&name)).unwrap();
        }
    }
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    (home, path)
}

/// `program` with `args` in the fresh home.
fn in_home(env: &Env, program: &str, path: &str) -> assert_cmd::Command {
    let mut cmd = env.program(program);
    cmd.env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_DATA_HOME")
        .env("PATH", path);
    cmd
}

// --- the README, as written ---------------------------------------------

#[test]
fn the_quickstart_runs_as_written_and_the_second_run_remembers() {
    let env = Env::new();
    let (home, path) = fresh_home(&env);
    let server = Server::route(|r| {
        let remembered = r.json()["system"]
            .as_str()
            .unwrap_or("")
            .contains("My name is Ada");
        let answer = if remembered {
            "Your name is Ada."
        } else {
            "Nice to meet you, Ada."
        };
        Answer::json(200, &anthropic_reply(answer))
    });
    let out = in_home(&env, "bash", &path)
        .env("AXE_ANTHROPIC_BASE_URL", &server.url)
        .args(["-e", "-c", &block_after("quickstart")])
        .assert()
        .success()
        .get_output()
        .clone();
    let text = stdout(&out);
    assert!(
        text.contains("Nice to meet you, Ada.Your name is Ada."),
        "{text}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].json()["model"], "claude-sonnet-4-20250514");
    let log = read(&home.join(".local/share/axe/memory/helper.md"));
    assert_eq!(crate::util::header_count(&log), 2);
    assert!(text.ends_with(&log), "axe mem load prints the log:\n{text}");
}

#[test]
fn the_bash_install_lines_work_in_a_fresh_home() {
    if !have("bash") {
        return;
    }
    let env = Env::new();
    let (_, path) = fresh_home(&env);
    in_home(&env, "bash", &path)
        .args(["-e", "-c", &block_after("install: bash")])
        .assert()
        .success();
    in_home(&env, "bash", &path)
        .args(["-i", "-c", "complete -p axe-run axe"])
        .assert()
        .success()
        .stdout("complete -F _axe axe-run\ncomplete -F _axe axe\n");
}

#[test]
fn the_man_install_lines_work_in_a_fresh_home() {
    if !have("man") {
        return;
    }
    let env = Env::new();
    let (home, path) = fresh_home(&env);
    let out = in_home(&env, "bash", &path)
        .env("MANWIDTH", "80")
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .args(["-e", "-c", &block_after("install: man")])
        .assert()
        .success()
        .get_output()
        .clone();
    assert!(home.join(".cargo/share/man/man1/axe-gc.1").is_file());
    assert!(stdout(&out).contains("axe-gc - "), "{}", stdout(&out));
}

// --- Nushell --------------------------------------------------------------

/// `nu` in the fresh home, with its config (as a session would load it).
fn nu(env: &Env, path: &str, home: &Path, script: &str) -> assert_cmd::Command {
    let mut cmd = in_home(env, "nu", path);
    let config = home.join(".config/nushell/config.nu");
    if config.exists() {
        cmd.arg("--config").arg(config);
    }
    cmd.args(["-c", script]);
    cmd
}

#[test]
fn the_nushell_module_installs_as_the_readme_says_and_takes_typed_flags() {
    if !have("nu") {
        return;
    }
    let env = Env::new();
    let (home, path) = fresh_home(&env);
    nu(&env, &path, &home, &block_after("install: nushell"))
        .assert()
        .success();
    let agents = home.join(".config/axe/agents");
    fs::create_dir_all(&agents).unwrap();
    fs::write(
        agents.join("reviewer.toml"),
        "name = \"reviewer\"\nmodel = \"anthropic/claude-test\"\n[memory]\nenabled = true\n",
    )
    .unwrap();
    env.write(
        &home.join(".local/share/axe/memory/reviewer.md"),
        entries(5),
    );
    nu(
        &env,
        &path,
        &home,
        "let n = 2; axe-mem-load reviewer --last $n --json | from json | length",
    )
    .assert()
    .success()
    .stdout("2\n");
    nu(
        &env,
        &path,
        &home,
        "axe mem count reviewer --json | from json | get entries",
    )
    .assert()
    .success()
    .stdout("5\n");
    nu(
        &env,
        &path,
        &home,
        "let t = 0.5; axe-run reviewer --dry-run --timeout $t | lines | get 4",
    )
    .assert()
    .success()
    .stdout("Timeout:  0.5s\n");
}

#[test]
fn agent_names_complete_from_nushell() {
    if !have("nu") {
        return;
    }
    let env = Env::new();
    let (home, path) = fresh_home(&env);
    let agents = home.join(".config/axe/agents");
    for name in ["summarizer", "reviewer"] {
        env.write(&agents.join(format!("{name}.toml")), "name = \"x\"\n");
    }
    let module = Path::new(env!("CARGO_MANIFEST_DIR")).join("completions/axe.nu");
    nu(
        &env,
        &path,
        &home,
        &format!(
            "source '{}'; nu-complete axe agents | to json --raw",
            module.display()
        ),
    )
    .assert()
    .success()
    .stdout("[\"reviewer\",\"summarizer\"]\n");
}

#[test]
fn every_nushell_example_in_the_readme_runs() {
    if !have("nu") {
        return;
    }
    let env = Env::new();
    let (home, path) = fresh_home(&env);
    let agents = home.join(".config/axe/agents");
    for name in ["reviewer", "helper"] {
        env.write(
            &agents.join(format!("{name}.toml")),
            format!("name = \"{name}\"\nmodel = \"x/y\"\n[memory]\nenabled = true\n"),
        );
    }
    let log = "## 2026-01-01T00:00:00Z\n**Task:** build\n**Result:** it failed twice\n\n\
               ## 2026-01-01T00:01:00Z\n**Task:** test\n**Result:** green\n\n";
    env.write(&home.join(".local/share/axe/memory/reviewer.md"), log);
    env.write(&home.join(".local/share/axe/memory/helper.md"), entries(3));
    let notes = home.join(".local/share/axe/notes");
    env.write(
        &notes.join("world/deploys.md"),
        "We deploy with blue-green deploys.\n",
    );
    env.write(
        &notes.join("agents/reviewer/MEMORY.md"),
        "Reviews want tests.\n",
    );
    let module = Path::new(env!("CARGO_MANIFEST_DIR")).join("completions/axe.nu");
    let examples = nushell_examples();
    let lines: Vec<&str> = examples
        .iter()
        .flat_map(|e| e.lines())
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .collect();
    assert!(lines.len() >= 2, "{examples:?}");
    for line in lines {
        let script = format!("use '{}' *\n{line}", module.display());
        let out = nu(&env, &path, &home, &script)
            .assert()
            .success()
            .get_output()
            .clone();
        assert!(!stdout(&out).trim().is_empty(), "{line}: no output");
    }
}

// --- the test suite without the optional programs --------------------------

#[test]
fn tests_needing_missing_programs_say_so_and_pass() {
    // The inner run below must not start another.
    if std::env::var_os("AXE_TEST_INNER").is_some() {
        return;
    }
    let hidden = ["zsh", "fish", "nu", "groff", "mandoc", "man"];
    let env = Env::new();
    let bin = env.root().join("path");
    fs::create_dir(&bin).unwrap();
    for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap()) {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let link = bin.join(&name);
            if hidden.contains(&name.to_string_lossy().as_ref()) || link.exists() {
                continue;
            }
            let _ = std::os::unix::fs::symlink(entry.path(), link);
        }
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "completion::",
            "generated::",
            "first_hour::",
            "--test-threads",
            "2",
        ])
        .env("PATH", &bin)
        .env("AXE_TEST_INNER", "1")
        .env_remove("AXE_TEST_ALL")
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{all}");
    for program in hidden {
        assert!(
            all.contains(&format!("skipped: {program} is not on PATH")),
            "no skip reported for {program}:\n{all}"
        );
    }
    assert!(all.contains(" 0 failed"), "{all}");
}

// --- the task, the model's settings ---------------------------------------

#[test]
fn the_task_can_be_words_then_stdin() {
    let env = Env::new();
    env.agent_file("a").prompt("Persona.").memory("").write();
    let server = Server::start(vec![Answer::json(200, &anthropic_reply("4"))]);
    served_by(env.cmd("axe"), &server.url)
        .args(["run", "a", "what", "is 2+2"])
        .write_stdin("")
        .assert()
        .success()
        .stdout("4");
    served_by(env.cmd("axe-run"), &server.url)
        .args(["a", "review this:"])
        .write_stdin("diff\n")
        .assert()
        .success();
    let users: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r.json()["messages"][0]["content"].clone())
        .collect();
    assert_eq!(
        users,
        [json!("what is 2+2"), json!("review this:\n\ndiff\n")]
    );
    let log = read(&env.log_path("a"));
    assert!(log.contains("**Task:** what is 2+2\n"), "{log}");
    assert!(log.contains("**Task:** review this:  diff \n"), "{log}");
}

#[test]
fn system_temperature_and_max_tokens_for_one_run() {
    let env = Env::new();
    env.agent_file("a")
        .prompt("Persona.")
        .toml("[params]\ntemperature = 0.7\nmax_tokens = 100\n")
        .write();
    let server = Server::start(vec![Answer::json(200, &anthropic_reply("ok"))]);
    served_by(env.cmd("axe-run"), &server.url)
        .args([
            "a",
            "-s",
            "Terse.",
            "--temperature",
            "0",
            "--max-tokens",
            "7",
            "go",
        ])
        .assert()
        .success();
    served_by(env.cmd("axe-run"), &server.url)
        .args(["a", "go"])
        .assert()
        .success();
    let bodies: Vec<Value> = server.requests().iter().map(|r| r.json()).collect();
    assert_eq!(bodies[0]["system"], "Terse.");
    assert_eq!(
        bodies[0]["temperature"],
        json!(0.0),
        "an explicit 0 is sent"
    );
    assert_eq!(bodies[0]["max_tokens"], 7);
    assert_eq!(bodies[1]["system"], "Persona.");
    assert_eq!(bodies[1]["temperature"], json!(0.7));
    assert_eq!(bodies[1]["max_tokens"], 100);
    env.cmd("axe-run")
        .args([
            "a",
            "--dry-run",
            "--temperature",
            "0.2",
            "--max-tokens",
            "9",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "Params:   temperature=0.2, max_tokens=9\n",
        ));
}

// --- local servers ----------------------------------------------------------

#[test]
fn a_base_url_ending_in_v1_and_no_key_reach_a_local_server() {
    let env = Env::new();
    let server = Server::start(vec![Answer::json(200, &openai_reply("hi"))]);
    for base in [format!("{}/v1", server.url), format!("{}/v1/", server.url)] {
        env.cmd("axe-llm")
            .env("AXE_OPENAI_BASE_URL", &base)
            .args(["-m", "openai/local", "hello"])
            .assert()
            .success()
            .stdout("hi");
    }
    for r in server.requests() {
        assert_eq!(r.path, "/v1/chat/completions");
        assert_eq!(r.header("authorization"), None, "no made-up key");
    }
    // The hosted API still refuses to go without one.
    env.cmd("axe-llm")
        .args(["-m", "openai/gpt-4o", "hello"])
        .assert()
        .code(2)
        .stderr(format!(
            "API key for provider \"openai\" is not configured: OPENAI_API_KEY is not set, and there is no {}\n",
            env.config_dir().join("axe/config.toml").display()
        ));
}

#[test]
fn a_bare_404_names_the_url() {
    let env = Env::new();
    let server = Server::start(vec![Answer::raw(404, "")]);
    env.cmd("axe-llm")
        .env("AXE_OPENAI_BASE_URL", format!("{}/api", server.url))
        .args(["-m", "openai/local", "hello"])
        .assert()
        .code(1)
        .stderr(format!(
            "bad_request: {}/api/v1/chat/completions answered 404 Not Found\n",
            server.url
        ));
}

// --- typos, editors, terminals, numbers -------------------------------------

#[test]
fn typos_in_agent_names_and_subcommands_get_a_suggestion() {
    let env = Env::new();
    env.agent_file("reviewer")
        .prompt("Persona.")
        .memory("")
        .write();
    let near = "agent config not found: reviwer (did you mean \"reviewer\"?)\n";
    for (bin, args) in [
        ("axe-run", &["reviwer"][..]),
        ("axe-gc", &["reviwer"][..]),
        ("axe-agents", &["show", "reviwer"][..]),
    ] {
        env.cmd(bin).args(args).assert().code(2).stderr(near);
    }
    // A memory tool reads the memory of a name without a file, as axe-mcp
    // serves it, but names the agent probably meant.
    env.cmd("axe-mem-load")
        .arg("reviwer")
        .assert()
        .success()
        .stderr("note: no agent file \"reviwer\" (did you mean \"reviewer\"?): using the memory of \"reviwer\", every kind on\n");
    env.cmd("axe-run")
        .arg("zzzzzzzz")
        .assert()
        .code(2)
        .stderr("agent config not found: zzzzzzzz\n");
    env.cmd("axe")
        .args(["mem", "rm", "reviewer"])
        .assert()
        .code(1)
        .stderr("unknown command \"mem rm\" for \"axe\" (did you mean \"mem trim\"?)\n");
}

#[test]
fn agents_init_writes_a_runnable_agent() {
    let env = Env::new();
    env.cmd("axe-agents")
        .args(["init", "helper", "--model", "openai/gpt-4o", "--memory"])
        .assert()
        .success();
    // The template's limits, not the whole log in every prompt forever.
    env.cmd("axe-agents")
        .args(["show", "helper"])
        .assert()
        .success()
        .stdout(
            "Name:           helper\nModel:          openai/gpt-4o\nMemory Enabled: true\n\
             Memory LastN:   10\nMemory MaxEntries:100\n",
        );
    env.cmd("axe-agents")
        .args(["init", "other", "--model", "gpt4"])
        .assert()
        .code(1)
        .stderr("invalid model format \"gpt4\": expected provider/model-name\n");
    assert!(!env.config_dir().join("axe/agents/other.toml").exists());
}

#[test]
fn agents_init_turns_notes_and_state_on() {
    let env = Env::new();
    env.cmd("axe-agents")
        .args(["init", "n", "-m", "ollama/llama3", "--notes", "--state"])
        .assert()
        .success();
    let out = env
        .cmd("axe-agents")
        .args(["show", "n", "--json"])
        .assert()
        .success()
        .get_output()
        .clone();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["notes"]["enabled"], true);
    assert_eq!(doc["state"]["enabled"], true);
    assert_eq!(doc["memory"]["enabled"], false, "only what was asked");
    assert_eq!(doc["model"], "ollama/llama3");
}

#[test]
fn default_model_in_config_toml() {
    let env = Env::new();
    let server = Server::start(vec![Answer::json(200, &openai_reply("hi"))]);
    let config = env.config_dir().join("axe/config.toml");
    env.write(&config, "default_model = \"openai/house\"\n");
    // axe-llm without -m uses it...
    served_by(env.cmd("axe-llm"), &server.url)
        .arg("q")
        .assert()
        .success()
        .stdout("hi");
    assert_eq!(server.only_request().json()["model"], "house");
    // ...and agents init without --model writes it.
    env.cmd("axe-agents").args(["init", "a"]).assert().success();
    let text = fs::read_to_string(env.config_dir().join("axe/agents/a.toml")).unwrap();
    assert!(text.contains("\nmodel = \"openai/house\"\n"), "{text}");
    // A bad one is the config file's error, named as such.
    env.write(&config, "default_model = \"gpt4\"\n");
    for (bin, args) in [("axe-llm", &["q"][..]), ("axe-agents", &["init", "b"][..])] {
        env.cmd(bin).args(args).assert().code(2).stderr(
            "default_model in config.toml: invalid model format \"gpt4\": expected provider/model-name\n",
        );
    }
    assert!(!env.config_dir().join("axe/agents/b.toml").exists());
    // Without one, -m is asked for and the default named.
    env.write(&config, "");
    env.cmd("axe-llm")
        .arg("q")
        .assert()
        .code(1)
        .stderr("missing required flag --model (or set default_model in config.toml)\n");
}

#[test]
fn an_agent_left_with_the_placeholder_model_says_so() {
    let env = Env::new();
    env.cmd("axe-agents")
        .args(["init", "fresh"])
        .assert()
        .success();
    env.cmd("axe-run")
        .args(["fresh", "hi"])
        .assert()
        .code(1)
        .stderr(
            "unsupported provider \"provider\": the agent file's model is still the template's placeholder \"provider/model-name\"; set it to a real one, e.g. anthropic/claude-sonnet-4-20250514\n",
        );
}

#[test]
fn an_answer_on_a_terminal_ends_with_a_newline() {
    if !have("script") {
        return;
    }
    let env = Env::new();
    let server = Server::start(vec![Answer::json(200, &openai_reply("no newline"))]);
    let line = format!(
        "AXE_OPENAI_BASE_URL={} OPENAI_API_KEY={KEY} axe-llm -m openai/m q; echo '<end>'",
        server.url
    );
    let out = env
        .shell("script")
        .args(["-qec", &line, "/dev/null"])
        .assert()
        .success()
        .get_output()
        .clone();
    assert!(
        stdout(&out).contains("no newline\r\n<end>"),
        "{:?}",
        stdout(&out)
    );
}

#[test]
fn token_counts_a_stream_did_not_give_are_null() {
    let env = Env::new();
    // An OpenAI stream without its usage chunk.
    let Answer::Stream {
        content_type, rest, ..
    } = stream_answer("openai", &["hi"])
    else {
        unreachable!()
    };
    let rest: Vec<Vec<u8>> = rest
        .into_iter()
        .filter(|e| !String::from_utf8_lossy(e).contains("usage"))
        .collect();
    let server = Server::start(vec![Answer::Stream {
        content_type,
        first: Vec::new(),
        gate: None,
        rest,
    }]);
    let out = served_by(env.cmd("axe-llm"), &server.url)
        .args(["-m", "openai/m", "--stream", "--json", "q"])
        .assert()
        .success()
        .get_output()
        .clone();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (&doc["input_tokens"], &doc["output_tokens"]),
        (&json!(null), &json!(null))
    );
    assert_eq!(doc["content"], "hi");
}
