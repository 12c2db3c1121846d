//! `axe-agents list|show|init|edit`.

use predicates::prelude::*;
use serde_json::Value;

use crate::server::{Answer, Server};
use crate::util::{Env, entries, header_count, output_past_busy, read, set_mode, stdout};
use crate::wire::{anthropic_reply, served_by};

const FULL: &str = r#"name = "reviewer"
description = "Reviews PRs"
model = "anthropic/claude-sonnet-4-20250514"
system_prompt = "Be terse."
skill = "skills/review/SKILL.md"
files = ["README.md", "src/**/*.rs"]
workdir = "/src/app"
sub_agents = ["summarizer", "linter"]

[sub_agents_config]
max_depth = 2
parallel = false
timeout = 60
max_parallel = 4

[memory]
enabled = true
path = "/logs/reviewer.md"
last_n = 10
max_entries = 100

[params]
temperature = 0.3
max_tokens = 4096
"#;

#[test]
fn list_prints_file_names_and_descriptions_sorted_by_file_name() {
    let env = Env::new();
    env.agent(
        "b-file",
        "name = \"b-file\"\nmodel = \"x/y\"\ndescription = \"first\"\n",
    );
    env.agent("a-file", "name = \"a-file\"\nmodel = \"x/y\"\n");
    env.cmd("axe-agents")
        .arg("list")
        .assert()
        .success()
        .stdout("a-file\nb-file - first\n")
        .stderr("");
}

#[test]
fn list_of_no_agents_is_empty() {
    let env = Env::new();
    env.cmd("axe-agents")
        .arg("list")
        .assert()
        .success()
        .stdout("");
    let out = env
        .cmd("axe-agents")
        .args(["list", "--json"])
        .assert()
        .success();
    assert_eq!(stdout(out.get_output()), "{\"agents\":[],\"broken\":[]}\n");
}

#[test]
fn list_json_names_file_stem_and_path() {
    let env = Env::new();
    let path = env.agent(
        "rev",
        "name = \"reviewer\"\nmodel = \"x/y\"\ndescription = \"d\"\n",
    );
    let out = env
        .cmd("axe-agents")
        .args(["list", "--json"])
        .assert()
        .success();
    let v: Value = serde_json::from_str(&stdout(out.get_output())).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"agents": [{
            "agent": "rev", "name": "reviewer", "description": "d",
            "model": "x/y", "path": path.to_string_lossy(), "source": "config"
        }], "broken": []})
    );
}

