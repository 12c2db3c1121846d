//! `axe SUBCOMMAND`: finding `axe-SUBCOMMAND` next to `axe`, then on PATH,
//! and passing everything through.

use serde_json::Value;

use crate::util::{Env, place_executable, set_mode, stdout};

/// An executable script `name` in `dir` that says who it is.
fn fake(env: &Env, dir: &str, name: &str) -> std::path::PathBuf {
    let path = env.root().join(dir).join(name);
    env.write(
        &path,
        format!("#!/bin/sh\necho \"{name} from {dir}: $*\"\nexit 7\n"),
    );
    set_mode(&path, 0o755);
    env.root().join(dir)
}

#[test]
fn subcommands_pass_stdin_stdout_and_exit_codes_through() {
    let env = Env::new();
    env.memory_agent("a", "");
    env.cmd("axe")
        .args(["mem", "append", "a", "--task", "t"])
        .write_stdin("from stdin")
        .assert()
        .success()
        .stdout("");
    env.cmd("axe")
        .args(["mem", "count", "a"])
        .assert()
        .success()
        .stdout("1\n");
    env.cmd("axe")
        .args(["mem-load", "a"])
        .assert()
        .success()
        .stdout(predicates::str::contains("**Result:** from stdin"));
    env.cmd("axe")
        .args(["agents", "show", "nope"])
        .assert()
        .code(2)
        .stdout("")
        .stderr("agent config not found: nope\n");
    env.cmd("axe")
        .args(["run", "a", "--model", "bogus"])
        .assert()
        .code(1);
    env.cmd("axe")
        .args(["config", "path"])
        .assert()
        .success()
        .stdout(format!("{}\n", env.config_dir().join("axe").display()));
}

#[test]
fn the_sibling_wins_over_path_and_path_adds_plugins() {
    let env = Env::new();
    let bin = fake(&env, "bin", "axe-run");
    fake(&env, "bin", "axe-hello-world");
    let path = format!("{}:/usr/bin:/bin", bin.display());
    // Ours, though PATH has another axe-run first.
    env.cmd("axe")
        .args(["run", "--version"])
        .env("PATH", &path)
        .assert()
        .success()
        .stdout(format!("axe-run version {}\n", env!("CARGO_PKG_VERSION")));
    env.cmd("axe")
        .args(["hello", "world", "x", "--y"])
        .env("PATH", &path)
        .assert()
        .code(7)
        .stdout("axe-hello-world from bin: x --y\n");
    let out = env
        .cmd("axe")
        .arg("--json")
        .env("PATH", &path)
        .assert()
        .success();
    let v: Value = serde_json::from_str(&stdout(out.get_output())).unwrap();
    let commands = v["commands"].as_array().unwrap();
    assert_eq!(commands[0]["name"], "run");
    assert!(commands[0]["path"].as_str().unwrap().ends_with("/axe-run"));
    assert_ne!(
        commands[0]["path"],
        bin.join("axe-run").to_string_lossy().as_ref()
    );
    let last = commands.last().unwrap();
    assert_eq!(last["name"], "hello world");
    assert_eq!(last["about"], "");
}

#[test]
fn help_lists_the_subcommands_found() {
    let env = Env::new();
    let out = env.cmd("axe").assert().success();
    let help = stdout(out.get_output());
    assert!(help.starts_with("axe: Run LLM agents from the shell and give them memory\n"));
    // Names are padded to the longest, `notes consolidate`, plus two.
    for (name, about) in [
        (
            "run",
            "Run an agent: build its prompt, call its model, print the answer",
        ),
        ("gc", "Analyze and trim agent memory"),
        ("agents", "Manage agent configurations"),
        ("config", "Manage axe configuration"),
        (
            "mem load",
            "Print the last entries of an agent's memory log",
        ),
        (
            "notes recall",
            "Print what an agent knows: world facts, MEMORY.md, recent days",
        ),
        ("help", "Print help, or a command's help"),
        ("version", "Print version"),
    ] {
        let line = format!("  {name:<19}{about}\n");
        assert!(help.contains(&line), "{line:?} not in\n{help}");
    }
    env.cmd("axe")
        .arg("help")
        .assert()
        .success()
        .stdout(help.clone());
    env.cmd("axe")
        .arg("--help")
        .assert()
        .success()
        .stdout(help.clone());
    env.cmd("axe").arg("-h").assert().success().stdout(help);
    let out = env
        .cmd("axe")
        .args(["help", "mem", "load"])
        .assert()
        .success();
    assert!(stdout(out.get_output()).starts_with("axe-mem-load: "));
}

