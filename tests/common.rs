//! What all five memory executables share: choosing the log, the errors of
//! doing so, `--help`, `--version`, unknown flags and JSON errors.

use predicates::prelude::*;
use serde::Deserialize;

use crate::util::Env;

/// Each executable, with the arguments it needs besides the log.
const TOOLS: &[(&str, &[&str])] = &[
    ("axe-mem-path", &[]),
    ("axe-mem-append", &["--task", "t", "--result", "r"]),
    ("axe-mem-load", &[]),
    ("axe-mem-count", &[]),
    ("axe-mem-trim", &["--keep", "1"]),
];

#[test]
fn help_lists_usage_and_every_flag() {
    let env = Env::new();
    for (bin, _) in TOOLS {
        let out = env.cmd(bin).arg("--help").assert().success();
        let text = crate::util::stdout(out.get_output());
        assert!(text.starts_with(&format!("{bin}: ")), "{text}");
        for flag in ["--file <PATH>", "--json", "-h, --help", "-V, --version"] {
            assert!(text.contains(flag), "{bin} --help lacks {flag}");
        }
        env.cmd(bin).arg("-h").assert().success().stdout(text);
    }
}

#[test]
fn version_is_printed_go_style() {
    let env = Env::new();
    for (bin, _) in TOOLS {
        env.cmd(bin)
            .arg("--version")
            .assert()
            .success()
            .stdout(format!("{bin} version {}\n", env!("CARGO_PKG_VERSION")));
    }
}

#[test]
fn unknown_flag_is_exit_1_with_a_suggestion() {
    let env = Env::new();
    for (bin, _) in TOOLS {
        env.cmd(bin)
            .args(["--jsn", "x"])
            .assert()
            .code(1)
            .stdout("")
            .stderr("unrecognized flag --jsn (did you mean --json?)\n");
        env.cmd(bin)
            .args(["-z", "x"])
            .assert()
            .code(1)
            .stderr("unrecognized flag -z\n");
    }
}

#[test]
fn missing_flag_value_and_extra_arguments_are_exit_1() {
    let env = Env::new();
    for (bin, _) in TOOLS {
        env.cmd(bin)
            .arg("--file")
            .assert()
            .code(1)
            .stderr("missing value for flag --file\n");
        env.cmd(bin)
            .args(["a", "b"])
            .assert()
            .code(1)
            .stderr("unexpected argument \"b\"\n");
        env.cmd(bin)
            .arg("--json=yes")
            .assert()
            .code(1)
            .stderr(predicate::str::contains(
                "flag --json does not take a value",
            ));
    }
}

#[test]
fn neither_agent_nor_file_is_exit_1() {
    let env = Env::new();
    for (bin, extra) in TOOLS {
        // The usage line that has the argument: where it goes.
        let usage = match *bin {
            "axe-mem-append" => "[OPTIONS] --task <TEXT> <AGENT>",
            _ => "[OPTIONS] <AGENT>",
        };
        env.cmd(bin).args(*extra).assert().code(1).stderr(format!(
            "agent name is required (or use --file); usage: {bin} {usage}\n"
        ));
    }
}

#[test]
fn both_agent_and_file_is_exit_1() {
    let env = Env::new();
    env.memory_agent("rev", "");
    for (bin, extra) in TOOLS {
        env.cmd(bin)
            .args(["rev", "--file", "x.md"])
            .args(*extra)
            .assert()
            .code(1)
            .stderr("cannot specify both --file and an agent name\n");
    }
}

#[test]
fn an_agent_without_a_file_has_the_log_axe_mcp_serves_and_reads_create_nothing() {
    let env = Env::new();
    for (bin, extra) in TOOLS.iter().filter(|(b, _)| *b != "axe-mem-append") {
        env.cmd(bin).arg("nope").args(*extra).assert().success();
    }
    assert!(!env.data_dir().exists(), "a read must not create a log");
    env.cmd("axe-mem-append")
        .args(["nope", "--task", "t", "--result", "r"])
        .assert()
        .success();
    assert!(env.log_path("nope").exists());
}

#[test]
fn names_reaching_outside_are_exit_2() {
    let env = Env::new();
    // A file that a traversing name would find.
    env.write(
        &env.config_dir().join("axe/evil.toml"),
        "name = \"evil\"\nmodel = \"a/b\"\n",
    );
    for (bin, extra) in TOOLS {
        for name in ["../evil", "..", "a/b", ""] {
            env.cmd(bin)
                .arg(name)
                .args(*extra)
                .assert()
                .code(2)
                .stderr(predicate::str::contains("agent name"));
        }
    }
}

#[test]
fn broken_agent_files_are_exit_2_with_go_messages() {
    let env = Env::new();
    env.agent("bad", "name = \"bad\"\nmodel = [\n");
    env.agent(
        "neg",
        "name = \"neg\"\nmodel = \"a/b\"\n[memory]\nlast_n = -1\n",
    );
    env.agent("nomodel", "name = \"nomodel\"\n");
    for (bin, extra) in TOOLS {
        env.cmd(bin)
            .arg("bad")
            .args(*extra)
            .assert()
            .code(2)
            .stderr(predicate::str::starts_with(
                "failed to parse agent config \"bad\": line ",
            ))
            .stderr(predicate::function(|s: &str| s.lines().count() == 1));
        env.cmd(bin)
            .arg("neg")
            .args(*extra)
            .assert()
            .code(2)
            .stderr("memory.last_n must be non-negative\n");
        env.cmd(bin)
            .arg("nomodel")
            .args(*extra)
            .assert()
            .code(2)
            .stderr("agent config missing required field: model\n");
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JsonError {
    error: String,
    exit_code: u8,
}

#[test]
fn json_errors_are_one_object_on_stderr() {
    let env = Env::new();
    env.agent("nomodel", "name = \"nomodel\"\n");
    for (bin, extra) in TOOLS {
        let out = env
            .cmd(bin)
            .args(["nomodel", "--json"])
            .args(*extra)
            .assert()
            .code(2)
            .stdout("");
        let err: JsonError = serde_json::from_slice(&out.get_output().stderr).unwrap();
        assert_eq!(err.error, "agent config missing required field: model");
        assert_eq!(err.exit_code, 2);
        let out = env.cmd(bin).args(["--json", "--bogus"]).assert().code(1);
        let err: JsonError = serde_json::from_slice(&out.get_output().stderr).unwrap();
        assert_eq!(err.exit_code, 1);
    }
}
