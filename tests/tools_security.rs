//! The built-in tools hold where the Go `axe` admits it does not: paths
//! that lead out of the workdir by `..`, an absolute path, a symlink or a
//! directory swapped for a symlink in the middle of a call (forced by a
//! gate); commands that look for keys, read or write outside, or reach
//! the network under each engine (bubblewrap, Landlock: see [`engine`]);
//! without either, Go's text check and a plain word that it is not a
//! boundary; `url_fetch` of loopback, unspecified
//! and private addresses, names that resolve to them, and redirects.

use std::fs;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::thread;

use serde_json::json;

use crate::run::run;
use crate::server::{Answer, PATIENCE, Server};
use crate::tools::{only_result, path_without_bwrap, results, run_a, script, tool_agent};
use crate::util::{Env, have, unavailable};
use crate::wire::KEY;

// --- paths ---------------------------------------------------------------

#[test]
fn no_path_leads_outside_the_workdir() {
    let env = Env::new();
    let work = tool_agent(
        &env,
        "\"read_file\", \"write_file\", \"edit_file\", \"list_directory\"",
        "",
    );
    let outside = env.root().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("secret"), "s3cret\n").unwrap();
    symlink(&outside, work.join("door")).unwrap();
    symlink(outside.join("secret"), work.join("secret-link")).unwrap();
    symlink("../outside", work.join("rel-door")).unwrap();
    let secret = outside.join("secret");
    let server = script(vec![vec![
        ("read_file", json!({"path": "../outside/secret"})),
        ("read_file", json!({"path": secret.to_str().unwrap()})),
        ("read_file", json!({"path": "door/secret"})),
        ("read_file", json!({"path": "secret-link"})),
        ("list_directory", json!({"path": "rel-door"})),
        (
            "write_file",
            json!({"path": "../outside/new", "content": "x"}),
        ),
        ("write_file", json!({"path": "door/new", "content": "x"})),
        (
            "write_file",
            json!({"path": "door/deep/er/new", "content": "x"}),
        ),
        ("write_file", json!({"path": "secret-link", "content": "x"})),
        (
            "edit_file",
            json!({"path": "door/secret", "old_string": "s3cret", "new_string": "x"}),
        ),
        (
            "write_file",
            json!({"path": "/tmp/axe-abs-escape", "content": "x"}),
        ),
    ]]);
    run_a(&env, &server, &[]);
    let got = results(&server, 0);
    let escapes = ("path escapes workdir".to_owned(), true);
    let absolute = ("absolute paths are not allowed".to_owned(), true);
    assert_eq!(
        got,
        [
            escapes.clone(),
            absolute.clone(),
            escapes.clone(),
            escapes.clone(),
            escapes.clone(),
            escapes.clone(),
            escapes.clone(),
            escapes.clone(),
            escapes.clone(),
            escapes,
            absolute,
        ]
    );
    assert_eq!(
        fs::read_to_string(outside.join("secret")).unwrap(),
        "s3cret\n"
    );
    let names: Vec<_> = fs::read_dir(&outside)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names, ["secret"], "something was made outside");
    assert!(!Path::new("/tmp/axe-abs-escape").exists());
}

#[test]
fn links_that_stay_inside_are_followed() {
    let env = Env::new();
    let work = tool_agent(&env, "\"read_file\", \"write_file\"", "");
    fs::create_dir_all(work.join("real")).unwrap();
    fs::write(work.join("real/f"), "inside\n").unwrap();
    symlink("real", work.join("alias")).unwrap();
    let server = script(vec![vec![
        ("read_file", json!({"path": "alias/f"})),
        (
            "write_file",
            json!({"path": "alias/../real/g", "content": "ok"}),
        ),
    ]]);
    run_a(&env, &server, &[]);
    assert_eq!(
        results(&server, 0),
        [
            ("1: inside".into(), false),
            ("wrote 2 bytes to alias/../real/g".into(), false)
        ]
    );
    assert_eq!(fs::read_to_string(work.join("real/g")).unwrap(), "ok");
}