#[test]
fn version_is_go_style() {
    let env = Env::new();
    let version = format!("axe version {}\n", env!("CARGO_PKG_VERSION"));
    env.cmd("axe")
        .arg("version")
        .assert()
        .success()
        .stdout(version.clone());
    env.cmd("axe")
        .arg("--version")
        .assert()
        .success()
        .stdout(version);
}

#[test]
fn unknown_subcommands_name_the_closest_match() {
    let env = Env::new();
    let cases = [
        (
            vec!["rn", "x"],
            "unknown command \"rn\" for \"axe\" (did you mean \"run\"?)\n",
        ),
        (
            vec!["agnets"],
            "unknown command \"agnets\" for \"axe\" (did you mean \"agents\"?)\n",
        ),
        (
            vec!["mem", "lod", "x"],
            "unknown command \"mem lod\" for \"axe\" (did you mean \"mem load\"?)\n",
        ),
        (
            vec!["mem"],
            "\"axe mem\" needs a subcommand: path, append, load, count, trim\n",
        ),
        // A path is never run, and nothing is near it.
        (
            vec!["../axe-run"],
            "unknown command \"../axe-run\" for \"axe\" (to give an agent a prompt: axe run <AGENT> ../axe-run)\n",
        ),
    ];
    for (args, message) in cases {
        env.cmd("axe")
            .args(&args)
            .assert()
            .code(1)
            .stdout("")
            .stderr(message);
    }
    env.cmd("axe")
        .arg("--jsn")
        .assert()
        .code(1)
        .stderr("unrecognized flag --jsn (did you mean --json?)\n");
}

#[test]
fn an_agent_or_a_prompt_in_place_of_a_command_says_how_to_run_it() {
    let env = Env::new();
    env.agent("local", "name = \"local\"\nmodel = \"ollama/m\"\n");
    let cases: [(&[&str], &str); 5] = [
        (
            &["local", "hi"],
            "unknown command \"local\" for \"axe\" (\"local\" is an agent: axe run local hi)\n",
        ),
        (
            &["locall", "what's up?"],
            "unknown command \"locall\" for \"axe\" (did you mean the agent \"local\"? axe run local 'what'\\''s up?')\n",
        ),
        // Free text: no command or agent is near, not even "gc" to "hi".
        (
            &["hi"],
            "unknown command \"hi\" for \"axe\" (to give an agent a prompt: axe run <AGENT> hi)\n",
        ),
        (
            &["fix the tests", "--fast"],
            "unknown command \"fix the tests\" for \"axe\" (to give an agent a prompt: axe run <AGENT> 'fix the tests' --fast)\n",
        ),
        // A typo of a command is still one, even with agents about.
        (
            &["rnu", "local"],
            "unknown command \"rnu\" for \"axe\" (did you mean \"run\"?)\n",
        ),
    ];
    for (args, message) in cases {
        env.cmd("axe")
            .args(args)
            .assert()
            .code(1)
            .stdout("")
            .stderr(message);
    }
}

#[test]
fn a_subcommand_that_cannot_start_is_an_error() {
    let env = Env::new();
    let dir = env.root().join("bin");
    // Executable, but its interpreter does not exist.
    env.write(&dir.join("axe-broken"), "#!/no/such/interpreter\n");
    set_mode(&dir.join("axe-broken"), 0o755);
    env.cmd("axe")
        .arg("broken")
        .env("PATH", &dir)
        .assert()
        .code(1)
        .stderr(format!(
            "failed to run {}: no such file or directory\n",
            dir.join("axe-broken").display()
        ));
}

