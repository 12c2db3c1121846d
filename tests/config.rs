//! `axe-config path|init`.

use std::os::unix::fs::PermissionsExt;

use serde_json::Value;

use crate::util::{Env, set_mode, stdout};

#[test]
fn path_prints_the_config_dir_and_creates_nothing() {
    let env = Env::new();
    let dir = env.config_dir().join("axe");
    env.cmd("axe-config")
        .arg("path")
        .assert()
        .success()
        .stdout(format!("{}\n", dir.display()));
    assert!(!dir.exists());
    env.cmd("axe-config")
        .arg("path")
        .env_remove("XDG_CONFIG_HOME")
        .assert()
        .success()
        .stdout(format!(
            "{}\n",
            env.root().join("home/.config/axe").display()
        ));
    let out = env
        .cmd("axe-config")
        .args(["path", "--json"])
        .assert()
        .success();
    let v: Value = serde_json::from_str(&stdout(out.get_output())).unwrap();
    assert_eq!(v, serde_json::json!({"config_dir": dir.to_string_lossy()}));
}

#[test]
fn init_creates_the_skeleton_and_prints_the_dir() {
    let env = Env::new();
    let dir = env.config_dir().join("axe");
    env.cmd("axe-config")
        .arg("init")
        .assert()
        .success()
        .stdout(format!("{}\n", dir.display()));
    assert!(dir.join("agents").is_dir());
    let skill = std::fs::read_to_string(dir.join("skills/sample/SKILL.md")).unwrap();
    assert_eq!(skill, axe::init::SAMPLE_SKILL);
    let config = dir.join("config.toml");
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        axe::init::CONFIG_TOML
    );
    let mode = std::fs::metadata(&config).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    // The sample skill works as an agent's skill.
    env.agent(
        "a",
        "name = \"a\"\nmodel = \"anthropic/m\"\nskill = \"skills/sample/SKILL.md\"\n",
    );
    env.cmd("axe-run")
        .args(["a", "--dry-run"])
        .assert()
        .success()
        .stdout(predicates::str::contains("# Sample skill"));
}

#[test]
fn init_keeps_existing_files_and_reports_what_it_created() {
    let env = Env::new();
    let dir = env.config_dir().join("axe");
    env.write(
        &dir.join("config.toml"),
        "[providers.openai]\napi_key = \"mine\"\n",
    );
    set_mode(&dir.join("config.toml"), 0o644);
    let out = env
        .cmd("axe-config")
        .args(["init", "--json"])
        .assert()
        .success();
    let v: Value = serde_json::from_str(&stdout(out.get_output())).unwrap();
    let skill = dir.join("skills/sample/SKILL.md");
    assert_eq!(
        v,
        serde_json::json!({"config_dir": dir.to_string_lossy(), "created": [skill.to_string_lossy()]})
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("config.toml")).unwrap(),
        "[providers.openai]\napi_key = \"mine\"\n"
    );
    std::fs::write(&skill, "my own skill").unwrap();
    let out = env
        .cmd("axe-config")
        .args(["init", "--json"])
        .assert()
        .success();
    let v: Value = serde_json::from_str(&stdout(out.get_output())).unwrap();
    assert_eq!(v["created"], serde_json::json!([]));
    assert_eq!(std::fs::read_to_string(&skill).unwrap(), "my own skill");
}

#[test]
fn init_that_cannot_write_is_a_config_error() {
    let env = Env::new();
    std::fs::create_dir_all(env.config_dir()).unwrap();
    set_mode(&env.config_dir(), 0o555);
    env.unprivileged("axe-config")
        .arg("init")
        .assert()
        .code(2)
        .stdout("")
        .stderr(format!(
            "failed to create agents directory: mkdir {}: permission denied\n",
            env.config_dir().join("axe/agents").display()
        ));
    set_mode(&env.config_dir(), 0o755);
}

#[test]
fn mistakes_are_one_line_errors() {
    let env = Env::new();
    env.cmd("axe-config")
        .arg("pth")
        .assert()
        .code(1)
        .stderr("unrecognized subcommand \"pth\" for axe-config (did you mean \"path\"?)\n");
    env.cmd("axe-config")
        .args(["init", "--force"])
        .assert()
        .code(1)
        .stderr("unrecognized flag --force\n");
    env.cmd("axe-config")
        .arg("--version")
        .assert()
        .success()
        .stdout(format!(
            "axe-config version {}\n",
            env!("CARGO_PKG_VERSION")
        ));
}

#[test]
fn a_section_typo_is_named_and_a_missing_key_says_where_axe_looked() {
    let env = Env::new();
    let config = env.config_dir().join("axe/config.toml");
    env.write(&config, "[provider.openai]\napi_key = \"sk-x\"\n");
    env.agent("o", "name = \"o\"\nmodel = \"openai/gpt-test\"\n");
    let c = config.display();
    env.cmd("axe-run")
        .args(["o", "-p", "hi"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(format!(
            "Warning: {c}:1: unknown section [provider], ignored (did you mean [providers]?)\n\
             API key for provider \"openai\" is not configured: OPENAI_API_KEY is not set, and {c} has no [providers.openai] section\n"
        ));
    // The section there without a key, and no file at all.
    env.write(
        &config,
        "[providers.openai]\nbase_url = \"https://api.openai.com\"\n",
    );
    env.cmd("axe-llm")
        .args(["-m", "openai/gpt-test", "hi"])
        .assert()
        .code(2)
        .stderr(format!(
            "API key for provider \"openai\" is not configured: OPENAI_API_KEY is not set, and [providers.openai] in {c} has no api_key or api_key_cmd\n"
        ));
    std::fs::remove_file(&config).unwrap();
    env.cmd("axe-llm")
        .args(["-m", "openai/gpt-test", "hi"])
        .assert()
        .code(2)
        .stderr(format!(
            "API key for provider \"openai\" is not configured: OPENAI_API_KEY is not set, and there is no {c}\n"
        ));
}
