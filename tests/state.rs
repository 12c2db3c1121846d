//! Structured state: the `axe-state-*` executables on real state files,
//! signals in and out, the budgeted context, and the promises under
//! corruption, races and kills.

use std::fs;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::{Env, read, stdout};

fn state(env: &Env, bin: &str) -> assert_cmd::Command {
    env.cmd(&format!("axe-state-{bin}"))
}

fn stored(path: &std::path::Path) -> Value {
    serde_json::from_str(&read(path)).unwrap()
}

#[test]
fn ingest_records_signals_reports_the_rest_and_tees_the_text() {
    let env = Env::new();
    env.agent_file("a").state("").write();
    let path = env.state_path("a");
    let output = "Looked around.\n\
        AXE_MEMORY: KEY_FACT Project uses pytest\n\
        AGENTIUM_MEMORY: STEP_PENDING Update integration tests\n\
        AXE_MEMORY: FILE_MODIFIED src/auth.py\n\
        AXE_MEMORY: FILE_MODIFIED src/auth.py\n\
        AXE_MEMORY: KEY_FACT Project uses pytest\n\
        AXE_MEMORY: DECISION Factory pattern for the service\n\
        AXE_MEMORY: ERROR flaky network test\n\
        AXE_MEMORY: GUESS maybe\n\
        AXE_MEMORY: DECISION\n\
        Done.\n";
    let out = state(&env, "ingest")
        .args(["a", "--task", "42", "--phase", "TEST", "--tee"])
        .write_stdin(output)
        .assert()
        .success()
        .stdout("Looked around.\nDone.\n")
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 2, "{err}");
    assert!(
        err.starts_with("axe-state-ingest: line 9: unknown signal type GUESS"),
        "{err}"
    );
    assert!(err.contains("line 10: DECISION has no text"), "{err}");
    let s = stored(&path);
    assert_eq!(s["version"], 1);
    assert_eq!(s["key_facts"], json!(["Project uses pytest"]));
    assert_eq!(s["tasks"]["42"]["phase"], "TEST");
    assert_eq!(
        s["tasks"]["42"]["pending_steps"],
        json!(["Update integration tests"])
    );
    assert_eq!(s["tasks"]["42"]["files_modified"], json!(["src/auth.py"]));
    assert_eq!(
        s["decisions"][0]["description"],
        "Factory pattern for the service"
    );
    assert_eq!(s["errors"][0]["error"], "flaky network test");
    assert_eq!(s["errors"][0]["resolved"], false);

    // STEP_DONE completes the matching pending step, case and spaces aside.
    let doc: Value = serde_json::from_slice(
        &state(&env, "ingest")
            .args(["a", "--task", "42", "--json"])
            .write_stdin("AXE_MEMORY: STEP_DONE  update INTEGRATION tests \nAXE_MEMORY: NOPE x\n")
            .assert()
            .success()
            .get_output()
            .stdout,
    )
    .unwrap();
    assert_eq!(doc["recorded"][0]["kind"], "STEP_DONE");
    assert_eq!(doc["rejected"][0]["line"], 2);
    let s = stored(&path);
    assert_eq!(s["tasks"]["42"]["pending_steps"], json!([]));
    assert_eq!(
        s["tasks"]["42"]["completed_steps"],
        json!(["Update integration tests"])
    );
    // Signals without --task go to the task "main".
    state(&env, "ingest")
        .arg("a")
        .write_stdin("AXE_MEMORY: STEP_PENDING x\n")
        .assert()
        .success();
    assert_eq!(
        stored(&path)["tasks"]["main"]["pending_steps"],
        json!(["x"])
    );
    state(&env, "ingest")
        .args(["a", "--tee", "--json"])
        .assert()
        .code(1)
        .stderr("{\"error\":\"cannot use --tee with --json\",\"exit_code\":1}\n");
}

