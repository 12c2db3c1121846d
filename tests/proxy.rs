//! The network of a run: its provider calls go through the proxies the
//! environment names as curl sends them (an `http://` call to a local
//! forwarding proxy in absolute form, an `https://` one through a local
//! tunnelling proxy's `CONNECT`, either through a local SOCKS5 proxy),
//! with the credentials of the proxy's URL, shown nowhere; straight to
//! the host each form of `NO_PROXY` names; and a proxy that is not there
//! is one line naming the URL, exit 3. HTTPS is a local TLS front whose
//! authority, made here with openssl, `SSL_CERT_FILE` names. And a tool
//! conversation is one connection, kept alive, not one a turn.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command as Std;
use std::sync::{Arc, Mutex};
use std::thread;

use serde_json::{Value, json};

use crate::run::run;
use crate::server::{Answer, Server, closed_port_url, sse_event};
use crate::tools::tool_agent;
use crate::util::{Env, have};
use crate::wire::{anthropic_reply, served_by};

/// A proxy on 127.0.0.1 that records the head (first line and headers)
/// of every request it is sent. A forwarding one passes absolute-form
/// requests (`GET http://host:port/path`) on in origin form, without
/// their `Proxy-*` headers, as a plain forwarding proxy does, and
/// answers `CONNECT` 501; a tunnelling one answers `CONNECT host:port`
/// with a tunnel and anything else 400.
struct Proxy {
    url: String,
    seen: Arc<Mutex<Vec<Vec<String>>>>,
}

impl Proxy {
    fn forwarding() -> Proxy {
        Proxy::start(false)
    }

    fn tunnelling() -> Proxy {
        Proxy::start(true)
    }

    fn start(connect: bool) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&seen);
        thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let record = Arc::clone(&record);
                thread::spawn(move || relay(conn, connect, &record));
            }
        });
        Proxy { url, seen }
    }

    /// The first line of each request, in order.
    fn seen(&self) -> Vec<String> {
        self.heads().into_iter().map(|h| h[0].clone()).collect()
    }

    /// Each request's head, a line an item, without the line ends.
    fn heads(&self) -> Vec<Vec<String>> {
        self.seen.lock().unwrap().clone()
    }

    /// This proxy's URL with `user:password@` (as written in a URL).
    fn with_credentials(&self, userinfo: &str) -> String {
        self.url
            .replacen("http://", &format!("http://{userinfo}@"), 1)
    }
}

fn relay(client: TcpStream, connect: bool, seen: &Mutex<Vec<Vec<String>>>) {
    let mut reader = BufReader::new(client.try_clone().unwrap());
    let mut head = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if line == "\r\n" {
            break;
        }
        head.push(line.trim_end().to_owned());
    }
    seen.lock().unwrap().push(head.clone());
    let refuse = |status: &str| {
        let answer = format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        let _ = (&client).write_all(answer.as_bytes());
    };
    let mut parts = head[0].split(' ');
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let (host, rewritten) = match (method, connect) {
        ("CONNECT", true) => (target.to_owned(), None),
        ("CONNECT", false) => return refuse("501 Not Implemented"),
        (_, true) => return refuse("400 Bad Request"),
        (_, false) => {
            let Some(rest) = target.strip_prefix("http://") else {
                return refuse("400 Bad Request");
            };
            let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            let path = if path.is_empty() { "/" } else { path };
            let host = if host.contains(':') {
                host.to_owned()
            } else {
                format!("{host}:80")
            };
            let kept: String = head[1..]
                .iter()
                .filter(|h| !h.to_ascii_lowercase().starts_with("proxy-"))
                .map(|h| format!("{h}\r\n"))
                .collect();
            (
                host,
                Some(format!("{method} {path} HTTP/1.1\r\n{kept}\r\n")),
            )
        }
    };
    let Ok(mut upstream) = TcpStream::connect(&host) else {
        return refuse("502 Bad Gateway");
    };
    match rewritten {
        None => (&client)
            .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .unwrap(),
        Some(request) => upstream.write_all(request.as_bytes()).unwrap(),
    }
    // Whatever the client had sent past the head is in the reader's buffer.
    let buffered = reader.buffer().to_vec();
    upstream.write_all(&buffered).unwrap();
    let mut down = upstream.try_clone().unwrap();
    let mut back = client.try_clone().unwrap();
    let pump = thread::spawn(move || {
        let _ = std::io::copy(&mut down, &mut back);
        let _ = back.shutdown(std::net::Shutdown::Write);
    });
    let mut from_client = reader.into_inner();
    let _ = std::io::copy(&mut from_client, &mut upstream);
    let _ = upstream.shutdown(std::net::Shutdown::Write);
    let _ = pump.join();
}