#[test]
fn list_names_agents_by_file_marks_mismatched_names_and_reports_broken_files() {
    let env = Env::new();
    // Three copies of one agent, each saved under a new name and never
    // renamed inside: the name typed is the file's.
    for (file, description) in [("bad", "the first"), ("copy", ""), ("zcopy", "third")] {
        env.agent(
            file,
            &format!("name = \"bad\"\nmodel = \"x/y\"\ndescription = \"{description}\"\n"),
        );
    }
    let broken = env.agent("broken", "name = \"broken\"\nmodel = ");
    let invalid = env.agent("invalid", "name = \"invalid\"\n");
    let warnings = format!(
        "Warning: not listed: {}: failed to parse agent config \"broken\": line 2, column 9: string values must be quoted, expected literal string\n\
         Warning: not listed: {}: agent config missing required field: model\n",
        broken.display(),
        invalid.display()
    );
    env.cmd("axe-agents")
        .arg("list")
        .assert()
        .success()
        .stdout("bad - the first\ncopy (name = \"bad\")\nzcopy (name = \"bad\") - third\n")
        .stderr(warnings.clone());
    // Each listed name is one `axe-agents show` and `axe-run` take.
    env.cmd("axe-agents")
        .args(["show", "zcopy"])
        .assert()
        .success();
    let out = env
        .cmd("axe-agents")
        .args(["list", "--json"])
        .assert()
        .success()
        .stderr(warnings);
    let v: Value = serde_json::from_str(&stdout(out.get_output())).unwrap();
    let agents: Vec<(&str, &str)> = v["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["agent"].as_str().unwrap(), a["name"].as_str().unwrap()))
        .collect();
    assert_eq!(agents, [("bad", "bad"), ("copy", "bad"), ("zcopy", "bad")]);
    assert_eq!(
        v["broken"],
        serde_json::json!([
            {"agent": "broken", "path": broken.to_string_lossy(), "source": "config",
             "error": "failed to parse agent config \"broken\": line 2, column 9: string values must be quoted, expected literal string"},
            {"agent": "invalid", "path": invalid.to_string_lossy(), "source": "config",
             "error": "agent config missing required field: model"},
        ])
    );
}

#[test]
fn list_reports_an_unreadable_agent_file_and_lists_the_rest() {
    let env = Env::new();
    env.agent("good", "name = \"good\"\nmodel = \"x/y\"\n");
    let secret = env.agent("secret", "name = \"secret\"\nmodel = \"x/y\"\n");
    set_mode(&secret, 0o000);
    env.unprivileged("axe-agents")
        .arg("list")
        .assert()
        .success()
        .stdout("good\n")
        .stderr(format!(
            "Warning: not listed: {p}: failed to parse agent config \"secret\": open {p}: permission denied\n",
            p = secret.display()
        ));
}

#[test]
fn show_prints_every_set_field_in_go_layout() {
    let env = Env::new();
    env.agent("reviewer", FULL);
    env.cmd("axe-agents")
        .args(["show", "reviewer"])
        .assert()
        .success()
        .stdout(
            "Name:           reviewer
Description:    Reviews PRs
Model:          anthropic/claude-sonnet-4-20250514
System Prompt:  Be terse.
Skill:          skills/review/SKILL.md
Files:          README.md, src/**/*.rs
Workdir:        /src/app
Sub-Agents:     summarizer, linter
Max Depth:      2
Parallel:       false
Sub-Agent Timeout:60
Max Parallel:   4
Memory Enabled: true
Memory Path:    /logs/reviewer.md
Memory LastN:   10
Memory MaxEntries:100
Temperature:    0.3
Max Tokens:     4096
",
        );
}

/// M6 7.7 `TestAgentsShow_MemoryAllFields`.
#[test]
fn show_memory_all_fields() {
    let env = Env::new();
    env.memory_agent("a", "path = \"/tmp/a.md\"\nlast_n = 5\nmax_entries = 50");
    let out = env.cmd("axe-agents").args(["show", "a"]).assert().success();
    let text = stdout(out.get_output());
    assert!(text.contains("Memory Enabled: true\n"), "{text}");
    assert!(text.contains("Memory Path:    /tmp/a.md\n"), "{text}");
    assert!(text.contains("Memory LastN:   5\n"), "{text}");
    assert!(text.contains("Memory MaxEntries:50\n"), "{text}");
}

/// M6 7.7 `TestAgentsShow_MemoryDefaults`.
#[test]
fn show_memory_defaults_are_not_displayed() {
    let env = Env::new();
    env.agent("a", "name = \"a\"\nmodel = \"x/y\"\n");
    env.cmd("axe-agents")
        .args(["show", "a"])
        .assert()
        .success()
        .stdout("Name:           a\nModel:          x/y\n")
        .stdout(predicate::str::contains("Memory").not());
}

#[test]
fn show_memory_numbers_alone_are_displayed() {
    let env = Env::new();
    env.agent("a", "name = \"a\"\nmodel = \"x/y\"\n[memory]\nlast_n = 3\n");
    env.cmd("axe-agents")
        .args(["show", "a"])
        .assert()
        .success()
        .stdout("Name:           a\nModel:          x/y\nMemory LastN:   3\n");
}

#[test]
fn show_lists_tools_hosts_artifacts_and_sandbox_when_set() {
    let env = Env::new();
    env.agent(
        "a",
        "name = \"a\"\nmodel = \"x/y\"\ntools = [\"read_file\", \"url_fetch\"]\nallowed_hosts = [\"docs.rs\"]\n[artifacts]\nenabled = true\n[sandbox]\nrequire = true\n",
    );
    env.cmd("axe-agents")
        .args(["show", "a"])
        .assert()
        .success()
        .stdout(
            "Name:           a\nModel:          x/y\nTools:          read_file, url_fetch\nAllowed Hosts:  docs.rs\nArtifacts:      a directory for each run\nSandbox:        require = true, network = false\n",
        );
}

#[test]
fn show_json_has_every_field_with_defaults_and_paths() {
    let env = Env::new();
    let path = env.agent(
        "a",
        "name = \"a\"\nmodel = \"x/y\"\nsub_agents = [\"b\"]\n\
         [[mcp_servers]]\nname = \"s\"\ntransport = \"stdio\"\ncommand = \"c\"\nenv = { KEY = \"sk-secret\" }\n",
    );
    let out = env
        .cmd("axe-agents")
        .args(["show", "a", "--json"])
        .assert()
        .success();
    let v: Value = serde_json::from_str(&stdout(out.get_output())).unwrap();
    assert_eq!(
        v,
        serde_json::json!({
            "agent": "a",
            "path": path.to_string_lossy(),
            "memory_path": env.log_path("a").to_string_lossy(),
            "name": "a", "description": "", "model": "x/y", "system_prompt": "",
            "skill": "", "files": [], "workdir": "", "sub_agents": ["b"],
            "sub_agents_config": {"max_depth": 0, "parallel": true, "timeout": 0, "max_parallel": 0},
            "timeout": 0, "stream": false,
            "retry": {"max_retries": 0, "backoff": "", "initial_delay_ms": 0, "max_delay_ms": 0},
            "budget": {"max_tokens": 0},
            "memory": {"enabled": false, "path": "", "last_n": 0, "max_entries": 0},
            "params": {"temperature": 0.0, "max_tokens": 0},
            "notes": {"enabled": false, "workspace": "", "recall_days": 3, "recall_chars": 24000,
                      "max_memory_chars": 10000, "max_topic_chars": 10000,
                      "consolidate_every": "", "consolidate_min_entries": 5},
            "state": {"enabled": false, "path": "", "max_entries": 100, "context_budget": 3000},
            "context": {"budget": null, "order": ["state", "memory", "log", "world", "daily"]},
            "tools": [], "allowed_hosts": [],
            "artifacts": {"enabled": false, "dir": "", "default_write": false},
            "sandbox": {"engine": "auto", "require": false, "network": false},
            "unknown": [],
            // Of headers and env only the names: their values are often keys.
            "mcp_servers": [{"name": "s", "transport": "stdio", "url": "", "headers": [],
                             "command": "c", "args": [], "env": ["KEY"], "cwd": "", "required": true,
                             "oauth_client_id": "", "oauth_client_secret": false,
                             "oauth_client_metadata_url": ""}]
        })
    );
}

#[test]
fn show_errors_name_the_problem_with_config_exit_code() {
    let env = Env::new();
    env.agent(
        "bad",
        "name = \"bad\"\nmodel = \"x/y\"\n[memory]\nlast_n = -1\n",
    );
    env.agent("torn", "name = ");
    let cases: [(&[&str], &str); 5] = [
        (&["show", "nope"], "agent config not found: nope\n"),
        (&["show", "bad"], "memory.last_n must be non-negative\n"),
        (
            &["show", "../x"],
            "agent name \"../x\" must not contain path separators or be \".\" or \"..\"\n",
        ),
        (
            &["show", "torn"],
            "failed to parse agent config \"torn\": line 1, column 8: string values must be quoted, expected literal string\n",
        ),
        (
            &["init", ".."],
            "agent name \"..\" must not contain path separators or be \".\" or \"..\"\n",
        ),
    ];
    for (args, message) in cases {
        env.cmd("axe-agents")
            .args(args)
            .assert()
            .code(2)
            .stdout("")
            .stderr(message);
    }
    env.cmd("axe-agents")
        .arg("show")
        .assert()
        .code(1)
        .stderr("agent name is required; usage: axe-agents show [OPTIONS] <AGENT>\n");
    let out = env
        .cmd("axe-agents")
        .args(["show", "nope", "--json"])
        .assert()
        .code(2);
    let err: Value = serde_json::from_slice(&out.get_output().stderr).unwrap();
    assert_eq!(
        err,
        serde_json::json!({"error": "agent config not found: nope", "exit_code": 2})
    );
}

#[test]
fn init_writes_the_scaffold_and_prints_its_path() {
    let env = Env::new();
    let path = env.config_dir().join("axe/agents/helper.toml");
    env.cmd("axe-agents")
        .args(["init", "helper"])
        .assert()
        .success()
        .stdout(format!("{}\n", path.display()));
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text, axe::agent::scaffold("helper"));
    assert!(text.starts_with("name = \"helper\"\n"));
    assert!(text.contains(
        "# [memory]\n# enabled = false\n# path = \"\"\n# last_n = 10\n# max_entries = 100\n"
    ));
    // The scaffold is a valid agent once its model is set.
    env.cmd("axe-agents")
        .args(["show", "helper"])
        .assert()
        .success();
}