/// `axe help NAME` asks about a command: a name no command is near is
/// "no such command", never an agent's command line built from `--help`.
#[test]
fn help_for_an_unknown_command_names_the_closest_or_says_there_is_none() {
    let env = Env::new();
    let out = env.cmd("axe").args(["help", "nope"]).assert().code(1);
    let out = out.get_output();
    assert_eq!(stdout(out), "");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "no such command \"nope\" for \"axe\" (axe help lists them)\n"
    );
    env.cmd("axe")
        .args(["help", "rn"])
        .assert()
        .code(1)
        .stdout("")
        .stderr("no such command \"rn\" for \"axe\" (did you mean \"run\"?)\n");
    env.cmd("axe")
        .args(["help", "mem", "lod"])
        .assert()
        .code(1)
        .stdout("")
        .stderr("no such command \"mem lod\" for \"axe\" (did you mean \"mem load\"?)\n");
    // An agent's name is no command either: its help is axe-run's.
    env.memory_agent("reviewer", "");
    env.cmd("axe")
        .args(["help", "reviewer"])
        .assert()
        .code(1)
        .stdout("")
        .stderr("no such command \"reviewer\" for \"axe\" (axe help lists them)\n");
    // What names a command still shows its help.
    let out = env.cmd("axe").args(["help", "gc"]).assert().success();
    assert!(stdout(out.get_output()).starts_with("axe-gc: "));
}

/// axe's own commands run inside `axe`: one `axe` with no `axe-*` beside
/// it or on PATH runs them all, `axe help` included, and a sync set up
/// through it gets merge drivers that reach `axe sync merge-driver`.
#[test]
fn own_commands_run_in_process_without_their_executables() {
    let env = Env::new();
    env.memory_agent("a", "");
    let alone = env.root().join("alone");
    std::fs::create_dir_all(&alone).unwrap();
    let axe = alone.join("axe");
    place_executable(assert_cmd::cargo::cargo_bin!("axe"), &axe);
    let run = |args: &[&str]| {
        let mut cmd = env.program(&axe);
        cmd.args(args).env("PATH", "/usr/bin:/bin");
        cmd
    };
    run(&["mem", "count", "a"]).assert().success().stdout("0\n");
    run(&["agents", "show", "nope"])
        .assert()
        .code(2)
        .stderr("agent config not found: nope\n");
    let out = run(&["help", "mem", "load"]).assert().success();
    assert!(stdout(out.get_output()).starts_with("axe-mem-load: "));
    let out = run(&["--json"]).assert().success();
    let v: Value = serde_json::from_str(&stdout(out.get_output())).unwrap();
    assert_eq!(v["commands"][0]["name"], "run");
    assert_eq!(v["commands"][0]["path"], axe.to_string_lossy().as_ref());

    let repo = env.root().join("repo");
    run(&["sync", "init", "--dir"])
        .arg(&repo)
        .assert()
        .success();
    let driver = env
        .std_program("git")
        .args(["config", "--get", "merge.axe-runlog.driver"])
        .current_dir(&repo)
        .output()
        .unwrap();
    let driver = stdout(&driver);
    assert_eq!(
        driver.trim(),
        format!("'{}' 'sync' merge-driver runlog %O %A %B %P", axe.display())
    );
    // The driver's command line, as git runs it, merges.
    for f in ["o", "a", "b"] {
        env.write(&repo.join(f), "");
    }
    let line = driver
        .trim()
        .replace("%O", "o")
        .replace("%A", "a")
        .replace("%B", "b")
        .replace("%P", "a.md");
    env.std_program("sh")
        .args(["-c", &line])
        .current_dir(&repo)
        .env("PATH", "/usr/bin:/bin")
        .status()
        .unwrap()
        .success()
        .then_some(())
        .expect("the merge driver runs");
}

/// Each `axe-NAME` starts the `axe` beside it as `axe-NAME`: through a
/// symbolic link from elsewhere it still finds its own `axe`; alone it
/// says what it could not run; and `axe` itself started under a command's
/// name (a link, as packagers make) is that command.
#[test]
fn the_executables_start_the_axe_beside_them() {
    let env = Env::new();
    env.memory_agent("a", "");
    let linked = env.root().join("linked");
    std::fs::create_dir_all(&linked).unwrap();
    let count = assert_cmd::cargo::cargo_bin!("axe-mem-count");
    std::os::unix::fs::symlink(count, linked.join("axe-mem-count")).unwrap();
    env.program(linked.join("axe-mem-count"))
        .arg("a")
        .env("PATH", "/usr/bin:/bin")
        .assert()
        .success()
        .stdout("0\n");

    let alone = env.root().join("alone");
    std::fs::create_dir_all(&alone).unwrap();
    place_executable(count, &alone.join("axe-mem-count"));
    env.program(alone.join("axe-mem-count"))
        .arg("a")
        .assert()
        .code(1)
        .stdout("")
        .stderr(format!(
            "failed to run {}: no such file or directory\n",
            alone.join("axe").display()
        ));

    let named = env.root().join("named");
    std::fs::create_dir_all(&named).unwrap();
    let axe = assert_cmd::cargo::cargo_bin!("axe");
    std::os::unix::fs::symlink(axe, named.join("axe-mem-count")).unwrap();
    env.program(named.join("axe-mem-count"))
        .args(["a", "--json"])
        .assert()
        .success()
        .stdout(predicates::str::contains("\"entries\":0"));
}