/// Proxy credentials of the tests, as a URL holds them (`%40` is `@`),
/// and the `Proxy-Authorization` they make (`printf 'axe-user:s3cr@t' |
/// base64`).
const USERINFO: &str = "axe-user:s3cr%40t";
const PASSWORD: &str = "s3cr@t";
const BASIC: &str = "Basic YXhlLXVzZXI6czNjckB0";

/// The credentials are nowhere a user or a model could read them: not in
/// `stderr` (messages, `-v`), nor in any file of `env` (ledger, run log,
/// state, notes), decoded, as written, or encoded.
fn assert_no_credentials(env: &Env, stderr: &[u8]) {
    let secrets = [PASSWORD, "s3cr%40t", &BASIC[6..]];
    let stderr = String::from_utf8_lossy(stderr);
    for secret in secrets {
        assert!(!stderr.contains(secret), "{secret} in stderr: {stderr}");
    }
    let mut dirs = vec![env.root().to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let text =
                String::from_utf8_lossy(&std::fs::read(&path).unwrap_or_default()).into_owned();
            for secret in secrets {
                assert!(!text.contains(secret), "{secret} in {}", path.display());
            }
        }
    }
}

/// A certificate authority and a certificate it signed for `localhost`
/// and 127.0.0.1, made with openssl in `dir`: `(ca.pem, cert.pem,
/// key.pem)`.
pub fn authority(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let openssl = |args: &[&str]| {
        let out = Std::new("openssl")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
    ];
    openssl(
        &[
            &["req", "-x509"][..],
            &ec,
            &[
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
                "-days",
                "2",
                "-subj",
                "/CN=axe test CA",
            ],
        ]
        .concat(),
    );
    openssl(
        &[
            &["req"][..],
            &ec,
            &[
                "-keyout",
                "key.pem",
                "-out",
                "leaf.csr",
                "-subj",
                "/CN=localhost",
            ],
        ]
        .concat(),
    );
    std::fs::write(
        dir.join("leaf.ext"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
    )
    .unwrap();
    openssl(&[
        "x509",
        "-req",
        "-in",
        "leaf.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "leaf.ext",
        "-out",
        "cert.pem",
    ]);
    (
        dir.join("ca.pem"),
        dir.join("cert.pem"),
        dir.join("key.pem"),
    )
}

/// A TLS front on 127.0.0.1 for the plain HTTP server at `backend`:
/// each connection's request is passed on and the answer, read to its
/// end (the test server closes after one), passed back. Its URL names
/// `localhost`, the name the certificate has.
pub fn tls_front(backend: &str, cert: &Path, key: &Path) -> String {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certs = CertificateDer::pem_file_iter(cert)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(key).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let backend = backend.trim_start_matches("http://").to_owned();
    thread::spawn(move || {
        for tcp in listener.incoming().flatten() {
            let (config, backend) = (Arc::clone(&config), backend.clone());
            thread::spawn(move || {
                let conn = rustls::ServerConnection::new(config).unwrap();
                let mut tls = rustls::StreamOwned::new(conn, tcp);
                let Some(request) = read_request(&mut tls) else {
                    return;
                };
                let mut upstream = TcpStream::connect(&backend).unwrap();
                upstream.write_all(&request).unwrap();
                let mut answer = Vec::new();
                let _ = upstream.read_to_end(&mut answer);
                let _ = tls.write_all(&answer);
                tls.conn.send_close_notify();
                let _ = tls.flush();
            });
        }
    });
    format!("https://localhost:{port}")
}

/// One request, its head and its content-length body.
fn read_request(stream: &mut impl Read) -> Option<Vec<u8>> {
    let mut raw = Vec::new();
    let mut buf = [0; 8192];
    loop {
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        raw.extend_from_slice(&buf[..n]);
        let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&raw[..end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .map_or(0, |v| v.trim().parse().unwrap_or(0));
        if raw.len() >= end + 4 + length {
            return Some(raw);
        }
    }
}

fn ok() -> Answer {
    Answer::json(200, &anthropic_reply("through"))
}

/// The header `name` of a recorded head, its name in any case.
fn header<'h>(head: &'h [String], name: &str) -> Option<&'h str> {
    head[1..].iter().find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// A model call to an `http://` base URL reaches a plain forwarding proxy
/// (one that refuses `CONNECT`, as squid does to any port but 443) in
/// absolute form, with the credentials of the proxy's URL as
/// `Proxy-Authorization`; the proxy passes it on without them, and they
/// are shown nowhere, `-v` included.
#[test]
fn http_calls_reach_a_forwarding_proxy_in_absolute_form_with_its_credentials() {
    let env = Env::new();
    env.agent_file("a").write();
    let server = Server::start(vec![ok()]);
    let proxy = Proxy::forwarding();
    let out = served_by(env.cmd("axe-run"), &server.url)
        .env("HTTP_PROXY", proxy.with_credentials(USERINFO))
        .args(["a", "hi", "-v"])
        .assert()
        .success()
        .stdout("through")
        .get_output()
        .clone();
    let heads = proxy.heads();
    assert_eq!(heads.len(), 1, "{heads:?}");
    assert_eq!(
        heads[0][0],
        format!("POST {}/v1/messages HTTP/1.1", server.url)
    );
    assert_eq!(header(&heads[0], "proxy-authorization"), Some(BASIC));
    let host = server.url.trim_start_matches("http://");
    assert_eq!(header(&heads[0], "host"), Some(host));
    let request = server.only_request();
    assert_eq!(request.header("proxy-authorization"), None);
    assert_no_credentials(&env, &out.stderr);

    // The lower-case spelling, with no credentials: none sent.
    served_by(env.cmd("axe-run"), &server.url)
        .env("http_proxy", &proxy.url)
        .args(["a", "hi"])
        .assert()
        .success()
        .stdout("through");
    let heads = proxy.heads();
    assert_eq!(heads.len(), 2, "{heads:?}");
    assert_eq!(
        heads[1][0],
        format!("POST {}/v1/messages HTTP/1.1", server.url)
    );
    assert_eq!(header(&heads[1], "proxy-authorization"), None);
}

/// `NO_PROXY` as curl reads it: each form that names the host sends the
/// call straight there, the proxy never asked; each that does not leaves
/// it to the proxy. A name matches itself and the names under it, with
/// or without a leading dot, in any case, a trailing dot aside; an
/// address matches as an address or a block, never as a name's tail.
#[test]
fn no_proxy_forms_each_send_the_call_straight_to_the_host() {
    let env = Env::new();
    env.agent_file("a").write();
    let server = Server::start(vec![ok()]);
    let proxy = Proxy::forwarding();
    let port = server.url.rsplit(':').next().unwrap().to_owned();
    let by_name = format!("http://localhost:{port}");
    let call = |url: &str, no_proxy: &str| {
        served_by(env.cmd("axe-run"), url)
            .env("HTTP_PROXY", &proxy.url)
            .env("NO_PROXY", no_proxy)
            .args(["a", "hi"])
            .assert()
            .success()
            .stdout("through");
    };
    let straight = [
        (server.url.as_str(), "127.0.0.1"),
        (&server.url, "example.com, 127.0.0.1"),
        (&server.url, "127.0.0.0/8"),
        (&server.url, "*"),
        (&server.url, "example.com,*"),
        (&by_name, "localhost"),
        (&by_name, ".localhost"),
        (&by_name, "*.localhost"),
        (&by_name, "LocalHost."),
        (&by_name, &format!("localhost:{port}")),
    ];
    for (n, (url, no_proxy)) in straight.iter().enumerate() {
        call(url, no_proxy);
        assert!(proxy.seen().is_empty(), "{no_proxy}: {:?}", proxy.seen());
        assert_eq!(server.requests().len(), n + 1, "{no_proxy}");
    }
    let proxied = [
        (server.url.as_str(), "0.0.1"),
        (&server.url, "127.0.0.2"),
        (&server.url, "10.0.0.0/8"),
        (&server.url, "127.0.0.1/99"),
        (&server.url, "::1"),
        (&by_name, "host"),
        (&by_name, "notlocalhost"),
        (&by_name, "127.0.0.1"),
    ];
    for (n, (url, no_proxy)) in proxied.iter().enumerate() {
        call(url, no_proxy);
        let seen = proxy.seen();
        assert_eq!(seen.len(), n + 1, "{no_proxy}: {seen:?}");
        assert_eq!(
            seen[n],
            format!("POST {url}/v1/messages HTTP/1.1"),
            "{no_proxy}"
        );
    }
}

/// An `https://` call goes through a tunnelling proxy with `CONNECT`,
/// the credentials of its URL as `Proxy-Authorization`, shown nowhere;
/// TLS runs from axe to the server, which `SSL_CERT_FILE`'s authority
/// signed.
#[test]
fn https_calls_go_through_https_proxy_and_trust_ssl_cert_file() {
    if !have("openssl") {
        return;
    }
    let env = Env::new();
    env.agent_file("a").write();
    let (ca, cert, key) = authority(env.root());
    let server = Server::start(vec![ok()]);
    let front = tls_front(&server.url, &cert, &key);
    let proxy = Proxy::tunnelling();
    let out = served_by(env.cmd("axe-run"), &front)
        .env("HTTPS_PROXY", proxy.with_credentials(USERINFO))
        .env("HTTP_PROXY", "http://127.0.0.1:9")
        .env("SSL_CERT_FILE", &ca)
        .env_remove("SSL_CERT_DIR")
        .args(["a", "hi", "-v"])
        .assert()
        .success()
        .stdout("through")
        .get_output()
        .clone();
    let port = front.rsplit(':').next().unwrap();
    let heads = proxy.heads();
    assert_eq!(proxy.seen(), [format!("CONNECT localhost:{port} HTTP/1.1")]);
    assert_eq!(header(&heads[0], "proxy-authorization"), Some(BASIC));
    assert_eq!(server.requests().len(), 1);
    assert_no_credentials(&env, &out.stderr);
}

/// An MCP server over streamable HTTP with one tool, `shout`.
fn mcp_server(request: &crate::server::Recorded) -> Answer {
    if request.method == "DELETE" {
        return Answer::raw(200, "");
    }
    let message = request.json();
    let reply = |result: Value| json!({"jsonrpc": "2.0", "id": message["id"], "result": result});
    match message["method"].as_str().unwrap_or_default() {
        "initialize" => Answer::json(
            200,
            &reply(
                json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                          "serverInfo": {"name": "t", "version": "1"}}),
            ),
        )
        .with_header("Mcp-Session-Id", "s1"),
        "tools/list" => Answer::json(
            200,
            &reply(json!({"tools": [{"name": "shout", "inputSchema": {"type": "object"}}]})),
        ),
        "tools/call" => Answer::json(
            200,
            &reply(json!({"content": [{"type": "text", "text": "HEY"}]})),
        ),
        _ => Answer::raw(202, ""),
    }
}

