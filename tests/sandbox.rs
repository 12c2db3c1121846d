//! Where the workdir tools and `run_command`'s sandbox stop: a workdir
//! that only happens to be the current directory (`/` under systemd, the
//! home) is refused unless named, and `-v` says what a command may write
//! and reach; with `[sandbox] network = true`, no Unix socket (the host's
//! abstract ones, X11 and D-Bus, among them), while the host's loopback
//! stays reachable and `-v` says so; the shell is `/bin/sh` whatever
//! `PATH` holds. Each under the engine the tests run under
//! ([`crate::tools_security::engine`]).

use std::fs;

use serde_json::json;

use crate::run::run;
use crate::tools::{only_result, results, run_a, script, tool_agent};
use crate::tools_security::{Engine, engine};
use crate::util::{Env, have};

/// The current directory `/`, the default workdir, is refused before the
/// model is asked anything, for the file tools as for commands.
#[test]
fn the_root_as_an_unnamed_workdir_is_refused() {
    let env = Env::new();
    for tools in ["\"read_file\"", "\"run_command\""] {
        env.agent_file("a").tools(tools).write();
        let server = script(vec![]);
        let out = run(&env, &server.url)
            .current_dir("/")
            .arg("a")
            .assert()
            .code(2);
        let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert_eq!(
            err.lines().collect::<Vec<_>>(),
            [
                "refusing the current directory / as the workdir of tools: it is the whole filesystem; name it to use it (--workdir /, or workdir in the agent file)"
            ],
            "{tools}"
        );
        assert!(server.requests().is_empty(), "the model was asked");
    }
}

/// Named, `/` is taken, and `-v` says the whole filesystem is writable,
/// as it is (a file made in `/var/tmp` from inside the sandbox is there).
#[test]
fn the_root_named_as_the_workdir_is_taken_and_said_writable() {
    let env = Env::new();
    env.agent_file("a").tools("\"read_file\"").write();
    let server = script(vec![vec![("read_file", json!({"path": "etc/hostname"}))]]);
    run(&env, &server.url)
        .current_dir("/")
        .args(["a", "--workdir", "/"])
        .assert()
        .success();
    assert!(!only_result(&server).1, "{:?}", only_result(&server));
    let Some(engine) = engine() else {
        return;
    };
    env.agent_file("a").tools("\"run_command\"").write();
    let made = format!("/var/tmp/axe-whole-fs-{}", std::process::id());
    let server = script(vec![vec![(
        "run_command",
        json!({"command": format!("echo x > {made} && echo made")}),
    )]]);
    let out = run(&env, &server.url)
        .current_dir("/")
        .args(["a", "--workdir", "/", "-v"])
        .assert()
        .success();
    let written = fs::read_to_string(&made);
    let _ = fs::remove_file(&made);
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    let said = match engine {
        Engine::Bwrap => {
            "Sandbox:  bubblewrap (workdir /: the whole filesystem writable, but for the hidden home, axe's directories and /run, private /tmp, network off)"
        }
        Engine::Landlock => {
            "(workdir /: the whole filesystem writable, but for the home, axe's directories, /run and /tmp, out of reach, network off;"
        }
        Engine::Neither => "which is not a boundary",
    };
    assert!(err.contains(engine.said()) && err.contains(said), "{err}");
    assert_eq!(only_result(&server), ("made\n".into(), false));
    assert_eq!(written.unwrap(), "x\n");
}