/// What `cargo install` makes, one directory of every executable, works
/// on `PATH`: each `axe-NAME`, in a pipeline, is its command (its help,
/// its exit code), run by the `axe` of that directory in the launcher's
/// own process, so the pid a caller holds (to signal it, to wait for it)
/// is the command's.
#[test]
fn every_executable_runs_from_an_installed_directory() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;

    let env = Env::new();
    env.memory_agent("a", "");
    let bin = env.root().join("installed").join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let names: Vec<&str> = axe::commands::ALL.iter().map(|c| c.name).collect();
    for name in names.iter().chain(&["axe"]) {
        place_executable(&assert_cmd::cargo::cargo_bin(name), &bin.join(name));
    }
    assert_eq!(std::fs::read_dir(&bin).unwrap().count(), 31);
    let path = format!("{}:/usr/bin:/bin", bin.display());
    for name in &names {
        let out = env
            .std_program("sh")
            .args(["-c", &format!("{name} --help | head -n 1")])
            .env("PATH", &path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}: {out:?}");
        assert!(
            stdout(&out).starts_with(&format!("{name}: ")),
            "{name}: {out:?}"
        );
    }
    let out = env
        .std_program("sh")
        .args(["-c", "echo | axe-agents show nope; echo \"exit $?\""])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "exit 2\n");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "agent config not found: nope\n"
    );

    // The process the caller started is the installed `axe`, named as
    // the command, with the arguments it was given.
    let mut mcp = env
        .std_program("axe-mcp")
        .arg("a")
        .env("PATH", &path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = mcp.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    )
    .unwrap();
    let mut answer = String::new();
    BufReader::new(mcp.stdout.take().unwrap())
        .read_line(&mut answer)
        .unwrap();
    assert!(answer.contains(r#""id":1"#), "{answer}");
    let proc = std::path::Path::new("/proc").join(mcp.id().to_string());
    assert_eq!(
        std::fs::read_link(proc.join("exe")).unwrap(),
        bin.join("axe")
    );
    assert_eq!(
        std::fs::read(proc.join("cmdline")).unwrap(),
        b"axe-mcp\0a\0"
    );
    drop(stdin);
    assert!(mcp.wait().unwrap().success());
}

/// A launcher whose `axe` cannot start says why in one line, its path
/// shown as every message shows a path (control characters spelled out),
/// and exits 1.
#[test]
fn a_launcher_whose_axe_cannot_start_says_why() {
    let env = Env::new();
    let count = assert_cmd::cargo::cargo_bin!("axe-mem-count");
    let odd = env.root().join("odd\x1b[1m\ndir");
    std::fs::create_dir_all(&odd).unwrap();
    place_executable(count, &odd.join("axe-mem-count"));
    env.program(odd.join("axe-mem-count"))
        .arg("a")
        .assert()
        .code(1)
        .stdout("")
        .stderr(format!(
            "failed to run {}/odd\\x1b[1m\\ndir/axe: no such file or directory\n",
            env.root().display()
        ));

    let unrunnable = env.root().join("unrunnable");
    std::fs::create_dir_all(&unrunnable).unwrap();
    place_executable(count, &unrunnable.join("axe-mem-count"));
    env.write(&unrunnable.join("axe"), "not a program\n");
    set_mode(&unrunnable.join("axe"), 0o644);
    env.program(unrunnable.join("axe-mem-count"))
        .arg("a")
        .assert()
        .code(1)
        .stdout("")
        .stderr(format!(
            "failed to run {}: permission denied\n",
            unrunnable.join("axe").display()
        ));
}
