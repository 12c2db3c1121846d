//! Files axe reads but did not write (agent files, `config.toml`, skills,
//! `--system-file`, `--request`, context files): a FIFO, a device or a
//! huge file is refused at once with one line, never waited on or read
//! whole.
//!
//! Every command runs with a deadline and a bound on its memory, as a
//! safety net: a regression then fails the test instead of hanging it on a
//! FIFO or filling the machine's memory from `/dev/zero`.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::util::{Env, stdout};

/// `bin` in this world with 10 s to finish and 1 GiB of address space;
/// arguments added to the command go to `bin`.
fn guarded(env: &Env, bin: &str) -> assert_cmd::Command {
    let mut cmd = env.shell("bash");
    cmd.args(["-c", "ulimit -v 1048576 && exec \"$@\"", "bash", bin])
        .timeout(Duration::from_secs(10));
    cmd
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

fn agents_dir(env: &Env) -> PathBuf {
    let dir = env.config_dir().join("axe/agents");
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// A sparse file of `len` bytes that starts with text, so it is no binary.
fn big_text_file(path: &Path, len: u64) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, "line\n".repeat(200)).unwrap();
    fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

/// Runs `cmd`, expects `code` and exactly `stderr`, and nothing on stdout.
fn fails_with(mut cmd: assert_cmd::Command, code: i32, stderr: &str) {
    cmd.assert().code(code).stdout("").stderr(stderr.to_owned());
}

const MIB: u64 = 1 << 20;

#[test]
fn agents_list_skips_a_fifo_or_a_device_and_lists_the_rest_symlinks_included() {
    let env = Env::new();
    let agents = agents_dir(&env);
    env.agent("plain", "name = \"plain\"\nmodel = \"x/y\"\n");
    // A dotfiles manager links agent files in from elsewhere.
    let kept = env.root().join("dotfiles/linked.toml");
    env.write(&kept, "name = \"linked\"\nmodel = \"x/y\"\n");
    symlink(&kept, agents.join("linked.toml")).unwrap();
    mkfifo(&agents.join("fifo.toml"));
    symlink("/dev/zero", agents.join("zero.toml")).unwrap();
    guarded(&env, "axe-agents")
        .arg("list")
        .assert()
        .success()
        .stdout("linked\nplain\n")
        .stderr("");
}

#[test]
fn a_fifo_or_device_agent_file_is_a_one_line_config_error() {
    let env = Env::new();
    let agents = agents_dir(&env);
    mkfifo(&agents.join("fifo.toml"));
    symlink("/dev/zero", agents.join("zero.toml")).unwrap();
    for name in ["fifo", "zero"] {
        let expected = format!(
            "failed to parse agent config \"{name}\": open {}: not a regular file\n",
            agents.join(format!("{name}.toml")).display()
        );
        let mut show = guarded(&env, "axe-agents");
        show.args(["show", name]);
        fails_with(show, 2, &expected);
        let mut run = guarded(&env, "axe-run");
        run.args([name, "--dry-run"]);
        fails_with(run, 2, &expected);
    }
}

#[test]
fn a_fifo_or_device_skill_is_a_one_line_config_error() {
    let env = Env::new();
    let skills = env.config_dir().join("axe/skills");
    fs::create_dir_all(&skills).unwrap();
    mkfifo(&skills.join("fifo.md"));
    symlink("/dev/zero", skills.join("zero.md")).unwrap();
    env.agent(
        "a",
        "name = \"a\"\nmodel = \"anthropic/m\"\nskill = \"skills/fifo.md\"\n",
    );
    let not_regular = |file: &str| {
        format!(
            "failed to read skill: read {}: not a regular file\n",
            skills.join(file).display()
        )
    };
    let mut run = guarded(&env, "axe-run");
    run.args(["a", "--dry-run"]);
    fails_with(run, 2, &not_regular("fifo.md"));
    // --skill resolves the same way and is read the same way.
    let mut run = guarded(&env, "axe-run");
    run.args(["a", "--dry-run", "--skill", "skills/zero.md"]);
    fails_with(run, 2, &not_regular("zero.md"));
}

#[test]
fn a_skill_over_the_limit_is_refused_naming_the_limit_and_its_size() {
    let env = Env::new();
    let skill = env.root().join("huge/SKILL.md");
    big_text_file(&skill, 16 * MIB + 1);
    env.agent(
        "a",
        &format!(
            "name = \"a\"\nmodel = \"anthropic/m\"\nskill = \"{}\"\n",
            skill.display()
        ),
    );
    let mut run = guarded(&env, "axe-run");
    run.args(["a", "--dry-run"]);
    fails_with(
        run,
        2,
        &format!(
            "failed to read skill: read {}: 16777217 bytes, over the limit of 16 MiB\n",
            skill.display()
        ),
    );
}

#[test]
fn a_fifo_config_toml_is_a_one_line_config_error() {
    let env = Env::new();
    env.agent("a", "name = \"a\"\nmodel = \"anthropic/m\"\n");
    let config = env.config_dir().join("axe/config.toml");
    mkfifo(&config);
    let expected = format!(
        "failed to read config file {}: not a regular file\n",
        config.display()
    );
    let mut run = guarded(&env, "axe-run");
    run.args(["a", "--dry-run"]);
    fails_with(run, 2, &expected);
    let mut llm = guarded(&env, "axe-llm");
    llm.args(["-m", "anthropic/m", "hi"]);
    fails_with(llm, 2, &expected);
}

#[test]
fn a_config_toml_over_the_limit_is_refused() {
    let env = Env::new();
    env.agent("a", "name = \"a\"\nmodel = \"anthropic/m\"\n");
    let config = env.config_dir().join("axe/config.toml");
    big_text_file(&config, MIB + 1);
    let mut run = guarded(&env, "axe-run");
    run.args(["a", "--dry-run"]);
    fails_with(
        run,
        2,
        &format!(
            "failed to read config file {}: 1048577 bytes, over the limit of 1 MiB\n",
            config.display()
        ),
    );
}

#[test]
fn a_key_set_twice_is_named_with_its_line() {
    let env = Env::new();
    env.agent(
        "twice",
        "name = \"twice\"\nmodel = \"anthropic/m\"\n[memory]\nenabled = true\nenabled = false\n",
    );
    let mut show = guarded(&env, "axe-agents");
    show.args(["show", "twice"]);
    fails_with(
        show,
        2,
        "failed to parse agent config \"twice\": line 5, column 1: duplicate key \"enabled\"\n",
    );
    env.agent("a", "name = \"a\"\nmodel = \"anthropic/m\"\n");
    env.write(
        &env.config_dir().join("axe/config.toml"),
        "[providers.anthropic]\napi_key = \"k\"\n\"api_key\" = \"k2\"\n",
    );
    let mut run = guarded(&env, "axe-run");
    run.args(["a", "--dry-run"]);
    fails_with(
        run,
        2,
        "failed to parse config.toml: line 3, column 1: duplicate key \"api_key\"\n",
    );
}

#[test]
fn axe_llm_refuses_a_fifo_system_file_or_request() {
    let env = Env::new();
    let fifo = env.root().join("fifo");
    mkfifo(&fifo);
    let mut system = guarded(&env, "axe-llm");
    system
        .args(["-m", "ollama/m", "--system-file"])
        .arg(&fifo)
        .arg("hi");
    fails_with(
        system,
        2,
        &format!(
            "failed to read system file {}: not a regular file\n",
            fifo.display()
        ),
    );
    let mut request = guarded(&env, "axe-llm");
    request.args(["-m", "ollama/m", "--request"]).arg(&fifo);
    fails_with(
        request,
        1,
        &format!(
            "failed to read request file {}: not a regular file\n",
            fifo.display()
        ),
    );
}

#[test]
fn a_context_file_over_the_limit_is_skipped_like_a_binary() {
    let env = Env::new();
    let work = env.root().join("work");
    fs::create_dir(&work).unwrap();
    fs::write(work.join("notes.md"), "plain").unwrap();
    big_text_file(&work.join("huge.log"), 16 * MIB + 1);
    env.agent(
        "a",
        &format!(
            "name = \"a\"\nmodel = \"anthropic/m\"\nfiles = [\"*\"]\nworkdir = \"{}\"\n",
            work.display()
        ),
    );
    let out = guarded(&env, "axe-run")
        .args(["a", "--dry-run"])
        .assert()
        .success()
        .stderr("")
        .get_output()
        .clone();
    let text = stdout(&out);
    assert!(
        text.contains("--- Files (1) ---\nnotes.md\n"),
        "{text:.2000}"
    );
    assert!(!text.contains("huge.log"), "{text:.2000}");
}