/// The directory a write goes to is swapped for a symlink out between the
/// tool finding it and writing: the tool waits at a gate (a FIFO, debug
/// builds only) while the test swaps, and the write still lands in the
/// directory it found, inside.
#[test]
fn a_directory_swapped_for_a_link_mid_call_leads_nowhere() {
    let env = Env::new();
    let work = tool_agent(&env, "\"write_file\"", "");
    let outside = env.root().join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::create_dir_all(work.join("d")).unwrap();
    let fifo = env.root().join("gate");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let server = script(vec![vec![(
        "write_file",
        json!({"path": "d/f", "content": "data"}),
    )]]);
    let mut cmd = run(&env, &server.url);
    cmd.env("AXE_TEST_TOOL_GATE", &fifo).arg("a");
    let running = thread::spawn(move || cmd.assert().success());
    // The FIFO opens for writing once the tool waits at the gate, its
    // directory held (until then there is no reader: ENXIO).
    let gate = {
        use std::os::unix::fs::OpenOptionsExt;
        let since = std::time::Instant::now();
        loop {
            let open = fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&fifo);
            match open {
                Ok(gate) => break gate,
                Err(_) if since.elapsed() < PATIENCE => {
                    thread::sleep(std::time::Duration::from_millis(5))
                }
                Err(e) => panic!("the tool never reached the gate: {e}"),
            }
        }
    };
    fs::rename(work.join("d"), work.join("d-moved")).unwrap();
    symlink(&outside, work.join("d")).unwrap();
    drop(gate);
    running.join().unwrap();
    assert_eq!(only_result(&server), ("wrote 4 bytes to d/f".into(), false));
    assert_eq!(fs::read_to_string(work.join("d-moved/f")).unwrap(), "data");
    assert_eq!(
        fs::read_dir(&outside).unwrap().count(),
        0,
        "written outside"
    );
}

// --- commands ------------------------------------------------------------

#[test]
fn no_key_reaches_a_command() {
    let env = Env::new();
    let work = tool_agent(&env, "\"run_command\"", "");
    let server = script(vec![vec![(
        "run_command",
        json!({"command": "env | sort"}),
    )]]);
    run(&env, &server.url)
        .env("TAVILY_API_KEY", "tvly-SECRET")
        .env("MY_TOKEN", "tok-SECRET")
        .arg("a")
        .assert()
        .success();
    let (env_seen, is_error) = only_result(&server);
    assert!(!is_error, "{env_seen}");
    assert!(
        !env_seen.contains(KEY) && !env_seen.contains("SECRET"),
        "{env_seen}"
    );
    let names: Vec<&str> = env_seen
        .lines()
        .filter_map(|l| l.split('=').next())
        .collect();
    for name in &names {
        assert!(
            [
                "HOME", "TMPDIR", "PATH", "LANG", "LC_ALL", "USER", "LOGNAME", "TERM", "PWD",
                "SHLVL", "_", "OLDPWD"
            ]
            .contains(name),
            "{name} reached the command: {env_seen}"
        );
    }
    assert!(
        env_seen.contains(&format!("HOME={}\n", work.display())),
        "{env_seen}"
    );
    assert!(
        env_seen.contains(&format!("TMPDIR={}\n", work.display())),
        "{env_seen}"
    );
}

/// The engine the sandbox tests run under: `AXE_TEST_SANDBOX`, which
/// `axe-run` reads too (test builds only): `landlock` hides bubblewrap
/// from it, `none` Landlock as well (Go's text check alone); unset,
/// bubblewrap. `.ci/run` runs the sandbox modules once per engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Bwrap,
    Landlock,
    Neither,
}

impl Engine {
    /// How `-v` begins its line on it.
    pub fn said(self) -> &'static str {
        match self {
            Engine::Bwrap => "Sandbox:  bubblewrap (",
            Engine::Landlock => "Sandbox:  Landlock ABI ",
            Engine::Neither => "Sandbox:  none: ",
        }
    }
}

/// The engine the tests run under, when it works here; when not, the
/// test says so (and fails under `AXE_TEST_ALL`).
pub fn engine() -> Option<Engine> {
    let engine = match std::env::var("AXE_TEST_SANDBOX").as_deref() {
        Ok("landlock") => Engine::Landlock,
        Ok("none") => Engine::Neither,
        _ => Engine::Bwrap,
    };
    let works = match engine {
        Engine::Bwrap => bwrap_works(),
        Engine::Landlock => landlock_works(),
        Engine::Neither => true,
    };
    works.then_some(engine)
}

