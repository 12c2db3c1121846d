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

use predicates::prelude::PredicateBooleanExt;

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
        .stderr(format!(
            "Warning: not listed: {fifo}: failed to parse agent config \"fifo\": open {fifo}: not a regular file\n\
             Warning: not listed: {zero}: failed to parse agent config \"zero\": open {zero}: not a regular file\n",
            fifo = agents.join("fifo.toml").display(),
            zero = agents.join("zero.toml").display(),
        ));
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
    files_agent(&env, &work, r#"["*"]"#);
    let out = guarded(&env, "axe-run")
        .args(["a", "--dry-run"])
        .assert()
        .success()
        .stderr("")
        .get_output()
        .clone();
    let text = stdout(&out);
    // Not read, and said with why.
    assert!(
        text.contains(
            "--- Files (1) ---\nnotes.md\nLeft out (1):\n- huge.log: larger than the limit of 16 MiB\n"
        ),
        "{text:.2000}"
    );
}

// --- context files: one handle checked and read, a bounded walk ----------------

/// Agent `a` with `files` and `work` as its workdir.
fn files_agent(env: &Env, work: &Path, files: &str) {
    env.agent_file("a")
        .model("anthropic/m")
        .workdir(work)
        .toml(&format!("files = {files}"))
        .write();
}

/// A directory swapped for a symlink out of the workdir, again and again,
/// while runs read the file in it: no run ever reads the file outside.
#[test]
fn a_context_directory_swapped_for_a_symlink_out_is_never_read_through() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let env = Env::new();
    let work = env.root().join("work");
    let outside = env.root().join("outside");
    fs::create_dir_all(work.join("docs")).unwrap();
    fs::create_dir_all(&outside).unwrap();
    fs::write(work.join("docs/note.md"), "inside text").unwrap();
    fs::write(outside.join("note.md"), "OUTSIDE SECRET").unwrap();
    // A symlink that leads out from the start is skipped, as ever.
    symlink(outside.join("note.md"), work.join("out.md")).unwrap();
    files_agent(&env, &work, r#"["docs/note.md", "docs/*", "out.md"]"#);
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = crate::hardening_writes::swapper(work.join("docs"), outside, Arc::clone(&stop));
    for _ in 0..400 {
        let out = env
            .cmd("axe-run")
            .args(["a", "--dry-run"])
            .timeout(Duration::from_secs(10))
            .output()
            .unwrap();
        let text = stdout(&out);
        assert!(out.status.success(), "{out:?}");
        assert!(!text.contains("OUTSIDE SECRET"), "read outside:\n{text}");
    }
    stop.store(true, Ordering::Relaxed);
    assert!(swaps.join().unwrap() > 0);
    // The swapper ends with the directory back: its file is read.
    env.cmd("axe-run")
        .args(["a", "--dry-run"])
        .assert()
        .success()
        .stdout(predicates::str::contains("inside text"))
        .stdout(predicates::prelude::predicate::str::contains("OUTSIDE SECRET").not());
}

/// A tree deeper than the walk goes: 40 directories, a file at the bottom
/// and one on the way, and a FIFO the glob matches.
#[test]
fn a_context_glob_over_a_deep_tree_finishes_and_says_what_it_left_out() {
    let env = Env::new();
    let work = env.root().join("work");
    let mut dir = work.clone();
    for depth in 1..=40 {
        dir = dir.join(format!("d{depth}"));
        fs::create_dir_all(&dir).unwrap();
        if depth == 10 || depth == 40 {
            fs::write(dir.join("f.md"), format!("file at {depth}")).unwrap();
        }
    }
    mkfifo(&work.join("d1/pipe.md"));
    files_agent(&env, &work, r#"["**/*.md"]"#);
    let out = guarded(&env, "axe-run")
        .args(["a", "--dry-run"])
        .assert()
        .success()
        .get_output()
        .clone();
    let text = stdout(&out);
    let shallow = (1..=10)
        .map(|d| format!("d{d}"))
        .collect::<Vec<_>>()
        .join("/");
    let deep = (1..=32)
        .map(|d| format!("d{d}"))
        .collect::<Vec<_>>()
        .join("/");
    assert!(
        text.contains(&format!(
            "--- Files (1) ---\n{shallow}/f.md\nLeft out (2):\n- {deep}/d33: deeper than 32 directories below the workdir, not walked\n\
             - d1/pipe.md: not a regular file\n"
        )),
        "{text}"
    );
    assert!(!text.contains("file at 40"), "{text}");
    // The same with --json, and in -v's lines.
    let out = guarded(&env, "axe-run")
        .args(["a", "--dry-run", "--json"])
        .assert()
        .success()
        .get_output()
        .clone();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        json["files"],
        serde_json::json!([format!("{shallow}/f.md")])
    );
    assert_eq!(
        json["files_left_out"],
        serde_json::json!([
            format!("{deep}/d33: deeper than 32 directories below the workdir, not walked"),
            "d1/pipe.md: not a regular file"
        ])
    );
}

/// More files than the walk takes, and more bytes than a prompt holds.
#[test]
fn context_files_past_the_count_or_the_total_size_are_left_out_and_named() {
    let env = Env::new();
    let work = env.root().join("work");
    fs::create_dir_all(work.join("many")).unwrap();
    for i in 0..10_005 {
        fs::write(work.join(format!("many/{i:05}.txt")), "x").unwrap();
    }
    files_agent(&env, &work, r#"["many/*"]"#);
    let out = guarded(&env, "axe-run")
        .args(["a", "--dry-run"])
        .assert()
        .success()
        .get_output()
        .clone();
    let text = stdout(&out);
    assert!(
        text.contains("--- Files (10000) ---\nmany/00000.txt\n"),
        "{text:.300}"
    );
    assert!(
        text.contains("many/09999.txt\nLeft out (1):\n- many/10000.txt and the files after it: past 10000 files\n"),
        "{}",
        &text[text.len().saturating_sub(600)..]
    );
    // Three files of 7 MiB: the third would pass the 16 MiB of them all.
    let big = env.root().join("big");
    for name in ["a.log", "b.log", "c.log"] {
        big_text_file(&big.join(name), 7 * MIB);
    }
    files_agent(&env, &big, r#"["*.log"]"#);
    let out = guarded(&env, "axe-run")
        .args(["a", "--dry-run"])
        .assert()
        .success()
        .get_output()
        .clone();
    let text = stdout(&out);
    assert!(
        text.contains(
            "--- Files (2) ---\na.log\nb.log\nLeft out (1):\n- c.log: past the 16 MiB of all context files\n"
        ),
        "{:.300}",
        text.split("--- Files").nth(1).unwrap_or_default()
    );
    // A run says it with -v, before its call.
    let out = crate::wire::served_by(env.cmd("axe-run"), &crate::server::closed_port_url())
        .args(["a", "-v"])
        .write_stdin("go")
        .timeout(Duration::from_secs(30))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "Files:    2 file(s)\nLeft out: c.log: past the 16 MiB of all context files\n"
        ),
        "{err}"
    );
}