#[test]
fn the_scaffolds_top_level_settings_stay_top_level_once_uncommented() {
    let env = Env::new();
    let path = env.config_dir().join("axe/agents/helper.toml");
    env.cmd("axe-agents")
        .args(["init", "helper"])
        .assert()
        .success();
    // A user taking up the sub-agent settings and the built-in tools.
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace(
            "# [sub_agents_config]\n# max_depth = 3",
            "[sub_agents_config]\nmax_depth = 3",
        )
        .replace("# tools = []", "tools = [\"read_file\"]")
        .replace("# allowed_hosts = []", "allowed_hosts = [\"docs.rs\"]");
    std::fs::write(&path, text).unwrap();
    let out = env
        .cmd("axe-agents")
        .args(["show", "helper", "--json"])
        .assert()
        .success();
    let v: Value = serde_json::from_str(&stdout(out.get_output())).unwrap();
    assert_eq!(v["sub_agents_config"]["max_depth"], 3);
    assert_eq!(v["tools"], serde_json::json!(["read_file"]));
    assert_eq!(v["allowed_hosts"], serde_json::json!(["docs.rs"]));
}

#[test]
fn init_never_replaces_an_agent_file() {
    let env = Env::new();
    let path = env.agent("mine", "name = \"mine\"\nmodel = \"x/y\"\n");
    env.cmd("axe-agents")
        .args(["init", "mine"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(format!("agent config already exists: {}\n", path.display()));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "name = \"mine\"\nmodel = \"x/y\"\n"
    );
}

#[test]
fn init_json_and_unwritable_directory() {
    let env = Env::new();
    let out = env
        .cmd("axe-agents")
        .args(["init", "a", "--json"])
        .assert()
        .success();
    let v: Value = serde_json::from_str(&stdout(out.get_output())).unwrap();
    let path = env.config_dir().join("axe/agents/a.toml");
    assert_eq!(
        v,
        serde_json::json!({"agent": "a", "path": path.to_string_lossy()})
    );
    set_mode(&env.config_dir().join("axe/agents"), 0o555);
    env.unprivileged("axe-agents")
        .args(["init", "b"])
        .assert()
        .code(2)
        .stderr(format!(
            "failed to write agent config: open {}: permission denied\n",
            env.config_dir().join("axe/agents/b.toml").display()
        ));
    set_mode(&env.config_dir().join("axe/agents"), 0o755);
}

#[test]
fn init_writes_system_prompt_and_skill_that_run_exactly_as_typed() {
    let env = Env::new();
    env.write(
        &env.config_dir().join("axe/skills/review/SKILL.md"),
        "Check the tests.",
    );
    // Quotes, a TOML multi-line delimiter, backslashes, a tab, a CR and
    // blank lines: each must come back as typed.
    let system = "You review \"diffs\" for 'axe'.\n\n\tSay \"\"\"LGTM\"\"\" or list issues; C:\\path\\n is not a newline.\r\nEnd.\n";
    env.cmd("axe-agents")
        .args([
            "init",
            "rev",
            "--model",
            "anthropic/claude-test",
            "--system",
        ])
        .arg(system)
        .args(["--skill", "skills/review/SKILL.md"])
        .assert()
        .success()
        .stderr("");
    let out = env
        .cmd("axe-agents")
        .args(["show", "rev", "--json"])
        .assert()
        .success();
    let v: Value = serde_json::from_str(&stdout(out.get_output())).unwrap();
    assert_eq!(v["system_prompt"], system);
    assert_eq!(v["skill"], "skills/review/SKILL.md");
    let out = env
        .cmd("axe-agents")
        .args(["show", "rev"])
        .assert()
        .success();
    assert!(
        stdout(out.get_output()).contains(&format!(
            "System Prompt:  {system}\nSkill:          skills/review/SKILL.md\n"
        )),
        "{}",
        stdout(out.get_output())
    );
    let out = env
        .cmd("axe-run")
        .args(["rev", "--dry-run"])
        .write_stdin("")
        .assert()
        .success();
    assert!(
        stdout(out.get_output()).contains(&format!(
            "--- System Prompt ---\n{system}\n\n---\n\n## Skill\n\nCheck the tests.\n\n--- Skill ---\nCheck the tests.\n"
        )),
        "{}",
        stdout(out.get_output())
    );
    // The rest of the template is still there to fill in.
    let text = std::fs::read_to_string(env.config_dir().join("axe/agents/rev.toml")).unwrap();
    assert!(
        text.contains("# Agent persona (optional)\nsystem_prompt = \"\"\"\n"),
        "{text}"
    );
    assert!(
        text.contains("\nskill = \"skills/review/SKILL.md\"\n"),
        "{text}"
    );
    assert!(text.contains("# files = []"), "{text}");
}

#[test]
fn init_warns_when_the_skill_is_not_where_runs_will_look() {
    let env = Env::new();
    env.write(&env.root().join("home/review.md"), "Check.");
    let skills = env.config_dir().join("axe");
    env.cmd("axe-agents")
        .args([
            "init",
            "r",
            "--system",
            "One line, \"quoted\".",
            "--skill",
            "review.md",
        ])
        .assert()
        .success()
        .stderr(format!(
            "Warning: skill not found: {}/review.md (a relative skill path is read from {})\n",
            skills.display(),
            skills.display()
        ));
    let text = std::fs::read_to_string(env.config_dir().join("axe/agents/r.toml")).unwrap();
    assert!(
        text.contains("\nsystem_prompt = \"One line, \\\"quoted\\\".\"\n"),
        "{text}"
    );
    assert!(text.contains("\nskill = \"review.md\"\n"), "{text}");
}

#[test]
fn init_help_says_runs_warn_at_max_entries_and_how_to_trim_for_free() {
    let env = Env::new();
    let out = env
        .cmd("axe-agents")
        .args(["init", "--help"])
        .assert()
        .success();
    let help = stdout(out.get_output());
    assert!(!help.contains("trimmed at 100"), "{help}");
    assert!(help.contains("axe mem trim"), "{help}");
    assert!(help.contains("--system <TEXT>"), "{help}");
    assert!(help.contains("--skill <PATH>"), "{help}");
}

#[test]
fn a_full_log_warns_with_the_free_trim_and_following_it_stops_the_warning() {
    let env = Env::new();
    let server = Server::start(vec![
        Answer::json(200, &anthropic_reply("one")),
        Answer::json(200, &anthropic_reply("two")),
    ]);
    env.cmd("axe-agents")
        .args(["init", "m", "--model", "anthropic/claude-test", "--memory"])
        .assert()
        .success();
    env.write(&env.log_path("m"), entries(100));
    served_by(env.cmd("axe-run"), &server.url)
        .arg("m")
        .assert()
        .success()
        .stdout("one")
        .stderr(
            "Warning: agent \"m\" memory has 100 entries (max_entries: 100); runs only warn, nothing is trimmed. \
             Run 'axe mem trim m' to keep the last 10 (no model call), or 'axe gc m' to have the model review it first.\n",
        );
    // The advice as given: the `axe` dispatcher, no model, no key.
    env.cmd("axe").args(["mem", "trim", "m"]).assert().success();
    assert_eq!(header_count(&read(&env.log_path("m"))), 10);
    served_by(env.cmd("axe-run"), &server.url)
        .arg("m")
        .assert()
        .success()
        .stdout("two")
        .stderr("");
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn edit_runs_the_editor_on_the_agent_file() {
    let env = Env::new();
    let path = env.agent("a", "name = \"a\"\nmodel = \"x/y\"\n");
    let editor = env.root().join("editor");
    env.write(
        &editor,
        "#!/bin/sh\nprintf '%s\\n' \"$@\" > \"$HOME/edited\"\nexit $EDIT_STATUS\n",
    );
    set_mode(&editor, 0o755);
    let out = output_past_busy(
        env.cmd("axe-agents")
            .args(["edit", "a"])
            .env("EDITOR", format!("{} --wait", editor.display()))
            .env("EDIT_STATUS", "0"),
    );
    assert!(out.status.success() && out.stdout.is_empty(), "{out:?}");
    let args = std::fs::read_to_string(env.root().join("home/edited")).unwrap();
    assert_eq!(args, format!("--wait\n{}\n", path.display()));
    let out = output_past_busy(
        env.cmd("axe-agents")
            .args(["edit", "a"])
            .env("EDITOR", &editor)
            .env("EDIT_STATUS", "3"),
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "exit status 3\n");
}

#[test]
fn edit_falls_back_to_visual_then_editor_then_vi() {
    let env = Env::new();
    let path = env.agent("a", "name = \"a\"\nmodel = \"x/y\"\n");
    let bin = env.root().join("bin");
    for name in ["visual", "editor", "vi"] {
        let script = bin.join(name);
        env.write(
            &script,
            format!("#!/bin/sh\nprintf '{name} %s\\n' \"$@\" >> \"$HOME/edited\"\n"),
        );
        set_mode(&script, 0o755);
    }
    let edit = |visual: Option<&str>, path_dirs: &str| {
        let mut cmd = env.cmd("axe-agents");
        cmd.args(["edit", "a"])
            .env_remove("EDITOR")
            .env("PATH", path_dirs);
        match visual {
            Some(v) => cmd.env("VISUAL", v),
            None => cmd.env_remove("VISUAL"),
        };
        let out = output_past_busy(&mut cmd);
        assert!(out.status.success(), "{out:?}");
    };
    let bin_dir = bin.to_str().unwrap();
    edit(Some(bin.join("visual").to_str().unwrap()), bin_dir);
    edit(None, bin_dir);
    std::fs::remove_file(bin.join("editor")).unwrap();
    edit(None, bin_dir);
    let p = path.display();
    assert_eq!(
        std::fs::read_to_string(env.root().join("home/edited")).unwrap(),
        format!("visual {p}\neditor {p}\nvi {p}\n")
    );
}

#[test]
fn edit_errors() {
    let env = Env::new();
    env.agent("a", "name = \"a\"\nmodel = \"x/y\"\n");
    let empty = env.root().join("empty");
    std::fs::create_dir(&empty).unwrap();
    env.cmd("axe-agents")
        .args(["edit", "a"])
        .env_remove("EDITOR")
        .env_remove("VISUAL")
        .env("PATH", &empty)
        .assert()
        .code(1)
        .stderr(
            "no editor: $EDITOR and $VISUAL are not set, and neither editor nor vi is on PATH\n",
        );
    env.cmd("axe-agents")
        .args(["edit", "nope"])
        .env("EDITOR", "true")
        .assert()
        .code(2)
        .stderr("agent config not found: nope\n");
    env.cmd("axe-agents")
        .args(["edit", "a"])
        .env("EDITOR", "/no/such/editor")
        .assert()
        .code(1)
        .stderr("exec: \"/no/such/editor\": no such file or directory\n");
}

#[test]
fn subcommands_help_version_and_mistakes() {
    let env = Env::new();
    let out = env.cmd("axe-agents").assert().success();
    let help = stdout(out.get_output());
    assert!(
        help.starts_with("axe-agents: Manage agent configurations\n"),
        "{help}"
    );
    for line in [
        "  list       List all agent configurations",
        "  check      Check an agent file and config.toml for keys axe does not know",
        "  edit       Edit an agent configuration file",
        "  mcp-login  Log in to an agent's remote MCP server with OAuth",
    ] {
        assert!(help.contains(line), "{help}");
    }
    env.cmd("axe-agents")
        .arg("--help")
        .assert()
        .success()
        .stdout(help.clone());
    env.cmd("axe-agents")
        .arg("help")
        .assert()
        .success()
        .stdout(help);
    let out = env
        .cmd("axe-agents")
        .args(["help", "show"])
        .assert()
        .success();
    let show = stdout(out.get_output());
    assert!(show.starts_with("axe-agents show: Show agent configuration details\n"));
    env.cmd("axe-agents")
        .args(["show", "-h"])
        .assert()
        .success()
        .stdout(show);
    env.cmd("axe-agents")
        .args(["list", "--version"])
        .assert()
        .success()
        .stdout(format!(
            "axe-agents version {}\n",
            env!("CARGO_PKG_VERSION")
        ));
    env.cmd("axe-agents")
        .arg("lsit")
        .assert()
        .code(1)
        .stderr("unrecognized subcommand \"lsit\" for axe-agents (did you mean \"list\"?)\n");
    env.cmd("axe-agents")
        .args(["list", "--jsn"])
        .assert()
        .code(1)
        .stderr("unrecognized flag --jsn (did you mean --json?)\n");
    env.cmd("axe-agents")
        .args(["list", "extra"])
        .assert()
        .code(1)
        .stderr("unexpected argument \"extra\"\n");
}

// --- unknown keys ----------------------------------------------------------

/// An agent file with a section typo (line 4) and a key typo (line 8).
const TYPOS: &str = "name = \"t\"\nmodel = \"anthropic/claude-test\"\n\n[memroy]\nenabled = true\n\n[params]\ntemprature = 0.2\n";

fn typo_warnings(path: &std::path::Path) -> String {
    let p = path.display();
    format!(
        "Warning: {p}:4: unknown section [memroy], ignored (did you mean [memory]?)\n\
         Warning: {p}:8: unknown key params.temprature, ignored (did you mean params.temperature?)\n"
    )
}

#[test]
fn typos_in_an_agent_file_are_warned_of_once_and_the_run_goes_on() {
    use crate::run::tool_use;
    use crate::server::{Answer, Server};
    use crate::wire::{anthropic_reply, served_by};
    let env = Env::new();
    let path = env.agent("t", TYPOS);
    let out = env
        .cmd("axe-run")
        .args(["t", "--dry-run", "-p", "hi"])
        .assert()
        .success()
        .stderr(typo_warnings(&path));
    // The typo'd setting is off, as the warning says.
    assert!(!stdout(out.get_output()).contains("temperature"));
    // A real run, and one whose sub-agent is that file, called twice:
    // one warning per file per process.
    let server = Server::start(vec![Answer::json(200, &anthropic_reply("fine"))]);
    served_by(env.cmd("axe-run"), &server.url)
        .args(["t", "-p", "hi"])
        .assert()
        .success()
        .stdout("fine")
        .stderr(typo_warnings(&path));
    assert!(server.only_request().json().get("temperature").is_none());
    env.agent(
        "parent",
        "name = \"parent\"\nmodel = \"anthropic/claude-test\"\nsub_agents = [\"t\"]\n",
    );
    let server = Server::start(vec![
        Answer::json(
            200,
            &tool_use(&[
                ("c1", serde_json::json!({"agent": "t", "task": "a"})),
                ("c2", serde_json::json!({"agent": "t", "task": "b"})),
            ]),
        ),
        Answer::json(200, &anthropic_reply("one")),
        Answer::json(200, &anthropic_reply("two")),
        Answer::json(200, &anthropic_reply("done")),
    ]);
    served_by(env.cmd("axe-run"), &server.url)
        .args(["parent", "-p", "hi"])
        .assert()
        .success()
        .stdout("done")
        .stderr(typo_warnings(&path));
}

#[test]
fn a_key_with_no_near_name_and_keys_in_arrays_of_tables_are_named() {
    let env = Env::new();
    let path = env.agent(
        "t",
        "name = \"t\"\nmodel = \"anthropic/claude-test\"\nfuture_thing = 1\n\
         [[mcp_servers]]\nname = \"m\"\ntransport = \"stdio\"\ncommand = \"x\"\ncomand = \"y\"\n\
         [mcp_servers.env]\nANY_NAME = \"v\"\n[params]\nresponse_format = { type = \"json_schema\", schema = { free = 1 } }\n",
    );
    let p = path.display();
    env.cmd("axe-agents")
        .args(["show", "t"])
        .assert()
        .success()
        .stderr("");
    env.cmd("axe-run")
        .args(["t", "--dry-run", "-p", "hi"])
        .assert()
        .success()
        .stderr(format!(
            "Warning: {p}:3: unknown key future_thing, ignored\n\
             Warning: {p}:8: unknown key mcp_servers[0].comand, ignored (did you mean mcp_servers[0].command?)\n"
        ));
}

#[test]
fn show_and_check_list_the_unknown_keys() {
    let env = Env::new();
    let path = env.agent("t", TYPOS);
    let config = env.config_dir().join("axe/config.toml");
    env.write(&config, "default_modle = \"openai/gpt\"\n");
    let out = env
        .cmd("axe-agents")
        .args(["show", "t"])
        .assert()
        .success()
        .stderr("");
    assert!(
        stdout(out.get_output()).ends_with(
            "Unknown:        [memroy] at line 4 (did you mean [memory]?)\n\
             Unknown:        params.temprature at line 8 (did you mean params.temperature?)\n"
        ),
        "{}",
        stdout(out.get_output())
    );
    let out = env
        .cmd("axe-agents")
        .args(["show", "t", "--json"])
        .assert()
        .success()
        .stderr("");
    let v: Value = serde_json::from_str(&stdout(out.get_output())).unwrap();
    assert_eq!(
        v["unknown"],
        serde_json::json!([
            {"file": path.to_string_lossy(), "line": 4, "key": "memroy", "section": true, "did_you_mean": "memory"},
            {"file": path.to_string_lossy(), "line": 8, "key": "params.temprature", "section": false, "did_you_mean": "params.temperature"},
        ])
    );
    let (p, c) = (path.display(), config.display());
    env.cmd("axe-agents")
        .args(["check", "t"])
        .assert()
        .success()
        .stderr("")
        .stdout(format!(
            "{p}:4: unknown section [memroy], ignored (did you mean [memory]?)\n\
             {p}:8: unknown key params.temprature, ignored (did you mean params.temperature?)\n\
             {c}:1: unknown key default_modle, ignored (did you mean default_model?)\n"
        ));
    let out = env
        .cmd("axe-agents")
        .args(["check", "t", "--json"])
        .assert()
        .success()
        .stderr("");
    let v: Value = serde_json::from_str(&stdout(out.get_output())).unwrap();
    assert_eq!(v["agent"], "t");
    assert_eq!(
        v["unknown"][2],
        serde_json::json!({"file": config.to_string_lossy(), "line": 1, "key": "default_modle", "section": false, "did_you_mean": "default_model"})
    );
    // A clean agent checks clean.
    std::fs::remove_file(&config).unwrap();
    env.agent("ok", "name = \"ok\"\nmodel = \"anthropic/claude-test\"\n");
    env.cmd("axe-agents")
        .args(["check", "ok"])
        .assert()
        .success()
        .stdout("ok\n")
        .stderr("");
}

/// `axe-agents init` reads its flags before config.toml, as cobra parsed
/// flags first: a system prompt that is not UTF-8 is the error even when
/// config.toml is broken (exit 2 when the flags are right), and nothing
/// is written.
#[test]
fn init_reads_its_flags_before_a_broken_config() {
    use std::os::unix::ffi::OsStrExt;
    let env = Env::new();
    env.write(
        &env.config_dir().join("axe/config.toml"),
        "default_model = \n",
    );
    env.cmd("axe-agents")
        .args(["init", "a", "--system"])
        .arg(std::ffi::OsStr::from_bytes(b"be \xff brief"))
        .assert()
        .code(1)
        .stderr("error parsing flag --system: not valid UTF-8\n");
    env.cmd("axe-agents")
        .args(["init", "a", "--system", "be brief"])
        .assert()
        .code(2);
    assert!(!env.config_dir().join("axe/agents/a.toml").exists());
}