/// Whether the kernel offers Landlock: what `axe-run --dry-run` says it
/// would hold commands with. When not, the test says so.
pub fn landlock_works() -> bool {
    static FOUND: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let works = *FOUND.get_or_init(|| {
        let env = Env::new();
        tool_agent(&env, "\"run_command\"", "[sandbox]\nengine = \"landlock\"");
        let out = run(&env, "http://127.0.0.1:9")
            .env_remove("AXE_TEST_SANDBOX")
            .args(["a", "--dry-run"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).contains("Sandbox:       Landlock ABI ")
    });
    if !works {
        unavailable(
            "the kernel offers no Landlock",
            "run the tests on Linux 5.13 or later with Landlock on",
        );
    }
    works
}

/// Whether bubblewrap works here; when not, the test says so (and fails
/// under `AXE_TEST_ALL`).
pub fn bwrap_works() -> bool {
    if !have("bwrap") {
        return false;
    }
    let ok = std::process::Command::new("bwrap")
        .args(["--ro-bind", "/", "/", "--unshare-all", "--", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        unavailable(
            "bwrap cannot make namespaces here",
            "run the tests where it can",
        );
    }
    ok
}

/// Under each engine: secrets and axe's config out of reach, nothing
/// written outside the workdir, the system readable; bubblewrap hides
/// (empty directories, a private `/tmp`, its own processes), Landlock
/// refuses; without either, Go's text check refuses the plain spellings,
/// and `-v` says it is no boundary.
#[test]
fn in_the_sandbox_a_command_cannot_read_secrets_or_write_outside() {
    let Some(engine) = engine() else {
        return;
    };
    let env = Env::new();
    let work = tool_agent(&env, "\"run_command\"", "");
    // What a command must not see or touch: the user's home (outside
    // /tmp, which the sandbox has its own of anyway), axe's config (keys),
    // another directory of the user's.
    let home = PathBuf::from(format!("/var/tmp/axe-sandbox-home-{}", std::process::id()));
    let home_secret = home.join(".ssh/id");
    env.write(&home_secret, "PRIVATE");
    let config_secret = env.config_dir().join("axe/config.toml");
    env.write(&config_secret, "api_key = \"PRIVATE\"");
    let outside = env.root().join("outside");
    fs::create_dir_all(&outside).unwrap();
    let var_tmp = format!("/var/tmp/axe-sandbox-escape-{}", std::process::id());
    let server = script(vec![vec![
        (
            "run_command",
            json!({"command": format!("cat {}", home_secret.display())}),
        ),
        (
            "run_command",
            json!({"command": format!("cat {}", config_secret.display())}),
        ),
        (
            "run_command",
            json!({"command": format!("echo x > {}/f", outside.display())}),
        ),
        (
            "run_command",
            json!({"command": "echo private > /tmp/axe-sandbox-tmp && cat /tmp/axe-sandbox-tmp"}),
        ),
        (
            "run_command",
            json!({"command": "echo in > made-here && cat made-here"}),
        ),
        (
            "run_command",
            json!({"command": "ls /proc | grep -c '^[0-9]'"}),
        ),
        ("run_command", json!({"command": "head -c 4 /etc/passwd"})),
        (
            "run_command",
            json!({"command": format!("echo x > {var_tmp}")}),
        ),
        // axe-run's own environment holds the key: out of sight. (Part of
        // it: axe redacts the whole key in what the provider sends.)
        (
            "run_command",
            json!({"command": format!("cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c {} || true", &KEY[3..])}),
        ),
    ]]);
    let out = run(&env, &server.url)
        .env("HOME", &home)
        .args(["a", "-v"])
        .assert()
        .success();
    fs::remove_dir_all(&home).unwrap();
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    let said = match engine {
        Engine::Bwrap => {
            "Sandbox:  bubblewrap (read-only filesystem, writable workdir, private /tmp, network off)"
        }
        Engine::Landlock => {
            "network off; it cannot hold a read-only place inside the workdir, nor a PID namespace"
        }
        Engine::Neither => "which is not a boundary",
    };
    assert!(err.contains(engine.said()) && err.contains(said), "{err}");
    let got = results(&server, 0);
    let _ = fs::remove_file(&var_tmp);
    // Hidden by bubblewrap (the tests' own directories are under /tmp,
    // which it has its own of), refused by Landlock and by the check.
    let (hidden, gone, read_only) = match engine {
        Engine::Bwrap => (
            "No such file",
            "Directory nonexistent",
            "Read-only file system",
        ),
        Engine::Landlock => (
            "Permission denied",
            "Permission denied",
            "Permission denied",
        ),
        Engine::Neither => ("command rejected", "command rejected", "command rejected"),
    };
    for (i, what) in [(0, "home"), (1, "config")] {
        assert!(
            got[i].1 && got[i].0.contains(hidden) && !got[i].0.contains("PRIVATE"),
            "{what} was readable: {:?}",
            got[i]
        );
    }
    assert!(got[2].1 && got[2].0.contains(gone), "{:?}", got[2]);
    assert!(got[7].1 && got[7].0.contains(read_only), "{:?}", got[7]);
    assert!(!Path::new(&var_tmp).exists());
    assert!(
        !Path::new("/tmp/axe-sandbox-tmp").exists(),
        "/tmp was not private"
    );
    assert_eq!(got[4], ("in\n".into(), false));
    assert_eq!(fs::read_to_string(work.join("made-here")).unwrap(), "in\n");
    assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
    match engine {
        Engine::Bwrap => {
            assert_eq!(got[3], ("private\n".into(), false));
            let pids: u32 = got[5].0.trim().parse().unwrap();
            assert!(pids <= 4, "it sees {pids} processes");
        }
        // No private /tmp, and other processes in sight (`-v` says so);
        // their environments are not.
        Engine::Landlock => assert!(got[3].1 && got[3].0.contains(hidden), "{:?}", got[3]),
        Engine::Neither => {
            for i in [3, 5, 6, 8] {
                assert!(got[i].1 && got[i].0.starts_with(hidden), "{:?}", got[i]);
            }
            return;
        }
    }
    // The system itself stays readable, as to any program.
    assert_eq!(got[6], ("root".into(), false));
    assert_eq!(got[8], ("0\n".into(), false));
}

/// Under either engine the network is off unless asked (under Landlock,
/// no socket at all, UDP included); without either, nothing stops it, as
/// `-v` says.
#[test]
fn in_the_sandbox_the_network_is_off_unless_asked() {
    let Some(engine) = engine() else {
        return;
    };
    if !have("python3") {
        return;
    }
    let fetch = |network: &str| {
        let env = Env::new();
        tool_agent(
            &env,
            "\"run_command\"",
            &format!("[sandbox]\nnetwork = {network}"),
        );
        let target = Server::start(vec![Answer::raw(200, "reached")]);
        let command = format!(
            "python3 -c \"import urllib.request as u; print(u.urlopen('{}/x', timeout=5).read().decode())\"",
            target.url
        );
        let server = script(vec![vec![("run_command", json!({"command": command}))]]);
        run_a(&env, &server, &[]);
        (only_result(&server), target.requests().len())
    };
    // UDP too, which Landlock's own rules leave alone before ABI 10: a
    // datagram to a loopback port of the host's.
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_read_timeout(Some(std::time::Duration::from_millis(500)))
        .unwrap();
    let env = Env::new();
    tool_agent(&env, "\"run_command\"", "");
    let port = udp.local_addr().unwrap().port();
    let server = script(vec![vec![(
        "run_command",
        json!({"command": format!("python3 -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', {port}))\"")}),
    )]]);
    run_a(&env, &server, &[]);
    let got = udp.recv(&mut [0; 8]).is_ok();
    assert_eq!(got, engine == Engine::Neither, "{:?}", only_result(&server));
    let (result, reached) = fetch("false");
    match engine {
        Engine::Neither => assert_eq!((result, reached), (("reached\n".into(), false), 1)),
        _ => assert!(result.1 && reached == 0, "{result:?}"),
    }
    let (result, reached) = fetch("true");
    assert_eq!((result, reached), (("reached\n".into(), false), 1));
}

#[test]
fn without_bubblewrap_gos_check_applies_and_is_called_no_boundary() {
    let env = Env::new();
    tool_agent(&env, "\"run_command\"", "");
    let bin = path_without_bwrap(&env);
    let server = script(vec![vec![
        ("run_command", json!({"command": "cat /etc/passwd"})),
        ("run_command", json!({"command": "cat ../../etc/passwd"})),
        ("run_command", json!({"command": "cat ~/.ssh/id"})),
        // What Go's issue #31 shows: the shell builds what the check never
        // sees. Said plainly: this is not a boundary.
        (
            "run_command",
            json!({"command": r"cat $(printf '\057etc\057hostname') >/dev/null && echo read"}),
        ),
    ]]);
    let out = run(&env, &server.url)
        .env("PATH", &bin)
        .env("AXE_TEST_SANDBOX", "none")
        .args(["a", "-v"])
        .assert()
        .success();
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        err.contains("Sandbox:  none: bubblewrap (bwrap) is not on PATH, and Landlock is hidden (AXE_TEST_SANDBOX=none); run_command only checks the command's text, which is not a boundary"),
        "{err}"
    );
    let got = results(&server, 0);
    let work = env.root().join("work");
    assert_eq!(
        got[0],
        (
            format!(
                "command rejected: absolute path \"/etc/passwd\" is outside the working directory \"{}\"; use relative paths instead",
                work.display()
            ),
            true
        )
    );
    assert!(
        got[1].1 && got[1].0.starts_with("command rejected: parent traversal"),
        "{:?}",
        got[1]
    );
    assert!(
        got[2].1
            && got[2]
                .0
                .starts_with("command rejected: home directory expansion \"~/\""),
        "{:?}",
        got[2]
    );
    assert_eq!(got[3], ("read\n".into(), false));
}

/// `require` is met by either engine; with neither (or without the one
/// named), the run is refused before the model is asked anything.
#[test]
fn sandbox_require_refuses_to_run_without_either_engine() {
    let env = Env::new();
    let bin = path_without_bwrap(&env);
    for (engine, hide, said) in [
        (
            "auto",
            "none",
            "run_command needs bubblewrap or Landlock ([sandbox] require = true), but bubblewrap (bwrap) is not on PATH, and Landlock is hidden (AXE_TEST_SANDBOX=none)",
        ),
        (
            "bwrap",
            "bwrap",
            "run_command needs bubblewrap ([sandbox] require = true), but bubblewrap (bwrap) is not on PATH",
        ),
        (
            "landlock",
            "none",
            "run_command needs Landlock ([sandbox] require = true), but Landlock is hidden (AXE_TEST_SANDBOX=none)",
        ),
    ] {
        tool_agent(
            &env,
            "\"run_command\"",
            &format!("[sandbox]\nrequire = true\nengine = \"{engine}\""),
        );
        let server = script(vec![]);
        run(&env, &server.url)
            .env("PATH", &bin)
            .env("AXE_TEST_SANDBOX", hide)
            .arg("a")
            .assert()
            .code(2)
            .stderr(predicates::str::contains(said));
        assert!(server.requests().is_empty(), "the model was called");
    }
}

/// An engine axe does not know is the agent file's error, with its place.
#[test]
fn an_unknown_sandbox_engine_is_refused() {
    let env = Env::new();
    tool_agent(&env, "\"run_command\"", "[sandbox]\nengine = \"docker\"");
    let server = script(vec![]);
    run(&env, &server.url)
        .arg("a")
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "unknown variant `docker`, expected one of `auto`, `bwrap`, `landlock`",
        ));
    assert!(server.requests().is_empty(), "the model was called");
}