/// An MCP server over HTTP takes the same road as the model: through
/// the forwarding proxy, every request of it in absolute form.
#[test]
fn mcp_calls_over_http_go_through_the_proxy_too() {
    let env = Env::new();
    let mcp = Server::route(mcp_server);
    env.agent_file("a")
        .workdir(env.root())
        .toml(&format!(
            "[[mcp_servers]]\nname = \"web\"\ntransport = \"streamable-http\"\nurl = \"{}/mcp\"\n",
            mcp.url
        ))
        .write();
    let call = json!({"model": "claude-test", "stop_reason": "tool_use",
        "content": [{"type": "tool_use", "id": "c1", "name": "shout", "input": {}}],
        "usage": {"input_tokens": 5, "output_tokens": 3}});
    let server = Server::start(vec![Answer::json(200, &call), ok()]);
    let proxy = Proxy::forwarding();
    served_by(env.cmd("axe-run"), &server.url)
        .env("HTTP_PROXY", &proxy.url)
        .args(["a", "hi"])
        .assert()
        .success()
        .stdout("through");
    let to_mcp: Vec<String> = proxy
        .seen()
        .into_iter()
        .filter(|line| line.contains("/mcp "))
        .collect();
    let post = format!("POST {}/mcp HTTP/1.1", mcp.url);
    let delete = format!("DELETE {}/mcp HTTP/1.1", mcp.url);
    assert_eq!(
        to_mcp,
        // server/discover (which this server does not speak), initialize,
        // initialized, tools/list, tools/call, and the session's end.
        [&*post, &post, &post, &post, &post, &delete],
        "{:?}",
        proxy.seen()
    );
    assert_eq!(mcp.requests().len(), 6);
    let to_model = format!("POST {}/v1/messages HTTP/1.1", server.url);
    assert_eq!(proxy.seen().iter().filter(|l| **l == to_model).count(), 2);
}