/// The home as the current directory is refused too (it holds keys, and
/// axe's own directories), and so is a directory holding it; named with
/// `--workdir` or the agent file's `workdir`, it is taken.
#[test]
fn the_home_or_what_holds_it_as_an_unnamed_workdir_is_refused() {
    let env = Env::new();
    env.agent_file("a").tools("\"list_directory\"").write();
    let home = env.root().join("home");
    for (dir, why) in [
        (home.clone(), "is the home directory".to_owned()),
        (
            env.root().to_path_buf(),
            format!("holds the home directory {}", home.display()),
        ),
    ] {
        let server = script(vec![]);
        let out = run(&env, &server.url)
            .current_dir(&dir)
            .arg("a")
            .assert()
            .code(2);
        let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        let dir = dir.display();
        assert_eq!(
            err,
            format!(
                "refusing the current directory {dir} as the workdir of tools: it {why}; name it to use it (--workdir {dir}, or workdir in the agent file)\n"
            ),
        );
        assert!(server.requests().is_empty(), "the model was asked");
    }
    // axe's data directory outside the home counts too.
    fs::create_dir_all(env.data_dir()).unwrap();
    let server = script(vec![]);
    run(&env, &server.url)
        .current_dir(env.data_dir())
        .env("HOME", "/nonexistent")
        .arg("a")
        .assert()
        .code(2)
        .stderr(predicates::str::contains("it holds axe's data directory"));
    // Named, it is taken.
    let server = script(vec![vec![("list_directory", json!({"path": "."}))]]);
    run(&env, &server.url)
        .current_dir(&home)
        .args(["a", "--workdir"])
        .arg(&home)
        .assert()
        .success();
    assert!(!only_result(&server).1);
    env.agent(
        "a",
        &format!(
            "name = \"a\"\nmodel = \"anthropic/claude-test\"\nworkdir = \"{}\"\ntools = [\"list_directory\"]\n",
            home.display()
        ),
    );
    let server = script(vec![vec![("list_directory", json!({"path": "."}))]]);
    run(&env, &server.url)
        .current_dir(&home)
        .arg("a")
        .assert()
        .success();
    assert!(!only_result(&server).1);
    // Tools that never touch the workdir need none.
    env.agent_file("a").tools("\"url_fetch\"").write();
    let server = script(vec![]);
    run(&env, &server.url)
        .current_dir(&home)
        .arg("a")
        .assert()
        .success();
}

/// With `[sandbox] network = true` a command shares the host's network
/// namespace, and with it the host's abstract Unix sockets (X11's
/// `@/tmp/.X11-unix/X0`, D-Bus buses): it may make no Unix socket at all,
/// so neither those nor one in the filesystem are reached, while a pair
/// of its own still works. The host's loopback stays reachable, and `-v`
/// says exactly that.
#[test]
fn with_the_network_no_unix_socket_is_reached_and_loopback_is_said() {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixListener};
    let Some(engine) = engine() else {
        return;
    };
    if !have("python3") {
        return;
    }
    let env = Env::new();
    tool_agent(&env, "\"run_command\"", "[sandbox]\nnetwork = true");
    let name = format!("axe-test-abstract-{}", std::process::id());
    let abstract_socket =
        UnixListener::bind_addr(&SocketAddr::from_abstract_name(name.as_bytes()).unwrap()).unwrap();
    abstract_socket.set_nonblocking(true).unwrap();
    // Outside /run, /tmp and the home: in the filesystem the command sees.
    let path = format!("/var/tmp/axe-test-socket-{}", std::process::id());
    let _ = fs::remove_file(&path);
    let path_socket = UnixListener::bind(&path).unwrap();
    path_socket.set_nonblocking(true).unwrap();
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    tcp.set_nonblocking(true).unwrap();
    let port = tcp.local_addr().unwrap().port();
    let python = |code: &str| json!({"command": format!("python3 -c \"import socket; {code}\"")});
    let server = script(vec![vec![
        (
            "run_command",
            python(&format!(
                "s = socket.socket(socket.AF_UNIX); s.connect('\\0{name}'); print('reached')"
            )),
        ),
        (
            "run_command",
            python(&format!(
                "s = socket.socket(socket.AF_UNIX); s.connect('{path}'); print('reached')"
            )),
        ),
        (
            "run_command",
            python("a, b = socket.socketpair(); a.send(b'x'); print(b.recv(1))"),
        ),
        (
            "run_command",
            python(&format!(
                "socket.create_connection(('127.0.0.1', {port}), timeout=5); print('reached')"
            )),
        ),
        // Standard input is still there, and empty.
        ("run_command", json!({"command": "cat; echo end"})),
    ]]);
    let (_, err) = run_a(&env, &server, &["-v"]);
    let _ = fs::remove_file(&path);
    assert!(err.contains(engine.said()), "{err}");
    if engine == Engine::Neither {
        // Go's check reads text: a socket's name is not a path to it.
        assert!(err.contains("which is not a boundary"), "{err}");
        return;
    }
    let got = results(&server, 0);
    for (i, what) in [(0, "abstract"), (1, "path")] {
        assert!(
            got[i].1 && got[i].0.contains("PermissionError"),
            "the {what} Unix socket: {:?}",
            got[i]
        );
    }
    assert!(
        abstract_socket.accept().is_err(),
        "the abstract socket was reached"
    );
    assert!(path_socket.accept().is_err(), "the socket file was reached");
    assert_eq!(got[2], ("b'x'\n".into(), false));
    assert_eq!(got[3], ("reached\n".into(), false));
    assert!(tcp.accept().is_ok(), "loopback was not reached");
    assert_eq!(got[4], ("end\n".into(), false));
    let said = match engine {
        Engine::Bwrap => {
            "Sandbox:  bubblewrap (read-only filesystem, writable workdir, private /tmp, network on: the host's, its loopback services included; no Unix sockets)"
        }
        _ => {
            "out of reach, network on: the host's, its loopback services included; no Unix sockets;"
        }
    };
    assert!(err.contains(said), "{err}");
}