/// Where bubblewrap is missing (or cannot make namespaces: a container),
/// Landlock holds the commands, and `require` is met.
#[test]
fn without_bubblewrap_landlock_holds_commands_and_meets_require() {
    if !landlock_works() {
        return;
    }
    let env = Env::new();
    tool_agent(&env, "\"run_command\"", "[sandbox]\nrequire = true");
    let bin = path_without_bwrap(&env);
    let fake = bin.join("bwrap");
    fs::write(
        &fake,
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n",
    )
    .unwrap();
    crate::util::set_mode(&fake, 0o755);
    let secret = env.config_dir().join("axe/config.toml");
    env.write(&secret, "api_key = \"PRIVATE\"");
    let server = script(vec![vec![(
        "run_command",
        json!({"command": format!("cat {}", secret.display())}),
    )]]);
    let (_, err) = run_a_with(&env, &server, &bin);
    assert!(err.contains("Sandbox:  Landlock ABI "), "{err}");
    let got = only_result(&server);
    assert!(got.1 && got.0.contains("Permission denied"), "{got:?}");
}

/// Agent `a` run against `server` with `PATH` `bin` and every engine
/// there is; its stdout and stderr.
fn run_a_with(env: &Env, server: &Server, bin: &Path) -> (String, String) {
    let out = run(env, &server.url)
        .env("PATH", bin)
        .env_remove("AXE_TEST_SANDBOX")
        .args(["a", "-v"])
        .assert()
        .success();
    let output = out.get_output();
    (
        String::from_utf8(output.stdout.clone()).unwrap(),
        String::from_utf8(output.stderr.clone()).unwrap(),
    )
}

