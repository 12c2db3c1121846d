//! OAuth for remote MCP servers: `axe-agents mcp-login` and `axe-run`'s
//! use of what it stores. Against `tests/mcp/oauth_server.py` (a server
//! and its authorization server on 127.0.0.1, which checks PKCE and logs
//! what it issued), and against the official conformance suite's auth
//! scenarios, driven by `tests/mcp/oauth_client.py`: the login with
//! `--no-browser`, its address followed as a browser would, then a run
//! whose scripted model calls the server's tool.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use crate::mcp_client::{calls, ok, python};
use crate::run::run;
use crate::server::{Answer, Server};
use crate::util::{Env, read};
use crate::wire::served_by;

/// The test's OAuth-protected server, stopped when dropped.
struct Protected {
    child: Child,
    url: String,
    log: PathBuf,
}

impl Protected {
    fn start(env: &Env, py: &Path, args: &[&str]) -> Protected {
        let log = env.root().join("oauth-server.log");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/oauth_server.py");
        let mut child = Command::new(py)
            .arg(script)
            .arg(&log)
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut port = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut port)
            .unwrap();
        let url = format!("http://127.0.0.1:{}/mcp", port.trim());
        Protected { child, url, log }
    }

    /// The events it logged, in order.
    fn events(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn said(&self, event: &str) -> Vec<Value> {
        self.events()
            .into_iter()
            .filter(|e| e["event"] == event)
            .collect()
    }
}