/// A SOCKS5 proxy on 127.0.0.1 (RFC 1928, with RFC 1929's user and
/// password when the client offers them) that records, for each
/// connection, the credentials it was given and the target it was asked
/// for (`host:port`, a name as sent), then tunnels to it.
struct Socks {
    url: String,
    seen: Arc<Mutex<Vec<(String, String)>>>,
}

impl Socks {
    fn start() -> Socks {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&seen);
        thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                let record = Arc::clone(&record);
                thread::spawn(move || {
                    let _ = socks5(conn, &record);
                });
            }
        });
        Socks { url, seen }
    }
}

fn socks5(mut client: TcpStream, seen: &Mutex<Vec<(String, String)>>) -> std::io::Result<()> {
    let mut byte = [0; 1];
    let read = |client: &mut TcpStream, n: usize| -> std::io::Result<Vec<u8>> {
        let mut buf = vec![0; n];
        client.read_exact(&mut buf)?;
        Ok(buf)
    };
    let greeting = read(&mut client, 2)?;
    let methods = read(&mut client, usize::from(greeting[1]))?;
    let mut credentials = String::new();
    if methods.contains(&2) {
        client.write_all(&[5, 2])?;
        let version_and_length = read(&mut client, 2)?;
        let user = read(&mut client, usize::from(version_and_length[1]))?;
        client.read_exact(&mut byte)?;
        let password = read(&mut client, usize::from(byte[0]))?;
        credentials = format!(
            "{}:{}",
            String::from_utf8_lossy(&user),
            String::from_utf8_lossy(&password)
        );
        client.write_all(&[1, 0])?;
    } else {
        client.write_all(&[5, 0])?;
    }
    let request = read(&mut client, 4)?;
    let host = match request[3] {
        1 => read(&mut client, 4)?
            .iter()
            .map(u8::to_string)
            .collect::<Vec<_>>()
            .join("."),
        3 => {
            client.read_exact(&mut byte)?;
            String::from_utf8_lossy(&read(&mut client, usize::from(byte[0]))?).into_owned()
        }
        _ => return Ok(()),
    };
    let port = read(&mut client, 2)?;
    let target = format!("{host}:{}", u16::from_be_bytes([port[0], port[1]]));
    seen.lock().unwrap().push((credentials, target.clone()));
    let mut upstream = TcpStream::connect(&target)?;
    client.write_all(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0])?;
    let (mut down, mut back) = (upstream.try_clone()?, client.try_clone()?);
    let pump = thread::spawn(move || {
        let _ = std::io::copy(&mut down, &mut back);
        let _ = back.shutdown(std::net::Shutdown::Write);
    });
    let _ = std::io::copy(&mut client, &mut upstream);
    let _ = upstream.shutdown(std::net::Shutdown::Write);
    let _ = pump.join();
    Ok(())
}