// --- url_fetch -----------------------------------------------------------

#[test]
fn url_fetch_refuses_loopback_unspecified_and_private_addresses() {
    let env = Env::new();
    tool_agent(&env, "\"url_fetch\"", "");
    let target = Server::start(vec![Answer::raw(200, "secret")]);
    let port = target.url.rsplit(':').next().unwrap().to_owned();
    let server = script(vec![vec![
        (
            "url_fetch",
            json!({"url": format!("http://127.0.0.1:{port}/")}),
        ),
        ("url_fetch", json!({"url": format!("http://[::1]:{port}/")})),
        (
            "url_fetch",
            json!({"url": format!("http://0.0.0.0:{port}/")}),
        ),
        (
            "url_fetch",
            json!({"url": format!("http://localhost:{port}/")}),
        ),
        (
            "url_fetch",
            json!({"url": format!("http://[::ffff:127.0.0.1]:{port}/")}),
        ),
        (
            "url_fetch",
            json!({"url": "http://169.254.169.254/latest/meta-data/"}),
        ),
        ("url_fetch", json!({"url": "file:///etc/passwd"})),
    ]]);
    run_a(&env, &server, &[]);
    let got = results(&server, 0);
    assert_eq!(
        got[0],
        (
            "host \"127.0.0.1\" resolves to private address 127.0.0.1".into(),
            true
        )
    );
    assert_eq!(
        got[1],
        ("host \"::1\" resolves to private address ::1".into(), true)
    );
    assert_eq!(
        got[2],
        (
            "host \"0.0.0.0\" resolves to private address 0.0.0.0".into(),
            true
        )
    );
    assert!(
        got[3].1
            && got[3]
                .0
                .starts_with("host \"localhost\" resolves to private address "),
        "{:?}",
        got[3]
    );
    assert_eq!(
        got[4],
        (
            "host \"::ffff:127.0.0.1\" resolves to private address ::ffff:127.0.0.1".into(),
            true
        )
    );
    assert_eq!(
        got[5],
        (
            "host \"169.254.169.254\" resolves to private address 169.254.169.254".into(),
            true
        )
    );
    assert_eq!(
        got[6],
        (
            "unsupported scheme \"file\": only http and https are allowed".into(),
            true
        )
    );
    assert!(
        target.requests().is_empty(),
        "a private address was reached"
    );
}