impl Drop for Protected {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn agent(env: &Env, url: &str) {
    env.agent_file("a")
        .workdir(env.root())
        .toml(&format!(
            "[[mcp_servers]]\nname = \"remote\"\ntransport = \"streamable-http\"\nurl = \"{url}\"\n"
        ))
        .write();
}

/// A model that calls `tool` until it has the result, then says `done`.
fn model(tool: &'static str) -> Server {
    Server::route(move |r| {
        if String::from_utf8_lossy(&r.body).contains("tool_result") {
            ok("done")
        } else {
            calls(&[("c1", tool, json!({}))])
        }
    })
}

/// `axe-agents mcp-login a remote --no-browser --json`, its address
/// fetched as a browser would (by Python's urllib, which follows the
/// redirect): its exit status, stdout and stderr.
fn login(
    env: &Env,
    py: &Path,
    extra: &[&str],
    follow: bool,
) -> (std::process::ExitStatus, String, String) {
    let mut cmd = env.std_cmd("axe-agents");
    cmd.args(["mcp-login", "a", "remote", "--no-browser", "--json"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    loop {
        let mut line = String::new();
        if err.read_line(&mut line).unwrap() == 0 {
            break;
        }
        said.push_str(&line);
        if follow && line.starts_with("http://") {
            // The redirect goes to axe's listener, which answers.
            let fetch = "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=20).read()";
            let out = Command::new(py)
                .args(["-c", fetch, line.trim()])
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
            break;
        }
    }
    let out = child.wait_with_output().unwrap();
    said.push_str(&String::from_utf8_lossy(&out.stderr));
    (
        out.status,
        String::from_utf8_lossy(&out.stdout).into_owned(),
        said,
    )
}

/// Every file under `dir` but `except`, whose text has `secret` in it.
fn holding(dir: &Path, secret: &str, except: &[&Path]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in walk(dir) {
        if except.contains(&entry.as_path()) {
            continue;
        }
        let bytes = std::fs::read(&entry).unwrap_or_default();
        if String::from_utf8_lossy(&bytes).contains(secret) {
            found.push(entry);
        }
    }
    found
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        match entry.file_type().unwrap().is_dir() {
            true => all.extend(walk(&path)),
            false => all.push(path),
        }
    }
    all
}

/// A run against a server that wants OAuth, with no login: the error says
/// what the server asked for and the two ways in, and exits 3.
#[test]
fn a_401_without_a_login_names_what_was_asked_and_both_ways_in() {
    let Some(py) = python() else { return };
    let env = Env::new();
    let remote = Protected::start(&env, &py, &[]);
    agent(&env, &remote.url);
    let provider = model("whoami");
    let out = run(&env, &provider.url).arg("a").output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    let port = remote.url.trim_end_matches("/mcp");
    assert!(
        err.contains(&format!(
            "failed to connect MCP server \"remote\": HTTP 401 Unauthorized: the server asks for \
             Bearer authorization (OAuth; its resource metadata: \
             {port}/.well-known/oauth-protected-resource/mcp); log in with \
             `axe agents mcp-login a remote`, or give a token in the server's `headers` in the \
             agent file (Authorization = \"Bearer ${{TOKEN}}\")"
        )),
        "{err}"
    );
    // No model was asked anything.
    assert!(provider.requests().is_empty());
}

/// The whole way: the login discovers the authorization server from the
/// 401, registers, runs the code flow with PKCE (which the server
/// checks), and stores the tokens 0600; a run uses them, refreshing the
/// token the server refuses (once) and going on; no token is anywhere but
/// the token file: not on the login's or the run's output, not in the
/// model's requests, not in the run log or ledger.
#[test]
fn a_login_then_a_run_that_refreshes_a_refused_token() {
    let Some(py) = python() else { return };
    let env = Env::new();
    let remote = Protected::start(&env, &py, &["--refuse-first-token"]);
    env.agent_file("a")
        .workdir(env.root())
        .toml(&format!(
            "[[mcp_servers]]\nname = \"remote\"\ntransport = \"streamable-http\"\nurl = \"{}\"\n",
            remote.url
        ))
        .memory("")
        .write();
    let (status, out, err) = login(&env, &py, &[], true);
    assert!(status.success(), "{err}");
    let done: Value = serde_json::from_str(&out).unwrap();
    let base = remote.url.trim_end_matches("/mcp");
    let file = PathBuf::from(done["token_file"].as_str().unwrap());
    assert_eq!(
        done,
        json!({
            "agent": "a", "server": "remote", "server_url": remote.url,
            "resource": remote.url, "issuer": format!("{base}/as"),
            "client_id": done["client_id"], "registration": "dynamic",
            "scope": "files:read", "expires_at": done["expires_at"], "refreshable": true,
            "token_file": file.display().to_string(),
        })
    );
    assert!(
        file.starts_with(env.data_dir().join("axe/mcp-oauth")),
        "{file:?}"
    );
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(file.parent().unwrap()), 0o700);
    // Registered as a native app; PKCE checked by the server; the scope
    // the 401 named asked for; the resource named.
    assert_eq!(remote.said("register")[0]["application_type"], "native");
    assert_eq!(
        remote.said("pkce-verified")[0]["resource"],
        remote.url.as_str()
    );
    assert_eq!(remote.said("authorize")[0]["scope"], "files:read");

    let provider = model("whoami");
    let ran = run(&env, &provider.url).arg("a").output().unwrap();
    assert!(ran.status.success(), "{ran:?}");
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "done");
    // Token 1 was refused; the refresh gave token 2, which the call used.
    let body = String::from_utf8_lossy(&provider.requests()[1].body).into_owned();
    assert!(body.contains("signed in with token #2"), "{body}");
    let tokens = remote.said("token");
    assert_eq!(
        tokens.iter().map(|t| t["how"].clone()).collect::<Vec<_>>(),
        [json!("code"), json!("refresh")]
    );
    let stored: Value = serde_json::from_str(&read(&file)).unwrap();
    assert_eq!(stored["access_token"], tokens[1]["access_token"]);
    assert_eq!(stored["refresh_token"], tokens[1]["refresh_token"]);
    assert_eq!(mode(&file), 0o600);
    let requests: String = provider
        .requests()
        .iter()
        .map(|r| String::from_utf8_lossy(&r.body).into_owned())
        .collect();
    for t in &tokens {
        for secret in [&t["access_token"], &t["refresh_token"]] {
            let secret = secret.as_str().unwrap();
            assert!(!out.contains(secret) && !err.contains(secret));
            assert!(!String::from_utf8_lossy(&ran.stdout).contains(secret));
            assert!(!String::from_utf8_lossy(&ran.stderr).contains(secret));
            assert!(!requests.contains(secret));
            assert_eq!(
                holding(env.root(), secret, &[&file, &remote.log]),
                Vec::<PathBuf>::new()
            );
        }
    }
    // The run log was written: the search above looked where it is.
    assert!(
        walk(&env.data_dir()).len() > 1,
        "{:?}",
        walk(&env.data_dir())
    );
}

/// A token past its expiry is refreshed before it is sent: the server
/// never sees it refused.
/// `--scope` asks for the scopes a 403 `insufficient_scope` named, in
/// place of what the server's 401 names.
#[test]
fn a_login_asks_for_the_scopes_it_is_given() {
    let Some(py) = python() else { return };
    let env = Env::new();
    let remote = Protected::start(&env, &py, &[]);
    agent(&env, &remote.url);
    let (status, out, err) = login(&env, &py, &["--scope", "files:read files:write"], true);
    assert!(status.success(), "{err}");
    let done: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        remote.said("authorize")[0]["scope"],
        "files:read files:write"
    );
    assert_eq!(done["scope"], "files:read files:write");
}