/// A SOCKS proxy carries calls too, as curl's: `socks5h://` hands the
/// name to the proxy, `socks5://` the address looked up here, each with
/// the URL's credentials (decoded), shown nowhere.
#[test]
fn calls_go_through_a_socks5_proxy_with_its_credentials() {
    let env = Env::new();
    env.agent_file("a").write();
    let server = Server::start(vec![ok(), ok()]);
    let socks = Socks::start();
    let port = server.url.rsplit(':').next().unwrap().to_owned();
    let by_name = format!("http://localhost:{port}");
    for scheme in ["socks5h", "socks5"] {
        let out = served_by(env.cmd("axe-run"), &by_name)
            .env("HTTP_PROXY", format!("{scheme}://{USERINFO}@{}", socks.url))
            .args(["a", "hi", "-v"])
            .assert()
            .success()
            .stdout("through")
            .get_output()
            .clone();
        assert_no_credentials(&env, &out.stderr);
    }
    let credentials = format!("axe-user:{PASSWORD}");
    assert_eq!(
        *socks.seen.lock().unwrap(),
        [
            (credentials.clone(), format!("localhost:{port}")),
            (credentials, format!("127.0.0.1:{port}")),
        ]
    );
    assert_eq!(server.requests().len(), 2);
}

/// A proxy spoken to over TLS (`https://` in `HTTP_PROXY`), whose
/// authority `SSL_CERT_FILE` names, takes an `http://` call in absolute
/// form inside that TLS, the credentials with it.
#[test]
fn http_calls_reach_a_proxy_spoken_to_over_tls_in_absolute_form() {
    if !have("openssl") {
        return;
    }
    let env = Env::new();
    env.agent_file("a").write();
    let (ca, cert, key) = authority(env.root());
    let server = Server::start(vec![ok()]);
    let proxy = Proxy::forwarding();
    let front = tls_front(&proxy.url, &cert, &key);
    let over_tls = front.replacen("https://", &format!("https://{USERINFO}@"), 1);
    let out = served_by(env.cmd("axe-run"), &server.url)
        .env("HTTP_PROXY", over_tls)
        .env("SSL_CERT_FILE", &ca)
        .env_remove("SSL_CERT_DIR")
        .args(["a", "hi", "-v"])
        .assert()
        .success()
        .stdout("through")
        .get_output()
        .clone();
    let heads = proxy.heads();
    assert_eq!(
        proxy.seen(),
        [format!("POST {}/v1/messages HTTP/1.1", server.url)]
    );
    assert_eq!(header(&heads[0], "proxy-authorization"), Some(BASIC));
    assert_eq!(server.requests().len(), 1);
    assert_no_credentials(&env, &out.stderr);
}