/// The shell is `/bin/sh`, by its path: a `PATH` holding a directory the
/// sandbox cannot see (under `/tmp`, here) no longer keeps every command
/// from starting (bubblewrap looked `sh` up in it and said only
/// `execvp sh: No such file or directory`), and a program found only
/// there is "not found" with those entries named.
#[test]
fn the_shell_is_found_whatever_path_holds_and_unseen_entries_are_named() {
    let Some(engine) = engine() else {
        return;
    };
    let env = Env::new();
    tool_agent(&env, "\"run_command\"", "");
    let bin = env.root().join("bin");
    fs::create_dir_all(&bin).unwrap();
    for program in ["sh", "true", "bwrap"] {
        let found = ["/bin", "/usr/bin"]
            .iter()
            .map(|d| std::path::Path::new(d).join(program))
            .find(|p| p.exists());
        if let Some(found) = found {
            std::os::unix::fs::symlink(found, bin.join(program)).unwrap();
        }
    }
    fs::write(bin.join("mine"), "#!/bin/sh\necho mine\n").unwrap();
    crate::util::set_mode(&bin.join("mine"), 0o755);
    let server = script(vec![vec![
        ("run_command", json!({"command": "echo $0 here"})),
        ("run_command", json!({"command": "mine"})),
    ]]);
    run(&env, &server.url)
        .env("PATH", &bin)
        .arg("a")
        .assert()
        .success();
    let got = results(&server, 0);
    assert_eq!(got[0], ("sh here\n".into(), false));
    match engine {
        // Outside a sandbox every directory is there.
        Engine::Neither => assert_eq!(got[1], ("mine\n".into(), false)),
        // bubblewrap's /tmp is its own; Landlock lets the shell find the
        // program and refuses to run it.
        _ => {
            let (code, why) = match engine {
                Engine::Bwrap => (127, "not found"),
                _ => (126, "Permission denied"),
            };
            assert_eq!(
                got[1],
                (
                    format!(
                        "exit code {code}\nsh: 1: mine: {why}\n(the sandbox cannot see these PATH entries: {})",
                        bin.display()
                    ),
                    true
                )
            );
        }
    }
}

/// What shell scripts write to and read from stays usable in every
/// engine: the standard streams by their `/dev` names, `/dev/null`,
/// `/dev/zero`, `/dev/urandom`, and `/tmp`'s stand-in `TMPDIR`.
#[test]
fn the_devices_and_streams_scripts_use_work() {
    let Some(_) = engine() else {
        return;
    };
    let env = Env::new();
    tool_agent(&env, "\"run_command\"", "");
    let command = "echo err > /dev/stderr && echo out > /dev/stdout && head -c 3 /dev/zero | wc -c \
                   && head -c 4 /dev/urandom | wc -c && echo x > /dev/null && cat /dev/null \
                   && t=$(mktemp) && echo kept > \"$t\" && cat \"$t\"";
    let server = script(vec![vec![("run_command", json!({"command": command}))]]);
    run_a(&env, &server, &[]);
    assert_eq!(
        only_result(&server),
        ("err\nout\n3\n4\nkept\n".into(), false)
    );
}