#[test]
fn an_expired_token_is_refreshed_before_it_is_sent() {
    let Some(py) = python() else { return };
    let env = Env::new();
    // Within a minute of its end counts as expired.
    let remote = Protected::start(&env, &py, &["--expires-in", "30"]);
    agent(&env, &remote.url);
    let (status, _, err) = login(&env, &py, &[], true);
    assert!(status.success(), "{err}");
    let provider = model("whoami");
    let ran = run(&env, &provider.url).arg("a").output().unwrap();
    assert!(ran.status.success(), "{ran:?}");
    let body = String::from_utf8_lossy(&provider.requests()[1].body).into_owned();
    assert!(body.contains("signed in with token #2"), "{body}");
    // Only the login's first request, which had no token, was refused.
    let refused = remote.said("refused");
    assert_eq!(refused, [json!({"event": "refused", "had_token": false})]);
}

/// A browser that never comes back: the login gives up at its timeout
/// with a line saying so, and stores nothing.
#[test]
fn a_login_nobody_completes_times_out() {
    let Some(py) = python() else { return };
    let env = Env::new();
    let remote = Protected::start(&env, &py, &[]);
    agent(&env, &remote.url);
    let (status, out, err) = login(&env, &py, &["--timeout", "1"], false);
    assert_eq!(status.code(), Some(3), "{err}");
    assert!(out.is_empty());
    // With --json, the error is a JSON line too.
    let last: Value = serde_json::from_str(err.lines().last().unwrap()).unwrap();
    assert_eq!(
        last,
        json!({"error": "failed to log in to MCP server \"remote\": no answer from the browser at the redirect before the login's timeout", "exit_code": 3})
    );
    assert!(
        !env.data_dir().join("axe/mcp-oauth").exists()
            || walk(&env.data_dir().join("axe/mcp-oauth")).is_empty()
    );
}

/// A server that lets every request through and publishes no OAuth
/// metadata asks for no login: the login says so, opens nothing, and
/// stores nothing.
#[test]
fn a_server_that_asks_for_no_login_gets_none() {
    let Some(py) = python() else { return };
    let env = Env::new();
    let open = Server::route(|r| match r.method.as_str() {
        "POST" => Answer::json(200, &json!({"jsonrpc": "2.0", "id": 1, "result": {}})),
        _ => Answer::raw(404, "not found"),
    });
    let url = format!("{}/mcp", open.url);
    agent(&env, &url);
    let (status, out, err) = login(&env, &py, &[], true);
    assert_eq!(status.code(), Some(3), "{err}");
    assert!(out.is_empty());
    let last: Value = serde_json::from_str(err.lines().last().unwrap()).unwrap();
    assert_eq!(
        last["error"],
        format!(
            "failed to log in to MCP server \"remote\": {url} let every request through \
             and publishes no OAuth metadata: it asks for no login"
        )
    );
    assert!(!err.contains("open this address"), "{err}");
    assert!(!env.data_dir().join("axe/mcp-oauth").exists());
}

/// What a conformance auth scenario must come to.
enum Expect {
    /// The login succeeds and the run calls the suite's tool with its
    /// token.
    Run,
    /// The login succeeds; the run that follows is refused by the
    /// scenario on purpose (scope-retry-limit keeps asking for more
    /// scope), so only the login is judged.
    Login,
    /// The login refuses what the scenario's servers do wrong, before it
    /// asks for a token.
    Refused,
    /// These checks fail, for this reason.
    Left(&'static [&'static str], &'static str),
}

/// Every auth scenario of the suite but its extensions (machine-to-machine
/// grants, DPoP, enterprise authorization: not what a person's login
/// does), each at 2025-11-25 where it applies, else at the revision it is
/// for.
const AUTH: &[(&str, Expect)] = &[
    ("metadata-default", Expect::Run),
    ("metadata-var1", Expect::Run),
    ("metadata-var2", Expect::Run),
    ("metadata-var3", Expect::Run),
    ("basic-cimd", Expect::Run),
    ("scope-from-www-authenticate", Expect::Run),
    ("scope-from-scopes-supported", Expect::Run),
    ("scope-omitted-when-undefined", Expect::Run),
    (
        "scope-step-up",
        Expect::Left(
            &["scope-step-up-escalation"],
            "a 403 insufficient_scope in the middle of a run would need a new login, \
             and axe-run never prompts: the call fails, naming the scopes and \
             `mcp-login --scope`",
        ),
    ),
    ("scope-retry-limit", Expect::Login),
    ("token-endpoint-auth-basic", Expect::Run),
    ("token-endpoint-auth-post", Expect::Run),
    ("token-endpoint-auth-none", Expect::Run),
    ("pre-registration", Expect::Run),
    ("2025-03-26-oauth-metadata-backcompat", Expect::Run),
    ("2025-03-26-oauth-endpoint-fallback", Expect::Run),
    ("resource-mismatch", Expect::Refused),
    ("offline-access-scope", Expect::Run),
    ("offline-access-not-supported", Expect::Run),
    (
        "authorization-server-migration",
        Expect::Left(
            &["sep-2352-reregister-on-as-change"],
            "the server moves to another authorization server in the middle of the \
             run, which would need a new login, and axe-run never prompts",
        ),
    ),
    ("iss-supported", Expect::Run),
    ("iss-not-advertised", Expect::Run),
    ("iss-supported-missing", Expect::Refused),
    ("iss-wrong-issuer", Expect::Refused),
    ("iss-unexpected", Expect::Refused),
    ("iss-normalized", Expect::Refused),
    ("metadata-issuer-mismatch", Expect::Refused),
];