/// A proxy that turns the credentials down, or is not there: the call
/// fails in one line that shows neither them nor their encoding.
#[test]
fn a_failing_proxy_never_shows_its_credentials() {
    let env = Env::new();
    env.agent_file("a").write();
    let refused = closed_port_url().replacen("http://", &format!("http://{USERINFO}@"), 1);
    let out = served_by(env.cmd("axe-run"), "http://example.invalid")
        .env("HTTP_PROXY", &refused)
        .args(["a", "hi", "-v"])
        .assert()
        .code(3)
        .get_output()
        .clone();
    assert_no_credentials(&env, &out.stderr);
    let tunnel = Proxy::forwarding();
    let out = served_by(env.cmd("axe-run"), "https://example.invalid")
        .env("HTTPS_PROXY", tunnel.with_credentials(USERINFO))
        .args(["a", "hi", "-v"])
        .assert()
        .code(3)
        .get_output()
        .clone();
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).lines().last(),
        Some(
            "connection to https://example.invalid/v1/messages failed: the proxy would not open a tunnel (CONNECT): proxy server responded 501/501"
        )
    );
    assert_no_credentials(&env, &out.stderr);
}

#[test]
fn a_proxy_that_is_not_there_is_one_line_naming_the_url() {
    let env = Env::new();
    env.agent_file("a").write();
    let server = Server::start(vec![ok()]);
    let out = served_by(env.cmd("axe-run"), &server.url)
        .env("HTTP_PROXY", closed_port_url())
        .args(["a", "hi"])
        .assert()
        .code(3)
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "connection to {}/v1/messages failed: ",
            server.url
        )),
        "{err}"
    );
    assert!(server.requests().is_empty());
}

/// A proxy whose name does not resolve is said to be the proxy's, for
/// `http://` calls and `https://` ones alike: the model server's name
/// was never looked up (`.invalid` names resolve nowhere).
#[test]
fn a_proxy_whose_name_does_not_resolve_is_named() {
    let env = Env::new();
    env.agent_file("a").write();
    for (var, url) in [
        ("HTTP_PROXY", "http://127.0.0.1:9"),
        ("HTTPS_PROXY", "https://models.example.com"),
    ] {
        let out = served_by(env.cmd("axe-run"), url)
            .env(var, format!("http://{USERINFO}@proxy.invalid:3128"))
            .args(["a", "hi"])
            .assert()
            .code(3)
            .get_output()
            .clone();
        let err = String::from_utf8_lossy(&out.stderr);
        let named = format!(
            "connection to {url}/v1/messages failed: could not resolve the proxy's host proxy.invalid: "
        );
        assert!(err.starts_with(&named) && err.lines().count() == 1, "{err}");
        assert_no_credentials(&env, &out.stderr);
    }
}

/// A provider that keeps connections open, as real ones do: it answers
/// every request on a connection (each with its length, none closing it)
/// with the next of `replies`, the last repeating, and counts the
/// connections it was opened.
struct KeptAlive {
    url: String,
    connections: Arc<Mutex<usize>>,
    requests: Arc<Mutex<usize>>,
    /// The first line of each request, in order.
    lines: Arc<Mutex<Vec<String>>>,
}

