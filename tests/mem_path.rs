//! `axe-mem-path`.

use serde::Deserialize;

use crate::util::{Env, stdout};

#[derive(Deserialize, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
struct Json {
    agent: Option<String>,
    path: String,
    exists: bool,
}

#[test]
fn default_path_is_under_xdg_data_home() {
    let env = Env::new();
    env.memory_agent("rev", "");
    env.cmd("axe-mem-path")
        .arg("rev")
        .assert()
        .success()
        .stdout(format!("{}\n", env.log_path("rev").display()));
}

#[test]
fn without_xdg_data_home_it_is_under_home() {
    let env = Env::new();
    env.memory_agent("rev", "");
    let expected = env.root().join("home/.local/share/axe/memory/rev.md");
    for unset in [true, false] {
        let mut cmd = env.cmd("axe-mem-path");
        if unset {
            cmd.env_remove("XDG_DATA_HOME");
        } else {
            cmd.env("XDG_DATA_HOME", "");
        }
        cmd.arg("rev")
            .assert()
            .success()
            .stdout(format!("{}\n", expected.display()));
    }
}

#[test]
fn agents_are_found_under_home_config_without_xdg_config_home() {
    let env = Env::new();
    env.write(
        &env.root().join("home/.config/axe/agents/h.toml"),
        "name = \"h\"\nmodel = \"a/b\"\n",
    );
    env.cmd("axe-mem-path")
        .env_remove("XDG_CONFIG_HOME")
        .arg("h")
        .assert()
        .success();
}

#[test]
fn custom_memory_path_is_used_as_is() {
    let env = Env::new();
    env.memory_agent("rev", "path = \"/custom/path/mem.md\"");
    env.cmd("axe-mem-path")
        .arg("rev")
        .assert()
        .success()
        .stdout("/custom/path/mem.md\n");
    env.memory_agent("rel", "path = \"logs/rel.md\"");
    env.cmd("axe-mem-path")
        .arg("rel")
        .assert()
        .success()
        .stdout("logs/rel.md\n");
}

#[test]
fn memory_disabled_agents_still_have_a_path() {
    let env = Env::new();
    env.agent("plain", "name = \"plain\"\nmodel = \"a/b\"\n");
    env.cmd("axe-mem-path")
        .arg("plain")
        .assert()
        .success()
        .stdout(format!("{}\n", env.log_path("plain").display()));
}

#[test]
fn json_reports_whether_the_log_exists() {
    let env = Env::new();
    env.memory_agent("rev", "");
    let get = || -> Json {
        let out = env
            .cmd("axe-mem-path")
            .args(["rev", "--json"])
            .assert()
            .success();
        serde_json::from_str(&stdout(out.get_output())).unwrap()
    };
    let path = env.log_path("rev").to_string_lossy().into_owned();
    assert_eq!(
        get(),
        Json {
            agent: Some("rev".into()),
            path: path.clone(),
            exists: false
        }
    );
    env.write(&env.log_path("rev"), "");
    assert!(get().exists);
}

#[test]
fn file_flag_names_the_log_directly() {
    let env = Env::new();
    env.cmd("axe-mem-path")
        .args(["--file", "some/log.md"])
        .assert()
        .success()
        .stdout("some/log.md\n");
    let out = env
        .cmd("axe-mem-path")
        .args(["--file", "some/log.md", "--json"])
        .assert()
        .success();
    let json: Json = serde_json::from_str(&stdout(out.get_output())).unwrap();
    assert_eq!(json.agent, None);
    assert_eq!(json.path, "some/log.md");
}