/// `@modelcontextprotocol/conformance client` (tests/mcp/install) on its
/// auth scenarios, each driven by tests/mcp/oauth_client.py: the login,
/// then a run whose model calls the suite's tool. No check may fail or
/// warn but those [`AUTH`] lists, one must succeed, and the login and
/// the run come to what [`AUTH`] says.
#[test]
fn the_conformance_suites_auth_scenarios_pass() {
    let Some(py) = python() else { return };
    let Some((suite, node)) = crate::mcp_sdk::conformance() else {
        return;
    };
    let bins = assert_cmd::cargo::cargo_bin("axe-run");
    let path = std::env::join_paths(
        [node, bins.parent().unwrap().to_path_buf()]
            .into_iter()
            .chain(std::env::split_paths(
                &std::env::var_os("PATH").unwrap_or_default(),
            )),
    )
    .unwrap();
    let listed = Command::new(&suite)
        .args(["list", "--client"])
        .env("PATH", &path)
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    let scenarios: Vec<(&str, &str)> = listed
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- auth/"))
        .filter(|l| !l.contains("[extension]"))
        .filter_map(|l| l.split_once(' '))
        .collect();
    assert_eq!(
        scenarios.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        AUTH.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        "every auth scenario is listed once, in the suite's order"
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/oauth_client.py");
    let mut wrong = Vec::new();
    for ((name, versions), (_, expect)) in scenarios.iter().zip(AUTH) {
        let scenario = format!("auth/{name}");
        // The revision axe's handshake offers, else the one it is for.
        let version = match versions.contains("2025-11-25") {
            true => "2025-11-25",
            false => versions.trim_matches(['[', ']']).split(',').next().unwrap(),
        };
        let env = Env::new();
        let provider = model("test-tool");
        let out = env.root().join("results");
        let ran = served_by(env.program(&suite), &provider.url)
            .args(["client", "--scenario", &scenario, "--spec-version", version])
            .arg("-o")
            .arg(&out)
            .arg("--command")
            .arg(format!("{} {}", py.display(), script.display()))
            .env("PATH", &path)
            .output()
            .unwrap();
        let files = walk(&out);
        let file = |name: &str| {
            files
                .iter()
                .find(|p| p.ends_with(name))
                .map(|p| read(p))
                .unwrap_or_else(|| panic!("{scenario}: no {name}: {ran:?}"))
        };
        let checks: Value = serde_json::from_str(&file("checks.json")).unwrap();
        let checks = checks.as_array().unwrap();
        let mut failed: Vec<&str> = checks
            .iter()
            .filter(|c| c["status"] == "FAILURE" || c["status"] == "WARNING")
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        failed.sort_unstable();
        let succeeded = checks.iter().any(|c| c["status"] == "SUCCESS");
        let logged_in = file("stdout.txt").contains("\"token_file\"");
        let called = provider
            .requests()
            .iter()
            .any(|r| String::from_utf8_lossy(&r.body).contains("\"content\":\"test\""));
        let (left, why): (&[&str], &str) = match expect {
            Expect::Left(left, why) => (left, why),
            _ => (&[], ""),
        };
        let came_to = match expect {
            Expect::Run => logged_in && called,
            Expect::Login => logged_in,
            Expect::Refused => !logged_in && !called,
            Expect::Left(..) => true,
        };
        if failed != left || !succeeded || !came_to {
            wrong.push(format!(
                "{scenario} at {version}: failed {failed:?} (left: {left:?}, {why}), \
                 logged in {logged_in}, tool called {called}\n{}",
                file("stderr.txt")
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}