impl KeptAlive {
    /// Runs the agent `a` of `env` against this server: its answer after
    /// four requests (three tool turns), all on one connection.
    fn answers_four_turns_on_one_connection(&self, env: &Env) {
        run(env, &self.url)
            .arg("a")
            .assert()
            .success()
            .stdout("done");
        assert_eq!(*self.requests.lock().unwrap(), 4);
        assert_eq!(*self.connections.lock().unwrap(), 1, "a connection a turn");
    }

    fn start(replies: Vec<Value>) -> KeptAlive {
        let replies = replies.iter().map(Value::to_string).collect();
        KeptAlive::serve("application/json", replies)
    }

    /// Each of `bodies` as a reply of `content_type`.
    fn serve(content_type: &'static str, bodies: Vec<String>) -> KeptAlive {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let (connections, requests) = (Arc::new(Mutex::new(0)), Arc::new(Mutex::new(0)));
        let (opened, asked) = (Arc::clone(&connections), Arc::clone(&requests));
        let lines = Arc::new(Mutex::new(Vec::new()));
        let heard = Arc::clone(&lines);
        let replies = Arc::new(Mutex::new(bodies));
        thread::spawn(move || {
            for mut conn in listener.incoming().flatten() {
                *opened.lock().unwrap() += 1;
                let (asked, replies) = (Arc::clone(&asked), Arc::clone(&replies));
                let heard = Arc::clone(&heard);
                thread::spawn(move || {
                    while let Some(request) = read_request(&mut conn) {
                        let line = request.split(|&b| b == b'\r').next().unwrap_or_default();
                        heard
                            .lock()
                            .unwrap()
                            .push(String::from_utf8_lossy(line).into_owned());
                        let n = {
                            let mut asked = asked.lock().unwrap();
                            *asked += 1;
                            *asked
                        };
                        let replies = replies.lock().unwrap();
                        let body = &replies[(n - 1).min(replies.len() - 1)];
                        let head = format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\n\r\n",
                            body.len()
                        );
                        if conn.write_all(format!("{head}{body}").as_bytes()).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        KeptAlive {
            url,
            connections,
            requests,
            lines,
        }
    }
}

#[test]
fn a_tool_conversation_is_one_connection_kept_alive() {
    let env = Env::new();
    tool_agent(&env, "\"list_directory\"", "");
    let call = |id: &str| {
        json!({"model": "claude-test", "stop_reason": "tool_use",
               "content": [{"type": "tool_use", "id": id, "name": "list_directory", "input": {"path": "."}}],
               "usage": {"input_tokens": 5, "output_tokens": 3}})
    };
    let server = KeptAlive::start(vec![
        call("t0"),
        call("t1"),
        call("t2"),
        anthropic_reply("done"),
    ]);
    server.answers_four_turns_on_one_connection(&env);
}

/// Through a forwarding proxy a tool conversation is one connection to
/// the proxy, every request on it in absolute form, the first and those
/// after it alike; the model server's name is the proxy's to look up
/// (`.invalid` resolves nowhere here). The proxy here is a caching one:
/// it answers itself.
#[test]
fn a_tool_conversation_through_a_forwarding_proxy_is_one_connection_in_absolute_form() {
    let env = Env::new();
    tool_agent(&env, "\"list_directory\"", "");
    let call = |id: &str| {
        json!({"model": "claude-test", "stop_reason": "tool_use",
               "content": [{"type": "tool_use", "id": id, "name": "list_directory", "input": {"path": "."}}],
               "usage": {"input_tokens": 5, "output_tokens": 3}})
    };
    let proxy = KeptAlive::start(vec![call("t0"), call("t1"), anthropic_reply("done")]);
    let model = "http://models.invalid:8080";
    run(&env, model)
        .env("HTTP_PROXY", &proxy.url)
        .arg("a")
        .assert()
        .success()
        .stdout("done");
    let line = format!("POST {model}/v1/messages HTTP/1.1");
    assert_eq!(*proxy.lines.lock().unwrap(), [line.as_str(); 3]);
    assert_eq!(*proxy.connections.lock().unwrap(), 1, "a connection a turn");
}

/// The built-in tools' calls go through the run's client too: two web
/// searches at the provider's own host ride its one kept-alive
/// connection (each search made a client, and a connection, of its own).
#[test]
fn web_searches_share_the_runs_connection() {
    let env = Env::new();
    tool_agent(&env, "\"web_search\"", "");
    let call = |id: &str| {
        json!({"model": "claude-test", "stop_reason": "tool_use",
               "content": [{"type": "tool_use", "id": id, "name": "web_search", "input": {"query": "q"}}],
               "usage": {"input_tokens": 5, "output_tokens": 3}})
    };
    let found = json!({"results": [{"title": "T", "url": "https://example.com", "content": "c"}]});
    // Provider and search alike, in the order the run asks: a call, its
    // search, a call, its search, the answer.
    let server = KeptAlive::start(vec![
        call("t0"),
        found.clone(),
        call("t1"),
        found,
        anthropic_reply("done"),
    ]);
    run(&env, &server.url)
        .env("TAVILY_API_KEY", "tvly-test")
        .env("AXE_WEB_SEARCH_BASE_URL", &server.url)
        .arg("a")
        .assert()
        .success()
        .stdout("done");
    assert_eq!(*server.requests.lock().unwrap(), 5);
    assert_eq!(
        *server.connections.lock().unwrap(),
        1,
        "a connection a search"
    );
}

/// A proxy or roots variable that cannot be used fails the calls it
/// would carry, one line each, exit 3: never passed by, which would send
/// the request around the proxy, or trust other roots.
#[test]
fn unusable_proxy_and_roots_variables_fail_the_call_naming_them() {
    let env = Env::new();
    env.agent_file("a").write();
    let url = "https://localhost:9";
    let fails = |var: &str, value: &str| {
        let out = served_by(env.cmd("axe-run"), url)
            .env(var, value)
            .args(["a", "hi"])
            .assert()
            .code(3)
            .get_output()
            .clone();
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let missing = env.root().join("no-such.pem");
    assert_eq!(
        fails("SSL_CERT_FILE", missing.to_str().unwrap()),
        format!(
            "connection to {url}/v1/messages failed: certificate file {} (SSL_CERT_FILE): no such file or directory\n",
            missing.display()
        )
    );
    let empty = env.root().join("empty.pem");
    std::fs::write(&empty, "no certificate here\n").unwrap();
    assert_eq!(
        fails("SSL_CERT_FILE", empty.to_str().unwrap()),
        format!(
            "connection to {url}/v1/messages failed: certificate file {} (SSL_CERT_FILE): no PEM certificate in it\n",
            empty.display()
        )
    );
    assert_eq!(
        fails("HTTPS_PROXY", "ftp://proxy:21"),
        format!(
            "connection to {url}/v1/messages failed: the proxy HTTPS_PROXY names is not a proxy URL (expected http://host:port): \"ftp://proxy:21\"\n"
        )
    );
    // Its credentials are never shown, whatever else is wrong with it.
    assert_eq!(
        fails("HTTPS_PROXY", "ftp://axe-user:s3cr%40t@proxy:21"),
        format!(
            "connection to {url}/v1/messages failed: the proxy HTTPS_PROXY names is not a proxy URL (expected http://host:port): \"ftp://***@proxy:21\"\n"
        )
    );
}

/// A streamed reply of Anthropic's: a `list_directory` call (`id`), or
/// the text "done" when `id` is `None`.
fn streamed(id: Option<&str>) -> String {
    let block = match id {
        Some(id) => json!({"type": "tool_use", "id": id, "name": "list_directory", "input": {}}),
        None => json!({"type": "text", "text": "done"}),
    };
    let stop = if id.is_some() { "tool_use" } else { "end_turn" };
    let mut events = vec![
        sse_event(
            "message_start",
            &json!({"type": "message_start", "message": {"model": "claude-test", "usage": {"input_tokens": 1}}}),
        ),
        sse_event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": 0, "content_block": block}),
        ),
    ];
    if id.is_some() {
        events.push(sse_event(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "input_json_delta", "partial_json": "{\"path\": \".\"}"}}),
        ));
    }
    events.push(sse_event(
        "message_delta",
        &json!({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 1}}),
    ));
    events.push(sse_event("message_stop", &json!({"type": "message_stop"})));
    // What a server may send after the end marker: the stream is read to
    // its end, or the connection could not be used again.
    events.push(": bye\n\n".to_owned());
    events.concat()
}

#[test]
fn a_streamed_tool_conversation_is_one_connection_too() {
    let env = Env::new();
    tool_agent(&env, "\"list_directory\"", "stream = true");
    let bodies = vec![
        streamed(Some("t0")),
        streamed(Some("t1")),
        streamed(Some("t2")),
        streamed(None),
    ];
    let server = KeptAlive::serve("text/event-stream", bodies);
    server.answers_four_turns_on_one_connection(&env);
}