#[test]
fn record_counts_iterations_and_resolves_errors_on_success() {
    let env = Env::new();
    env.agent_file("a").state("").write();
    let path = env.state_path("a");
    state(&env, "record")
        .args([
            "a",
            "--task",
            "42",
            "--phase",
            "TEST",
            "--failure",
            "--error",
            "TestTokenExpiry failed",
        ])
        .args([
            "--file",
            "auth.go",
            "--file",
            "auth_test.go",
            "--branch",
            "fix-login",
            "--pr",
            "7",
        ])
        .assert()
        .success()
        .stdout("");
    let s = stored(&path);
    assert_eq!(s["iteration"], 1);
    assert_eq!(s["errors"][0]["iteration"], 1);
    assert_eq!(s["errors"][0]["phase"], "TEST");
    assert_eq!(
        s["tasks"]["42"]["files_modified"],
        json!(["auth.go", "auth_test.go"])
    );
    assert_eq!(s["tasks"]["42"]["branch"], "fix-login");
    assert_eq!(s["tasks"]["42"]["pr_number"], "7");
    let doc: Value = serde_json::from_slice(
        &state(&env, "record")
            .args(["a", "--task", "42", "--success", "--json"])
            .assert()
            .success()
            .get_output()
            .stdout,
    )
    .unwrap();
    assert_eq!(doc["iteration"], 2);
    let s = stored(&path);
    assert_eq!(s["errors"][0]["resolved"], true);
    assert_eq!(s["errors"][0]["resolution"], "iteration 2 succeeded");
    assert!(s["last_checkpoint"].as_str().unwrap().ends_with('Z'));
    for (args, err) in [
        (
            &["a", "--task", "42"][..],
            "missing required flag --success (or --failure)\n",
        ),
        (
            &["a", "--success", "--failure", "--task", "t"][..],
            "cannot use both --success and --failure\n",
        ),
    ] {
        state(&env, "record")
            .args(args)
            .assert()
            .code(1)
            .stderr(err);
    }
    state(&env, "record")
        .args(["a", "--success"])
        .assert()
        .code(1)
        .stderr("missing required flag --task\n");
}