/// IPv6 spellings that carry the loopback address where the guard once
/// read only the mapped and well-known forms: IPv4-translated (SIIT) and
/// the local-use NAT64 prefix, whose embedding position varies.
#[test]
fn url_fetch_refuses_loopback_written_as_translated_ipv6() {
    let env = Env::new();
    tool_agent(&env, "\"url_fetch\"", "");
    let target = Server::start(vec![Answer::raw(200, "secret")]);
    let port = target.url.rsplit(':').next().unwrap().to_owned();
    let hosts = ["::ffff:0:7f00:1", "64:ff9b:1::7f00:1", "64:ff9b:1:7f00:1::"];
    let server = script(vec![
        hosts
            .iter()
            .map(|h| ("url_fetch", json!({"url": format!("http://[{h}]:{port}/")})))
            .collect(),
    ]);
    run_a(&env, &server, &[]);
    let got = results(&server, 0);
    for (host, got) in hosts.iter().zip(&got) {
        assert_eq!(
            got,
            &(
                format!("host \"{host}\" resolves to private address {host}"),
                true
            )
        );
    }
    assert!(
        target.requests().is_empty(),
        "a private address was reached"
    );
}

/// With loopback let through (a debug-build knob for these tests), the
/// local server stands in for a public one.
#[test]
fn url_fetch_returns_text_and_checks_every_redirect() {
    let env = Env::new();
    tool_agent(
        &env,
        "\"url_fetch\"",
        "allowed_hosts = [\"Public.test\", \"b.test\", \"rebind.test\"]",
    );
    // A second "public" host on its own loopback address: a redirect there
    // must be dialled by its own lookup, not the first host's address.
    let other = TcpListener::bind("127.0.0.2:0").unwrap();
    let other_port = other.local_addr().unwrap().port();
    let other_seen = thread::spawn(move || {
        let (mut conn, _) = other.accept().unwrap();
        let mut request = [0; 2048];
        let n = conn.read(&mut request).unwrap();
        conn.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nother")
            .unwrap();
        String::from_utf8_lossy(&request[..n]).into_owned()
    });
    let page = "<html><head><style>p{}</style><script>alert(1)</script></head><body><p>Hello &amp; welcome</p></body></html>";
    let site = Server::route(move |req| match req.path.as_str() {
        "/page" => Answer::raw(200, page).with_header("content-type", "text/html; charset=utf-8"),
        "/long" => Answer::raw(200, &"y".repeat(12_000)),
        "/gone" => Answer::raw(404, "no such page"),
        "/to-metadata" => Answer::raw(302, "").with_header("location", "http://169.254.169.254/"),
        "/to-rebind" => Answer::raw(302, "")
            .with_header("location", "/x")
            .with_header("location", "http://rebind.test/"),
        "/to-other" => Answer::raw(301, "")
            .with_header("location", &format!("http://b.test:{other_port}/there")),
        "/to-outsider" => Answer::raw(302, "").with_header("location", "http://outsider.test/"),
        _ => Answer::raw(302, "").with_header("location", "/loop"),
    });
    let port = site.url.rsplit(':').next().unwrap().to_owned();
    let at = |path: &str| json!({"url": format!("http://public.TEST:{port}{path}")});
    let server = script(vec![vec![
        ("url_fetch", at("/page")),
        ("url_fetch", at("/long")),
        ("url_fetch", at("/gone")),
        ("url_fetch", at("/to-metadata")),
        ("url_fetch", at("/to-rebind")),
        ("url_fetch", at("/to-other")),
        ("url_fetch", at("/to-outsider")),
        ("url_fetch", at("/loop")),
        // Plain HTTP where TLS is expected: an error, at once.
        (
            "url_fetch",
            json!({"url": format!("https://public.test:{port}/")}),
        ),
    ]]);
    run(&env, &server.url)
        .env("AXE_TEST_URL_FETCH_LOOPBACK", "1")
        .env(
            "AXE_TEST_URL_FETCH_RESOLVE",
            "public.test=127.0.0.1,b.test=127.0.0.2,rebind.test=10.0.0.7,outsider.test=127.0.0.1",
        )
        .arg("a")
        .assert()
        .success();
    let got = results(&server, 0);
    assert_eq!(got[0], ("Hello & welcome".into(), false));
    assert_eq!(
        got[1],
        (
            format!(
                "{}\n... [response truncated, exceeded 10000 characters]",
                "y".repeat(10_000)
            ),
            false
        )
    );
    assert_eq!(got[2], ("HTTP 404: no such page".into(), true));
    assert_eq!(
        got[3],
        (
            "host \"169.254.169.254\" is not in allowed_hosts".into(),
            true
        )
    );
    assert_eq!(
        got[4],
        (
            "host \"rebind.test\" resolves to private address 10.0.0.7".into(),
            true
        )
    );
    assert_eq!(got[5], ("other".into(), false));
    assert_eq!(
        got[6],
        (
            "host \"outsider.test\" is not in allowed_hosts".into(),
            true
        )
    );
    assert_eq!(
        got[7],
        (
            format!("Get \"http://public.test:{port}/loop\": stopped after 10 redirects"),
            true
        )
    );
    assert!(
        got[8].1
            && got[8]
                .0
                .starts_with(&format!("Get \"https://public.test:{port}/\": ")),
        "{:?}",
        got[8]
    );
    let seen = other_seen.join().unwrap();
    assert!(seen.starts_with("GET /there HTTP/1.1\r\n"), "{seen}");
    // Header names in any case, as HTTP has them (the client writes
    // them in lower case).
    assert!(
        seen.to_ascii_lowercase()
            .contains(&format!("host: b.test:{other_port}\r\n")),
        "{seen}"
    );
    // Every request the site got was for a host it serves.
    assert!(
        site.requests()
            .iter()
            .all(|r| r.header("host") == Some(&format!("public.test:{port}")))
    );
}

#[test]
fn a_redirect_to_a_private_address_is_refused_without_an_allow_list() {
    let env = Env::new();
    tool_agent(&env, "\"url_fetch\"", "");
    let site =
        Server::route(|_| Answer::raw(302, "").with_header("location", "http://10.1.2.3/admin"));
    let port = site.url.rsplit(':').next().unwrap().to_owned();
    let server = script(vec![vec![(
        "url_fetch",
        json!({"url": format!("http://127.0.0.1:{port}/")}),
    )]]);
    run(&env, &server.url)
        .env("AXE_TEST_URL_FETCH_LOOPBACK", "1")
        .arg("a")
        .assert()
        .success();
    assert_eq!(
        only_result(&server),
        (
            "host \"10.1.2.3\" resolves to private address 10.1.2.3".into(),
            true
        )
    );
    assert_eq!(site.requests().len(), 1);
}

/// A sub-agent without `allowed_hosts` of its own has its parent's.
#[test]
fn a_sub_agent_inherits_its_parents_allowed_hosts() {
    let env = Env::new();
    env.agent(
        "parent",
        "name = \"parent\"\nmodel = \"anthropic/claude-test\"\nsystem_prompt = \"You are parent.\"\nsub_agents = [\"kid\"]\nallowed_hosts = [\"docs.example\"]\n",
    );
    env.agent(
        "kid",
        "name = \"kid\"\nmodel = \"anthropic/claude-test\"\nsystem_prompt = \"You are kid.\"\ntools = [\"url_fetch\"]\n",
    );
    let server = Server::route(|req| {
        let body = req.json();
        let messages = body["messages"].as_array().unwrap().clone();
        let system = body["system"].as_str().unwrap_or_default().to_owned();
        match (system.starts_with("You are parent."), messages.len()) {
            (true, 1) => {
                crate::tools::calls(&[("call_agent", json!({"agent": "kid", "task": "fetch"}))])
            }
            (false, 1) => {
                crate::tools::calls(&[("url_fetch", json!({"url": "http://elsewhere.example/"}))])
            }
            (_, _) => {
                let last = &messages.last().unwrap()["content"][0]["content"];
                Answer::json(200, &crate::wire::anthropic_reply(last.as_str().unwrap()))
            }
        }
    });
    run(&env, &server.url)
        .arg("parent")
        .assert()
        .success()
        .stdout("host \"elsewhere.example\" is not in allowed_hosts");
}