#[test]
fn context_keeps_to_its_budget_and_lists_what_it_left_out() {
    let env = Env::new();
    env.agent_file("a").state("context_budget = 120").write();
    state(&env, "ingest")
        .args(["a", "--task", "42", "--phase", "TEST"])
        .write_stdin(format!(
            "AXE_MEMORY: STEP_PENDING Fix the failing test\nAXE_MEMORY: DECISION {}\nAXE_MEMORY: KEY_FACT Go 1.19\n",
            "x".repeat(300)
        ))
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(
        &state(&env, "context")
            .args(["a", "--task", "42", "--json"])
            .assert()
            .success()
            .get_output()
            .stdout,
    )
    .unwrap();
    assert_eq!(doc["budget"], 120);
    assert!(doc["chars"].as_u64().unwrap() <= 120);
    let kinds = |key: &str| -> Vec<String> {
        doc[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["kind"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(kinds("included"), ["task", "fact"]);
    assert_eq!(kinds("left_out"), ["decision"]);
    let text = state(&env, "context")
        .args(["a", "--task", "42"])
        .assert()
        .success();
    assert_eq!(
        stdout(text.get_output()),
        "## Session Memory\n\n### Task: 42 (Phase: TEST)\nPending: Fix the failing test\n\n### Key Facts\n- Go 1.19\n"
    );
    state(&env, "context")
        .args(["a", "--budget", "5"])
        .assert()
        .success()
        .stdout("");
    let shown = state(&env, "show").arg("a").assert().success();
    assert!(
        stdout(shown.get_output()).contains("xxxxxxxxxx"),
        "show has no budget"
    );
}

#[test]
fn a_broken_state_file_is_an_error_and_is_never_reset() {
    let env = Env::new();
    env.agent_file("a").state("").write();
    let path = env.state_path("a");
    for (bad, line) in [
        (&b"{\"iteration\": 3,\n  \"tasks\": [1,"[..], 2),
        (&b"{\"iteration\": 3, \"key_facts\": [\"\xff\"]}"[..], 1),
        (&b"not json"[..], 1),
    ] {
        env.write(&path, bad);
        for (bin, args) in [
            ("show", &["a"][..]),
            ("context", &["a"][..]),
            ("ingest", &["a"][..]),
            ("record", &["a", "--task", "t", "--success"][..]),
        ] {
            let out = state(&env, bin)
                .args(args)
                .write_stdin("AXE_MEMORY: KEY_FACT f\n")
                .assert()
                .code(1)
                .get_output()
                .clone();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.starts_with(&format!(
                    "state file {} is not a valid state: line {line}, column",
                    path.display()
                )),
                "{bin}: {err}"
            );
            assert_eq!(err.lines().count(), 1);
            assert_eq!(fs::read(&path).unwrap(), bad, "{bin} changed a broken file");
        }
    }
    // Fields of a newer version survive a save.
    env.write(
        &path,
        r#"{"version": 3, "iteration": 1, "plan": {"steps": 2}}"#,
    );
    state(&env, "ingest")
        .arg("a")
        .write_stdin("AXE_MEMORY: KEY_FACT kept\n")
        .assert()
        .success();
    let s = stored(&path);
    assert_eq!(
        (s["version"].clone(), s["plan"].clone()),
        (json!(3), json!({"steps": 2}))
    );
    assert_eq!(s["key_facts"], json!(["kept"]));
}

#[test]
fn pruning_drops_the_oldest_decisions_and_reports_it() {
    let env = Env::new();
    env.agent_file("a").state("max_entries = 3").write();
    let path = env.state_path("a");
    let signals: String = (0..5)
        .map(|i| format!("AXE_MEMORY: DECISION d{i}\n"))
        .collect();
    let doc: Value = serde_json::from_slice(
        &state(&env, "ingest")
            .args(["a", "--json"])
            .write_stdin(signals + "AXE_MEMORY: ERROR open problem\n")
            .assert()
            .success()
            .get_output()
            .stdout,
    )
    .unwrap();
    assert_eq!(doc["pruned"], json!({"decisions": 3, "errors": 0}));
    let s = stored(&path);
    let kept: Vec<&str> = s["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["description"].as_str().unwrap())
        .collect();
    assert_eq!(kept, ["d3", "d4"]);
    assert_eq!(s["errors"][0]["error"], "open problem");
}

#[test]
fn eight_processes_ingesting_at_once_lose_no_signal() {
    let env = Env::new();
    env.agent_file("a").state("max_entries = 0").write();
    let path = env.state_path("a");
    const WRITERS: usize = 8;
    const EACH: usize = 20;
    let procs: Vec<std::process::Child> = (0..WRITERS)
        .map(|w| {
            let script = format!(
                "for i in $(seq 1 {EACH}); do printf 'AXE_MEMORY: KEY_FACT w{w} fact %s\\nAXE_MEMORY: DECISION w{w} decision %s\\n' $i $i | axe-state-ingest a || exit 9; done"
            );
            let bins = assert_cmd::cargo::cargo_bin("axe");
            let path = format!("{}:{}", bins.parent().unwrap().display(), std::env::var("PATH").unwrap());
            let mut sh = std::process::Command::new("bash");
            sh.args(["-c", &script])
                .env("PATH", path)
                .env("HOME", env.root().join("home"))
                .env("XDG_CONFIG_HOME", env.config_dir())
                .env("XDG_DATA_HOME", env.data_dir())
                .stdout(Stdio::null());
            sh.spawn().unwrap()
        })
        .collect();
    for mut p in procs {
        assert!(p.wait().unwrap().success());
    }
    let s = stored(&path);
    assert_eq!(s["key_facts"].as_array().unwrap().len(), WRITERS * EACH);
    assert_eq!(s["decisions"].as_array().unwrap().len(), WRITERS * EACH);
}

#[test]
fn kill_9_during_a_save_leaves_old_or_new() {
    let env = Env::new();
    env.agent_file("a").state("max_entries = 0").write();
    let path = env.state_path("a");
    let facts: Vec<String> = (0..300_000)
        .map(|i| format!("fact number {i} about the build"))
        .collect();
    let old = serde_json::to_string(&json!({"version": 1, "key_facts": facts})).unwrap();
    let temp = path.with_file_name(".a.json.axe-new");
    let mut caught = 0;
    for _ in 0..5 {
        env.write(&path, &old);
        let mut child = env
            .std_cmd("axe-state-ingest")
            .arg("a")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        {
            use std::io::Write;
            let mut stdin = child.stdin.take().unwrap();
            let _ = stdin.write_all(b"AXE_MEMORY: KEY_FACT one more\n");
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        while !temp.exists() && child.try_wait().unwrap().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_micros(100));
        }
        caught += usize::from(temp.exists());
        let _ = child.kill();
        child.wait().unwrap();
        let now: Value = serde_json::from_str(&read(&path)).expect("a whole state, old or new");
        let n = now["key_facts"].as_array().unwrap().len();
        assert!(n == 300_000 || n == 300_001, "{n}");
    }
    assert!(caught > 0, "never caught a save writing");
    // The next save sweeps a leftover.
    state(&env, "ingest")
        .arg("a")
        .write_stdin("AXE_MEMORY: KEY_FACT last\n")
        .assert()
        .success();
    assert!(!temp.exists());
}

#[test]
fn path_and_dispatch() {
    let env = Env::new();
    env.agent_file("a").state("").write();
    let path = env.state_path("a");
    state(&env, "path")
        .arg("a")
        .assert()
        .success()
        .stdout(format!("{}\n", path.display()));
    env.agent(
        "b",
        "name = \"b\"\nmodel = \"anthropic/m\"\n[state]\npath = \"/tmp/elsewhere.json\"\n",
    );
    env.cmd("axe")
        .args(["state", "path", "b", "--json"])
        .assert()
        .success()
        .stdout("{\"agent\":\"b\",\"path\":\"/tmp/elsewhere.json\",\"exists\":false}\n");
    state(&env, "show")
        .arg("a")
        .assert()
        .success()
        .stdout("(no state)\n");
    // No agent file: the state axe-mcp serves for that name, none yet.
    state(&env, "show")
        .arg("nope")
        .assert()
        .success()
        .stdout("(no state)\n");
}

// --- through axe-run ---------------------------------------------------------

use crate::server::{Answer, Server};
use crate::wire::{reply_for, served_by};

#[test]
fn a_run_records_its_signals_and_outcome_and_the_next_run_sees_them() {
    for provider in ["anthropic", "openai", "ollama"] {
        let env = Env::new();
        env.agent(
            "a",
            &format!("name = \"a\"\nmodel = \"{provider}/m\"\n[state]\nenabled = true\n"),
        );
        let path = env.data_dir().join("axe/state/a.json");
        let answer = "Working on it.\nAXE_MEMORY: STEP_PENDING Write the migration\n\
                      AXE_MEMORY: KEY_FACT Postgres 16\nAXE_MEMORY: WISH more time\n";
        let server = Server::start(vec![
            Answer::json(200, &reply_for(provider, answer)),
            Answer::json(
                200,
                &reply_for(provider, "AXE_MEMORY: STEP_DONE write the migration"),
            ),
        ]);
        let out = served_by(env.cmd("axe-run"), &server.url)
            .args(["a", "--task", "42", "--phase", "BUILD", "--json", "start"])
            .assert()
            .success()
            .get_output()
            .clone();
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            doc["state"]["recorded"].as_array().unwrap().len(),
            2,
            "{provider}"
        );
        assert_eq!(doc["state"]["rejected"][0]["line"], 4);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("line 4: unknown signal type WISH"),
            "{provider}: {err}"
        );
        let s = stored(&path);
        assert_eq!(s["iteration"], 1);
        assert_eq!(s["tasks"]["42"]["phase"], "BUILD");
        // The next run's user message carries the block, after the task.
        served_by(env.cmd("axe-run"), &server.url)
            .args(["a", "--task", "42", "go on"])
            .assert()
            .success();
        let second = server.requests()[1].json();
        let user = second["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "user")
            .unwrap()["content"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            user.starts_with("go on\n\n## Session Memory\n\n### Task: 42 (Phase: BUILD)\nPending: Write the migration\n"),
            "{provider}: {user}"
        );
        assert!(user.contains("- Postgres 16"));
        let s = stored(&path);
        assert_eq!(s["iteration"], 2);
        assert_eq!(
            s["tasks"]["42"]["completed_steps"],
            json!(["Write the migration"])
        );
        // The run log keeps the task as it was given.
        assert!(
            !second.to_string().contains("system\":\"## Session"),
            "not in the system prompt"
        );
    }
}

#[test]
fn a_failed_run_is_recorded_as_an_unresolved_error() {
    let env = Env::new();
    env.agent_file("a").state("").write();
    let path = env.state_path("a");
    let server = Server::start(vec![Answer::json(
        500,
        &json!({"error": {"message": "down"}}),
    )]);
    let down = format!("server: down ({}/v1/messages answered 500)", server.url);
    served_by(env.cmd("axe-run"), &server.url)
        .args(["a", "--task", "7", "hi"])
        .assert()
        .code(3)
        .stderr(format!("{down}\n"));
    let s = stored(&path);
    assert_eq!(s["errors"][0]["error"], down);
    assert_eq!(s["errors"][0]["task_id"], "7");
    assert_eq!(s["errors"][0]["resolved"], false);
    // --dry-run shows the block and records nothing.
    let out = env
        .cmd("axe-run")
        .args(["a", "--task", "7", "--dry-run"])
        .assert()
        .success();
    let text = stdout(out.get_output());
    assert!(
        text.contains(&format!(
            "--- Session Memory ---\n## Session Memory\n\n### Task: 7\n\n### Unresolved Errors\n- [Iteration 1] {down}\n\n"
        )),
        "{text}"
    );
    assert_eq!(stored(&path)["iteration"], 1);
}

#[test]
fn the_readmes_loop_runs_until_no_step_is_pending() {
    if !crate::util::have("jq") {
        return;
    }
    let env = Env::new();
    env.agent_file("builder").state("").write();
    let readme = crate::readme::guide();
    let start = readme
        .find("<!-- state-loop")
        .expect("README marks its loop");
    let body = &readme[start..];
    let open = body.find("```sh\n").unwrap() + 6;
    let script = &body[open..open + body[open..].find("```").unwrap()];
    let server = Server::start(vec![
        Answer::json(
            200,
            &reply_for(
                "anthropic",
                "AXE_MEMORY: STEP_PENDING a\nAXE_MEMORY: STEP_PENDING b",
            ),
        ),
        Answer::json(200, &reply_for("anthropic", "AXE_MEMORY: STEP_DONE a")),
        Answer::json(200, &reply_for("anthropic", "AXE_MEMORY: STEP_DONE b")),
        Answer::json(200, &reply_for("anthropic", "should not be asked")),
    ]);
    served_by(env.shell("bash"), &server.url)
        .args(["-e", "-c", script])
        .assert()
        .success();
    assert_eq!(
        server.requests().len(),
        3,
        "three iterations, then no step pending"
    );
    let s = stored(&env.data_dir().join("axe/state/builder.json"));
    assert_eq!(s["iteration"], 3);
    assert_eq!(s["tasks"]["42"]["completed_steps"], json!(["a", "b"]));
    // Each run saw the state the last one left.
    let second = server.requests()[1].json().to_string();
    assert!(second.contains("Pending: a, b"), "{second}");
}

#[test]
fn the_same_decision_fact_or_error_recorded_ten_times_is_kept_and_shown_once() {
    let env = Env::new();
    env.agent_file("a").state("max_entries = 4").write();
    let path = env.state_path("a");
    state(&env, "ingest")
        .args(["a", "--phase", "TEST"])
        .write_stdin("AXE_MEMORY: DECISION Keep the old parser\n")
        .assert()
        .success();
    for _ in 0..10 {
        state(&env, "ingest")
            .args(["a", "--phase", "TEST"])
            .write_stdin(
                "AXE_MEMORY: DECISION Factory pattern for the service\n\
                 AXE_MEMORY: KEY_FACT Project uses pytest\n\
                 AXE_MEMORY: ERROR flaky network test\n",
            )
            .assert()
            .success();
        state(&env, "record")
            .args(["a", "--task", "main", "--failure", "--error", "tests fail"])
            .assert()
            .success();
    }
    let s = stored(&path);
    let decisions: Vec<&str> = s["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["description"].as_str().unwrap())
        .collect();
    // Ten repeats took no room from the older decision (max_entries = 4:
    // two decisions, two unresolved errors, which pruning never drops),
    // and the one kept is dated by its latest record.
    assert_eq!(
        decisions,
        ["Keep the old parser", "Factory pattern for the service"]
    );
    assert_eq!(s["decisions"][1]["iteration"], 9);
    assert_eq!(s["errors"].as_array().unwrap().len(), 2, "{s}");
    for bin in ["context", "show"] {
        let text = stdout(state(&env, bin).arg("a").assert().success().get_output());
        for line in [
            "- Factory pattern for the service\n",
            "- Project uses pytest\n",
            "flaky network test\n",
            "tests fail\n",
        ] {
            assert_eq!(text.matches(line).count(), 1, "{bin}: {line:?} in {text}");
        }
    }
    // A file that already holds repeats (agentium's own, or two machines'
    // merged by axe-sync) shows each once, the newest.
    let mut s = stored(&path);
    let d = s["decisions"][1].clone();
    let e = s["errors"][0].clone();
    s["decisions"].as_array_mut().unwrap().insert(0, d);
    s["errors"].as_array_mut().unwrap().insert(0, e);
    s["key_facts"]
        .as_array_mut()
        .unwrap()
        .push(json!("Project uses pytest"));
    fs::write(&path, s.to_string()).unwrap();
    let text = stdout(
        state(&env, "context")
            .arg("a")
            .assert()
            .success()
            .get_output(),
    );
    for line in [
        "- Factory pattern for the service\n",
        "- Project uses pytest\n",
        "flaky network test\n",
    ] {
        assert_eq!(text.matches(line).count(), 1, "{line:?} in {text}");
    }
}