/// A bubblewrap that cannot make namespaces (as in some containers) is
/// treated as absent, and said so; with `require`, the run is refused.
#[test]
fn a_bubblewrap_that_cannot_make_namespaces_is_said_and_not_trusted() {
    let env = Env::new();
    tool_agent(&env, "\"run_command\"", "");
    let bin = path_without_bwrap(&env);
    let fake = bin.join("bwrap");
    fs::write(
        &fake,
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n",
    )
    .unwrap();
    crate::util::set_mode(&fake, 0o755);
    let server = script(vec![vec![(
        "run_command",
        json!({"command": "cat /etc/passwd"}),
    )]]);
    let mut cmd = run(&env, &server.url);
    cmd.env("PATH", &bin)
        .env("AXE_TEST_SANDBOX", "none")
        .args(["a", "-v"]);
    let out = crate::util::output_past_busy(&mut cmd);
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains(&format!(
            "Sandbox:  none: {} cannot make namespaces here (bwrap: No permissions to create new namespace), and Landlock is hidden (AXE_TEST_SANDBOX=none); run_command only checks the command's text, which is not a boundary",
            fake.display()
        )),
        "{err}"
    );
    assert!(
        only_result(&server)
            .0
            .starts_with("command rejected: absolute path")
    );
    tool_agent(&env, "\"run_command\"", "[sandbox]\nrequire = true");
    run(&env, &server.url)
        .env("PATH", &bin)
        .env("AXE_TEST_SANDBOX", "none")
        .arg("a")
        .assert()
        .code(2)
        .stderr(predicates::str::contains("cannot make namespaces here"));
}
