//! `axe-llm` against a local server speaking each provider's wire format.

use std::fs;
use std::io::Read;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use predicates::prelude::*;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::server::{
    Answer, Gate, PATIENCE, Raw, Server, closed_port_url, not_http, sse_data, sse_event,
};
use crate::util::{Env, stdout};
use crate::wire::{
    KEY, anthropic_reply, google_reply, ollama_reply, openai_reply, reply_for, stream_answer,
};

/// `axe-llm` pointed at `server` for `provider`, with a key where one is
/// needed.
fn llm(env: &Env, url: &str, provider: &str) -> Command {
    Command::from_std(llm_std(env, url, provider))
}

fn llm_std(env: &Env, url: &str, provider: &str) -> std::process::Command {
    let mut cmd = env.std_cmd("axe-llm");
    // Piped standard input follows the prompt words: the harness's own
    // must not be read.
    cmd.stdin(Stdio::null());
    cmd.env(format!("AXE_{}_BASE_URL", provider.to_uppercase()), url);
    match provider {
        "anthropic" => cmd.env("ANTHROPIC_API_KEY", KEY),
        "openai" => cmd.env("OPENAI_API_KEY", KEY),
        "openrouter" => cmd.env("OPENROUTER_API_KEY", KEY),
        "google" => cmd.env("GEMINI_API_KEY", KEY),
        _ => &mut cmd,
    };
    cmd
}

const PROVIDERS: [&str; 5] = ["anthropic", "openai", "ollama", "openrouter", "google"];

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct Envelope {
    model: String,
    content: String,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    stop_reason: String,
    duration_ms: u64,
    /// How many, as in `axe-run --json`.
    tool_calls: u64,
    calls: Vec<Value>,
    /// Always there: the conversation the call was kept in, or null.
    conversation_id: Value,
}

#[test]
fn anthropic_request_is_exact() {
    let env = Env::new();
    let server = Server::start(vec![Answer::json(200, &anthropic_reply("Hi there"))]);
    llm(&env, &server.url, "anthropic")
        .args([
            "-m",
            "anthropic/claude-x",
            "-s",
            "Be brief",
            "hello",
            "world",
        ])
        .assert()
        .success()
        .stdout("Hi there")
        .stderr("");
    let req = server.only_request();
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(req.header("x-api-key"), Some(KEY));
    assert_eq!(req.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(req.header("content-type"), Some("application/json"));
    assert_eq!(req.header("authorization"), None);
    assert_eq!(
        req.json(),
        json!({
            "model": "claude-x", "max_tokens": 4096, "system": "Be brief",
            "messages": [{"role": "user", "content": "hello world"}]
        })
    );
}

#[test]
fn google_request_is_exact_and_the_key_stays_out_of_the_url() {
    let env = Env::new();
    let server = Server::start(vec![Answer::json(200, &google_reply("Hi there"))]);
    let out = llm(&env, &server.url, "google")
        .args([
            "-m",
            "google/gemini-2.5-flash",
            "-s",
            "Be brief",
            "--temperature",
            "0.5",
            "--max-tokens",
            "64",
            "--json",
            "hello",
        ])
        .assert()
        .success()
        .get_output()
        .clone();
    let e: Envelope = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        (e.content.as_str(), e.model.as_str(), e.stop_reason.as_str()),
        ("Hi there", "gemini-test", "STOP")
    );
    let req = server.only_request();
    assert_eq!(req.path, "/v1beta/models/gemini-2.5-flash:generateContent");
    assert_eq!(req.header("x-goog-api-key"), Some(KEY));
    assert_eq!(req.header("authorization"), None);
    assert_eq!(
        req.json(),
        json!({
            "systemInstruction": {"parts": [{"text": "Be brief"}]},
            "contents": [{"role": "user", "parts": [{"text": "hello"}]}],
            "generationConfig": {"temperature": 0.5, "maxOutputTokens": 64}
        })
    );
    // A 404 names where the request went, which carries no key.
    let server = Server::start(vec![Answer::raw(404, "")]);
    llm(&env, &server.url, "google")
        .args(["-m", "google/nope", "q"])
        .assert()
        .code(1)
        .stderr(format!(
            "bad_request: {}/v1beta/models/nope:generateContent answered 404 Not Found\n",
            server.url
        ));
    // Google's own address needs a key: without one, nothing is sent.
    env.cmd("axe-llm")
        .args(["-m", "google/m", "q"])
        .assert()
        .code(2)
        .stderr(format!(
            "API key for provider \"google\" is not configured: GEMINI_API_KEY is not set, and there is no {}\n",
            env.config_dir().join("axe/config.toml").display()
        ));
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn google_blocked_prompts_and_cut_streams_are_errors() {
    let env = Env::new();
    let blocked = json!({"promptFeedback": {"blockReason": "SAFETY"}});
    let server = Server::start(vec![Answer::json(200, &blocked)]);
    llm(&env, &server.url, "google")
        .args(["-m", "google/m", "q"])
        .assert()
        .code(1)
        .stderr("bad_request: the prompt was blocked: SAFETY\n");
    // A stream without a finish reason did not end.
    let server = Server::start(vec![Answer::sse(&[sse_data(
        &json!({"candidates": [{"content": {"parts": [{"text": "half"}]}}]}).to_string(),
    )])]);
    llm(&env, &server.url, "google")
        .args(["-m", "google/m", "--stream", "q"])
        .assert()
        .code(3)
        .stderr("server: the reply ended before it was complete\n");
}

#[test]
fn a_request_may_ask_for_json_where_the_provider_can_give_it() {
    let env = Env::new();
    let file = env.root().join("req.json");
    fs::write(
        &file,
        r#"{"messages": [{"role": "user", "content": "q"}], "response_format": "json_object"}"#,
    )
    .unwrap();
    let server = Server::start(vec![Answer::json(200, &openai_reply("{}"))]);
    llm(&env, &server.url, "openai")
        .args(["-m", "openai/m", "--request", file.to_str().unwrap()])
        .assert()
        .success();
    assert_eq!(
        server.only_request().json()["response_format"],
        json!({"type": "json_object"})
    );
    llm(&env, &server.url, "anthropic")
        .args(["-m", "anthropic/m", "--request", file.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(
            "params.response_format \"json_object\" is not supported by provider \"anthropic\"",
        ));
    assert_eq!(server.requests().len(), 1, "nothing sent to Anthropic");
    fs::write(
        &file,
        r#"{"messages": [{"role": "user", "content": "q"}], "response_format": "yaml"}"#,
    )
    .unwrap();
    llm(&env, &server.url, "openai")
        .args(["-m", "openai/m", "--request", file.to_str().unwrap()])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "response_format: unknown type \"yaml\" (expected text, json_object, json_schema)",
        ));
}

#[test]
fn anthropic_sends_params_when_set_and_no_system_when_empty() {
    let env = Env::new();
    let server = Server::start(vec![Answer::json(200, &anthropic_reply("ok"))]);
    llm(&env, &server.url, "anthropic")
        .args([
            "-m",
            "anthropic/claude-x",
            "--temperature",
            "0.5",
            "--max-tokens",
            "100",
            "hi",
        ])
        .assert()
        .success();
    assert_eq!(
        server.only_request().json(),
        json!({
            "model": "claude-x", "max_tokens": 100, "temperature": 0.5,
            "messages": [{"role": "user", "content": "hi"}]
        })
    );
}

#[test]
fn openai_request_is_exact_and_prompt_comes_from_stdin() {
    let env = Env::new();
    let server = Server::start(vec![Answer::json(200, &openai_reply("fine"))]);
    llm(&env, &server.url, "openai")
        .args(["-m", "openai/gpt-x", "--system", "sys"])
        .write_stdin("diff --git a b\n+line\n")
        .assert()
        .success()
        .stdout("fine");
    let req = server.only_request();
    assert_openai_bearer(&req);
    assert_eq!(
        req.json(),
        json!({
            "model": "gpt-x",
            "messages": [
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "diff --git a b\n+line\n"}
            ]
        })
    );
}

/// An OpenAI-wire request: its path, the key as a bearer token, no
/// Anthropic key header.
fn assert_openai_bearer(req: &crate::server::Recorded) {
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(
        req.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(req.header("x-api-key"), None);
}

#[test]
fn openrouter_request_is_openais_with_its_own_key_and_model_names() {
    let env = Env::new();
    let server = Server::start(vec![Answer::json(200, &openai_reply("routed"))]);
    llm(&env, &server.url, "openrouter")
        .env("OPENAI_API_KEY", "not-this-one")
        .args([
            "-m",
            "openrouter/anthropic/claude-sonnet-4",
            "--system",
            "sys",
            "--max-tokens",
            "64",
            "--temperature",
            "0.5",
            "hello",
        ])
        .assert()
        .success()
        .stdout("routed");
    let req = server.only_request();
    assert_openai_bearer(&req);
    assert_eq!(
        req.json(),
        json!({
            "model": "anthropic/claude-sonnet-4",
            "messages": [
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "hello"}
            ],
            "temperature": 0.5,
            "max_tokens": 64,
            // Asking for the call's cost.
            "usage": {"include": true}
        })
    );
}

#[test]
fn openrouter_needs_its_own_key() {
    // At OpenRouter's own address (no base URL set), OpenAI's key is not
    // sent in its place: the call is refused before anything is sent.
    Env::new()
        .cmd("axe-llm")
        .env("OPENAI_API_KEY", KEY)
        .args(["-m", "openrouter/openai/gpt-4o", "q"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("OPENROUTER_API_KEY"))
        .stderr(predicate::str::contains(KEY).not());
}

#[test]
fn openai_sends_params_given_and_no_zero_max_tokens() {
    let env = Env::new();
    let server = Server::start(vec![Answer::json(200, &openai_reply("ok"))]);
    llm(&env, &server.url, "openai")
        .args(["-m", "openai/gpt-x", "--max-tokens", "0", "q"])
        .assert()
        .success();
    assert_eq!(
        server.only_request().json(),
        json!({"model": "gpt-x", "messages": [{"role": "user", "content": "q"}]}),
        "nothing given, nothing sent"
    );
    // An explicit temperature is sent, 0 included, as axe-run sends it:
    // from the flag and from a request file.
    let server = Server::start(vec![Answer::json(200, &openai_reply("ok"))]);
    llm(&env, &server.url, "openai")
        .args([
            "-m",
            "openai/gpt-x",
            "--temperature",
            "0",
            "--max-tokens",
            "64",
            "q",
        ])
        .assert()
        .success();
    assert_eq!(
        server.only_request().json(),
        json!({"model": "gpt-x", "max_tokens": 64, "temperature": 0.0,
               "messages": [{"role": "user", "content": "q"}]})
    );
    let server = Server::start(vec![Answer::json(200, &openai_reply("ok"))]);
    llm(&env, &server.url, "openai")
        .args(["-m", "openai/gpt-x", "--request", "-"])
        .write_stdin(r#"{"temperature": 0, "messages": [{"role": "user", "content": "q"}]}"#)
        .assert()
        .success();
    assert_eq!(server.only_request().json()["temperature"], json!(0.0));
}

#[test]
fn prompt_words_come_first_then_piped_stdin() {
    let env = Env::new();
    let server = Server::start(vec![Answer::json(200, &openai_reply("short"))]);
    llm(&env, &server.url, "openai")
        .args(["-m", "openai/gpt-x", "summarize", "this"])
        .write_stdin("line one\nline two\n")
        .assert()
        .success()
        .stdout("short");
    assert_eq!(
        server.only_request().json()["messages"],
        json!([{"role": "user", "content": "summarize this\n\nline one\nline two\n"}])
    );
    // A blank standard input (`echo |`) adds nothing to the words.
    let server = Server::start(vec![Answer::json(200, &openai_reply("short"))]);
    llm(&env, &server.url, "openai")
        .args(["-m", "openai/gpt-x", "just", "words"])
        .write_stdin(" \n\t\n")
        .assert()
        .success();
    assert_eq!(
        server.only_request().json()["messages"],
        json!([{"role": "user", "content": "just words"}])
    );
}

#[test]
fn ollama_request_is_exact_and_needs_no_key() {
    let env = Env::new();
    let server = Server::start(vec![Answer::json(200, &ollama_reply("local"))]);
    llm(&env, &server.url, "ollama")
        .args(["-m", "ollama/llama3", "-s", "sys", "hi"])
        .assert()
        .success()
        .stdout("local");
    let req = server.only_request();
    assert_eq!(req.path, "/api/chat");
    assert_eq!(req.header("authorization"), None);
    assert_eq!(
        req.json(),
        json!({
            "model": "llama3", "stream": false,
            "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]
        })
    );
    let server = Server::start(vec![Answer::json(200, &ollama_reply("local"))]);
    llm(&env, &server.url, "ollama")
        .args([
            "-m",
            "ollama/llama3",
            "--temperature",
            "0.2",
            "--max-tokens",
            "9",
            "hi",
        ])
        .assert()
        .success();
    assert_eq!(
        server.only_request().json()["options"],
        json!({"temperature": 0.2, "num_predict": 9})
    );
}

#[test]
fn json_envelope_for_every_provider() {
    let env = Env::new();
    for provider in PROVIDERS {
        let server = Server::start(vec![Answer::json(200, &reply_for(provider, "answer"))]);
        let out = llm(&env, &server.url, provider)
            .args(["-m", &format!("{provider}/m"), "--json", "q"])
            .assert()
            .success();
        let text = stdout(out.get_output());
        assert!(text.ends_with("}\n") && text.lines().count() == 1);
        let e: Envelope = serde_json::from_str(&text).unwrap();
        assert_eq!(e.content, "answer");
        // Every call keeps its turn, as llm logs every prompt.
        assert!(e.conversation_id.is_string(), "{text}");
        assert_eq!((e.input_tokens, e.output_tokens), (Some(11), Some(7)));
        assert!(
            e.model.ends_with("-test"),
            "the server's model name: {}",
            e.model
        );
        assert!(!e.stop_reason.is_empty());
        assert!(e.duration_ms < 10_000);
        assert_eq!(
            (e.tool_calls, e.calls),
            (0, vec![]),
            "no tools without --request"
        );
    }
}

/// A conversation mid tool loop: a call was made, its result comes back.
fn tool_conversation() -> Value {
    json!({
        "system": "Use tools.",
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "call_1", "name": "weather", "arguments": {"city": "Paris"}}
            ]},
            {"role": "tool", "tool_results": [
                {"call_id": "call_1", "content": "sunny", "is_error": false}
            ]}
        ],
        "tools": [{
            "name": "weather", "description": "Current weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
        }]
    })
}

#[test]
fn request_files_map_tools_to_each_wire_format() {
    let env = Env::new();
    let file = env.root().join("req.json");
    std::fs::write(&file, tool_conversation().to_string()).unwrap();
    let schema =
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]});
    let expected = [
        (
            "anthropic",
            json!({
                "model": "m", "max_tokens": 4096, "system": "Use tools.",
                "messages": [
                    {"role": "user", "content": "Weather in Paris?"},
                    {"role": "assistant", "content": [
                        {"type": "tool_use", "id": "call_1", "name": "weather", "input": {"city": "Paris"}}
                    ]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "call_1", "content": "sunny", "is_error": false}
                    ]}
                ],
                "tools": [{"name": "weather", "description": "Current weather", "input_schema": schema}]
            }),
        ),
        (
            "openai",
            json!({
                "model": "m",
                "messages": [
                    {"role": "system", "content": "Use tools."},
                    {"role": "user", "content": "Weather in Paris?"},
                    {"role": "assistant", "content": "", "tool_calls": [
                        {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}}
                    ]},
                    {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}
                ],
                "tools": [{"type": "function", "function": {"name": "weather", "description": "Current weather", "parameters": schema}}]
            }),
        ),
        (
            "ollama",
            json!({
                "model": "m", "stream": false,
                "messages": [
                    {"role": "system", "content": "Use tools."},
                    {"role": "user", "content": "Weather in Paris?"},
                    {"role": "assistant", "content": "", "tool_calls": [
                        {"function": {"name": "weather", "arguments": {"city": "Paris"}}}
                    ]},
                    {"role": "tool", "content": "sunny"}
                ],
                "tools": [{"type": "function", "function": {"name": "weather", "description": "Current weather", "parameters": schema}}]
            }),
        ),
    ];
    // OpenRouter speaks OpenAI's wire, tools and all, and asks for the cost.
    let mut openrouter = ("openrouter", expected[1].1.clone());
    openrouter.1["usage"] = json!({"include": true});
    // Gemini: calls and results are parts, a result named after its call.
    let google = (
        "google",
        json!({
            "systemInstruction": {"parts": [{"text": "Use tools."}]},
            "contents": [
                {"role": "user", "parts": [{"text": "Weather in Paris?"}]},
                {"role": "model", "parts": [{"functionCall": {"name": "weather", "args": {"city": "Paris"}}}]},
                {"role": "user", "parts": [{"functionResponse": {"name": "weather", "response": {"content": "sunny"}}}]}
            ],
            "tools": [{"functionDeclarations": [{"name": "weather", "description": "Current weather", "parameters": schema}]}]
        }),
    );
    for (provider, body) in expected.into_iter().chain([openrouter, google]) {
        let server = Server::start(vec![Answer::json(
            200,
            &reply_for(provider, "It is sunny."),
        )]);
        llm(&env, &server.url, provider)
            .args([
                "-m",
                &format!("{provider}/m"),
                "--request",
                file.to_str().unwrap(),
            ])
            .assert()
            .success()
            .stdout("It is sunny.");
        assert_eq!(server.only_request().json(), body, "{provider}");
    }
}

#[test]
fn tool_calls_in_replies_come_back_in_json() {
    let env = Env::new();
    let file = env.root().join("req.json");
    std::fs::write(&file, tool_conversation().to_string()).unwrap();
    let replies = [
        (
            "anthropic",
            json!({"model": "c", "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 2},
                   "content": [{"type": "text", "text": "Checking."},
                               {"type": "tool_use", "id": "tu_9", "name": "weather", "input": {"city": "Oslo"}}]}),
            "tu_9",
        ),
        (
            "openai",
            json!({"model": "g", "usage": {"prompt_tokens": 1, "completion_tokens": 2},
                   "choices": [{"finish_reason": "tool_calls", "message": {"content": null, "tool_calls": [
                       {"id": "call_9", "type": "function", "function": {"name": "weather", "arguments": "{\"city\": \"Oslo\"}"}}]}}]}),
            "call_9",
        ),
        (
            "ollama",
            json!({"model": "l", "done": true, "done_reason": "stop", "message": {"content": "", "tool_calls": [
                {"function": {"name": "weather", "arguments": {"city": "Oslo"}}}]}}),
            "ollama_0",
        ),
    ];
    let openrouter = ("openrouter", replies[1].1.clone(), "call_9");
    for (provider, reply, id) in replies.into_iter().chain([openrouter]) {
        let server = Server::start(vec![Answer::json(200, &reply)]);
        let out = llm(&env, &server.url, provider)
            .args([
                "-m",
                &format!("{provider}/m"),
                "--request",
                file.to_str().unwrap(),
                "--json",
            ])
            .assert()
            .success();
        let e: Envelope = serde_json::from_str(&stdout(out.get_output())).unwrap();
        assert_eq!(
            e.calls,
            [json!({"id": id, "name": "weather", "arguments": {"city": "Oslo"}})],
            "{provider}"
        );
        assert_eq!(e.tool_calls, 1, "{provider}: the count, as axe-run's");
    }
}

#[test]
fn a_reply_of_tool_calls_alone_is_not_silent() {
    let env = Env::new();
    let file = env.root().join("req.json");
    std::fs::write(&file, tool_conversation().to_string()).unwrap();
    let reply = json!({"model": "g", "usage": {"prompt_tokens": 1, "completion_tokens": 2},
        "choices": [{"finish_reason": "tool_calls", "message": {"content": null, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\": \"Oslo\"}"}},
            {"id": "call_2", "type": "function", "function": {"name": "weather", "arguments": "{\"city\": \"Rome\"}"}}]}}]});
    let server = Server::start(vec![Answer::json(200, &reply)]);
    llm(&env, &server.url, "openai")
        .args(["-m", "openai/m", "--request", file.to_str().unwrap()])
        .assert()
        .success()
        .stdout("")
        .stderr(
            "Tool call: weather {\"city\":\"Oslo\"} (id call_1)\n\
             Tool call: weather {\"city\":\"Rome\"} (id call_2)\n",
        );
}

#[test]
fn request_from_stdin_and_flag_overrides() {
    let env = Env::new();
    let server = Server::start(vec![Answer::json(200, &openai_reply("ok"))]);
    let request = json!({"model": "openai/from-file", "system": "file", "temperature": 0.7,
                         "messages": [{"role": "user", "content": "q"}]});
    llm(&env, &server.url, "openai")
        .args(["--request", "-", "-s", "flag"])
        .write_stdin(request.to_string())
        .assert()
        .success();
    let body = server.only_request().json();
    assert_eq!(body["model"], "from-file");
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "flag"})
    );
    assert_eq!(body["temperature"], 0.7);
}

/// (provider, status, category, exit code)
const STATUSES: &[(&str, u16, &str, i32)] = &[
    ("anthropic", 400, "bad_request", 1),
    ("anthropic", 401, "auth", 3),
    ("anthropic", 403, "server", 3),
    ("anthropic", 404, "server", 3),
    ("anthropic", 429, "rate_limit", 3),
    ("anthropic", 500, "server", 3),
    ("anthropic", 503, "server", 3),
    ("anthropic", 529, "overloaded", 3),
    ("openai", 400, "bad_request", 1),
    ("openai", 401, "auth", 3),
    ("openai", 403, "auth", 3),
    ("openai", 404, "bad_request", 1),
    ("openai", 429, "rate_limit", 3),
    ("openai", 500, "server", 3),
    ("openai", 502, "server", 3),
    ("ollama", 400, "bad_request", 1),
    ("ollama", 404, "bad_request", 1),
    ("ollama", 500, "server", 3),
    ("openrouter", 400, "bad_request", 1),
    ("openrouter", 401, "auth", 3),
    ("openrouter", 402, "auth", 3),
    ("openrouter", 403, "auth", 3),
    ("openrouter", 404, "bad_request", 1),
    ("openrouter", 408, "timeout", 3),
    ("openrouter", 429, "rate_limit", 3),
    ("openrouter", 500, "server", 3),
    ("openrouter", 502, "overloaded", 3),
    ("openrouter", 503, "overloaded", 3),
    ("google", 400, "bad_request", 1),
    ("google", 401, "auth", 3),
    ("google", 403, "auth", 3),
    ("google", 404, "bad_request", 1),
    ("google", 429, "rate_limit", 3),
    ("google", 500, "server", 3),
    ("google", 503, "overloaded", 3),
    ("google", 504, "timeout", 3),
];

/// Where a call to model `m` goes under the base URL.
fn call_path(provider: &str) -> &'static str {
    match provider {
        "anthropic" => "/v1/messages",
        "ollama" => "/api/chat",
        "google" => "/v1beta/models/m:generateContent",
        _ => "/v1/chat/completions",
    }
}

fn error_body(provider: &str, message: &str) -> Value {
    match provider {
        "anthropic" => json!({"type": "error", "error": {"type": "x_error", "message": message}}),
        "openai" => json!({"error": {"message": message, "type": "x", "code": null}}),
        "openrouter" => json!({"error": {"code": 402, "message": message, "metadata": {}}}),
        "google" => {
            json!({"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}})
        }
        _ => json!({"error": message}),
    }
}

#[test]
fn every_error_status_maps_to_its_category_and_exit_code() {
    let env = Env::new();
    for &(provider, status, category, code) in STATUSES {
        let server = Server::start(vec![Answer::json(
            status,
            &error_body(provider, "told you so"),
        )]);
        llm(&env, &server.url, provider)
            .args(["-m", &format!("{provider}/m"), "q"])
            .assert()
            .code(code)
            .stdout("")
            .stderr(format!(
                "{category}: told you so ({}{} answered {status})\n",
                server.url,
                call_path(provider)
            ));
        // Without a usable body, the status text is the message.
        let server = Server::start(vec![Answer::raw(status, "<html>oops</html>")]);
        llm(&env, &server.url, provider)
            .args(["-m", &format!("{provider}/m"), "q"])
            .assert()
            .code(code)
            .stderr(predicate::str::starts_with(format!("{category}: ")))
            .stderr(predicate::str::contains("oops").not());
    }
}

#[test]
fn status_text_is_gos_when_the_body_says_nothing() {
    let env = Env::new();
    let server = Server::start(vec![Answer::raw(503, "")]);
    llm(&env, &server.url, "openai")
        .args(["-m", "openai/m", "q"])
        .assert()
        .code(3)
        .stderr(format!(
            "server: {}/v1/chat/completions answered 503 Service Unavailable\n",
            server.url
        ));
}

#[test]
fn malformed_and_empty_replies_are_server_errors() {
    let env = Env::new();
    let cases = [
        (
            "anthropic",
            Answer::raw(200, "not json"),
            "server: failed to parse response: ",
        ),
        (
            "openai",
            Answer::raw(200, "{\"choices\": "),
            "server: failed to parse response: ",
        ),
        (
            "ollama",
            Answer::raw(200, ""),
            "server: failed to parse response: ",
        ),
        (
            "anthropic",
            Answer::json(200, &json!({"model": "c", "content": []})),
            "server: response contains no content\n",
        ),
        (
            "openai",
            Answer::json(200, &json!({"model": "g", "choices": []})),
            "server: response contains no choices\n",
        ),
        (
            "ollama",
            Answer::json(200, &ollama_reply("")),
            "server: response contains no content\n",
        ),
        (
            "google",
            Answer::raw(200, "not json"),
            "server: failed to parse response: ",
        ),
        (
            "google",
            Answer::json(200, &json!({"candidates": []})),
            "server: response contains no candidates\n",
        ),
        (
            "google",
            Answer::json(
                200,
                &json!({"candidates": [{"content": {"role": "model", "parts": [{"text": "cut"}]}}]}),
            ),
            "server: response has no finish reason\n",
        ),
        (
            "google",
            Answer::json(
                200,
                &json!({"candidates": [{"content": {"role": "model", "parts": []}, "finishReason": "STOP"}]}),
            ),
            "server: response contains no content\n",
        ),
    ];
    for (provider, answer, message) in cases {
        let server = Server::start(vec![answer]);
        llm(&env, &server.url, provider)
            .args(["-m", &format!("{provider}/m"), "q"])
            .assert()
            .code(3)
            .stdout("")
            .stderr(predicate::str::starts_with(message))
            .stderr(predicate::function(|s: &str| s.lines().count() == 1));
    }
}

/// An error sent inside a stream after it began (OpenAI's and Gemini's
/// `{"error": {"message": ...}}` chunk) is the call's error: the
/// provider's message, or `stream error` when it gives none.
#[test]
fn an_error_chunk_in_a_stream_is_the_calls_error() {
    let env = Env::new();
    let cases = [
        (
            "openai",
            json!({"error": {"message": "overloaded mid-stream"}}),
            "server: overloaded mid-stream\n",
        ),
        ("openai", json!({"error": {}}), "server: stream error\n"),
        (
            "google",
            json!({"error": {"message": "quota gone"}}),
            "server: quota gone\n",
        ),
        (
            "google",
            json!({"error": {"code": 500}}),
            "server: stream error\n",
        ),
    ];
    for (provider, chunk, message) in cases {
        let server = Server::start(vec![Answer::sse(&[sse_data(&chunk.to_string())])]);
        llm(&env, &server.url, provider)
            .args(["-m", &format!("{provider}/m"), "--stream", "q"])
            .assert()
            .code(3)
            .stdout("")
            .stderr(message);
    }
}

#[test]
fn an_empty_text_block_is_an_empty_answer_not_an_error() {
    // M7 5.3: gc prints an empty analysis rather than failing.
    let env = Env::new();
    let server = Server::start(vec![Answer::json(200, &anthropic_reply(""))]);
    llm(&env, &server.url, "anthropic")
        .args(["-m", "anthropic/m", "q"])
        .assert()
        .success()
        .stdout("");
}

/// A base URL given as the whole endpoint URL, as many servers document
/// it, is that endpoint: its path is not added again.
#[test]
fn a_whole_endpoint_url_as_base_url_is_not_doubled() {
    let env = Env::new();
    let cases = [
        ("anthropic", "/v1/messages", "/v1/messages"),
        ("anthropic", "/proxy/v1/messages/", "/proxy/v1/messages"),
        ("openai", "/v1/chat/completions", "/v1/chat/completions"),
        (
            "openai",
            "/proxy/chat/completions",
            "/proxy/chat/completions",
        ),
        (
            "openrouter",
            "/api/v1/chat/completions",
            "/api/v1/chat/completions",
        ),
        ("ollama", "/api/chat", "/api/chat"),
        (
            "google",
            "/v1beta/models/other:generateContent",
            "/v1beta/models/m:generateContent",
        ),
        (
            "google",
            "/v1beta/models",
            "/v1beta/models/m:generateContent",
        ),
    ];
    for (provider, given, sent) in cases {
        let server = Server::start(vec![Answer::json(200, &reply_for(provider, "ok"))]);
        llm(&env, &format!("{}{given}", server.url), provider)
            .args(["-m", &format!("{provider}/m"), "q"])
            .assert()
            .success()
            .stdout("ok");
        assert_eq!(server.only_request().path, sent, "{provider} {given}");
    }
    // -v says the base URL was taken as the endpoint.
    let server = Server::start(vec![Answer::json(200, &openai_reply("ok"))]);
    env.agent("whole", "name = \"whole\"\nmodel = \"openai/m\"\n");
    let endpoint = format!("{}/v1/chat/completions", server.url);
    crate::wire::served_by(env.cmd("axe-run"), &endpoint)
        .args(["whole", "-v"])
        .assert()
        .success()
        .stderr(predicate::str::contains(format!(
            "Endpoint: {endpoint} (the base URL is a whole endpoint URL: used as it is)\n"
        )));
    assert_eq!(server.only_request().path, "/v1/chat/completions");
}

/// A server that is not the model API (a static file server, a web app)
/// is named with what it answered and what was expected; every HTTP
/// error names the URL and the status.
#[test]
fn an_http_error_names_the_url_the_status_and_what_was_expected() {
    let env = Env::new();
    let html = |status: u16, text: &'static str| {
        move |_: &crate::server::Recorded| Answer::Full {
            status,
            headers: vec![("content-type".into(), "text/html;charset=utf-8".into())],
            body: format!("<html><body><h1>Error response</h1><p>{text}</p></body></html>")
                .into_bytes(),
        }
    };
    let server = Server::route(html(501, "Unsupported method ('POST')"));
    llm(&env, &server.url, "anthropic")
        .args(["-m", "anthropic/m", "q"])
        .assert()
        .code(3)
        .stderr(format!(
            "server: {}/v1/messages answered 501 Not Implemented (text/html), not an Anthropic Messages API reply\n",
            server.url
        ));
    let server = Server::route(html(404, "File Not Found"));
    llm(&env, &server.url, "openai")
        .args(["-m", "openai/m", "q"])
        .assert()
        .code(1)
        .stderr(format!(
            "bad_request: {}/v1/chat/completions answered 404 Not Found (text/html), not an OpenAI Chat Completions API reply\n",
            server.url
        ));
    // The provider's own text, then where it came from.
    let server = Server::start(vec![Answer::json(
        400,
        &error_body("openai", "told you so"),
    )]);
    llm(&env, &server.url, "openai")
        .args(["-m", "openai/m", "q"])
        .assert()
        .code(1)
        .stderr(format!(
            "bad_request: told you so ({}/v1/chat/completions answered 400)\n",
            server.url
        ));
    let server = Server::start(vec![Answer::raw(503, "")]);
    llm(&env, &server.url, "ollama")
        .args(["-m", "ollama/m", "q"])
        .assert()
        .code(3)
        .stderr(format!(
            "server: {}/api/chat answered 503 Service Unavailable\n",
            server.url
        ));
}

/// What is wrong with a base URL is wrong with the configuration (exit 2),
/// found before any call: no scheme, a scheme axe does not speak, a query
/// string (where a key may hide, which is never printed).
#[test]
fn a_base_url_that_cannot_work_is_a_config_error() {
    let env = Env::new();
    let run = |url: &str, provider: &str| {
        llm(&env, url, provider)
            .args(["-m", &format!("{provider}/m"), "q"])
            .assert()
            .code(2)
            .stdout("")
    };
    run("localhost:8080", "openai").stderr(
        "base URL \"localhost:8080\" for provider \"openai\" has no scheme: write http://localhost:8080 (or https://) in AXE_OPENAI_BASE_URL or base_url\n",
    );
    run("ftp://h/x", "anthropic").stderr(
        "base URL \"ftp://h/x\" for provider \"anthropic\": axe speaks http:// and https:// only\n",
    );
    run("http://h/v1beta?key=hunter2", "google").stderr(
        "base URL \"http://h/v1beta\" for provider \"google\" has a query string or fragment, which axe cannot add a path to: remove it (a key goes in GEMINI_API_KEY or api_key)\n",
    );
}

#[test]
fn refused_connections() {
    let env = Env::new();
    let url = closed_port_url();
    llm(&env, &url, "ollama")
        .args(["-m", "ollama/llama3", "q"])
        .assert()
        .code(3)
        .stderr(format!(
            "connection refused: is Ollama running? (expected at {url})\n"
        ));
    llm(&env, &url, "anthropic")
        .args(["-m", "anthropic/m", "q"])
        .assert()
        .code(3)
        .stderr(format!(
            "connection to {url}/v1/messages failed: connection refused\n"
        ));
}

/// The one line `axe-llm` prints when its call to `base` fails, which
/// must be exit 3.
fn call_fails(env: &Env, base: &str) -> String {
    let out = llm(env, base, "anthropic")
        .args(["-m", "anthropic/m", "--timeout", "2", "q"])
        .assert()
        .code(3)
        .stdout("")
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(err.lines().count(), 1, "{err}");
    err
}

#[test]
fn an_unreachable_server_is_named_with_its_cause() {
    let env = Env::new();
    // A name no resolver can answer: glibc refuses the empty label before
    // sending any query, so this never leaves the machine. Offline, the
    // Quickstart's first call says the same of api.anthropic.com.
    let err = call_fails(&env, "http://a..b:8080");
    assert!(
        err.starts_with(
            "connection to http://a..b:8080/v1/messages failed: could not resolve host a..b: "
        ),
        "{err}"
    );
    assert!(!err.contains("uncategorized"), "{err}");

    // https:// to a server that answers in plain HTTP.
    let plain = not_http(Raw::Say(b"HTTP/1.1 400 Bad Request\r\n\r\n"));
    let err = call_fails(&env, &format!("https://{plain}"));
    assert!(
        err.starts_with(&format!(
            "connection to https://{plain}/v1/messages failed: the TLS handshake failed: "
        )),
        "{err}"
    );
    assert!(
        err.ends_with("(not a TLS server: should the base URL be http://?)\n"),
        "{err}"
    );

    // A proxy that hangs up on the handshake, or on the request.
    let hangs_up = not_http(Raw::HangUp);
    assert_eq!(
        call_fails(&env, &format!("https://{hangs_up}")),
        format!(
            "connection to https://{hangs_up}/v1/messages failed: the connection closed during the TLS handshake\n"
        )
    );
    assert_eq!(
        call_fails(&env, &format!("http://{hangs_up}")),
        format!(
            "connection to http://{hangs_up}/v1/messages failed: no HTTP reply: the connection closed, or what came back was not HTTP\n"
        )
    );

    // One that accepts and never says a word, over TLS too.
    let silent = not_http(Raw::Silent);
    for scheme in ["http", "https"] {
        assert_eq!(
            call_fails(&env, &format!("{scheme}://{silent}")),
            "timeout: no complete reply within 2s\n"
        );
    }
}

#[test]
fn a_reply_cut_off_names_the_url_it_came_from() {
    let env = Env::new();
    let cut = not_http(Raw::CutOff(
        b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{\"truncated",
    ));
    assert_eq!(
        call_fails(&env, &format!("http://{cut}")),
        format!(
            "connection to http://{cut}/v1/messages failed: the connection closed before the reply was complete\n"
        )
    );
}

#[test]
fn redirects_are_not_followed() {
    let env = Env::new();
    let target = Server::start(vec![Answer::json(200, &openai_reply("moved"))]);
    let server =
        Server::start(vec![Answer::raw(302, "").with_header(
            "location",
            &format!("{}/v1/chat/completions", target.url),
        )]);
    llm(&env, &server.url, "openai")
        .args(["-m", "openai/m", "q"])
        .assert()
        .code(3)
        .stderr(format!(
            "server: {}/v1/chat/completions answered 302 Found\n",
            server.url
        ));
    assert!(target.requests().is_empty(), "the redirect was followed");
}

/// A server whose answer to every request is held until the call is over
/// (the returned gate opened): it says nothing, or with `drip` it sends
/// that content type's piece every 100 ms, so no single read waits long,
/// but never finishes.
fn held_until_over(drip: Option<(&'static str, &str)>) -> (Server, Gate) {
    let call_over = Gate::new();
    let gate = call_over.clone();
    let drip = drip.map(|(content_type, piece)| (content_type, piece.as_bytes().to_vec()));
    let server = Server::route(move |_| match &drip {
        None => {
            gate.wait(PATIENCE);
            Answer::Drop
        }
        Some((content_type, piece)) => Answer::Drip {
            content_type,
            piece: piece.clone(),
            every: Duration::from_millis(100),
            until: gate.clone(),
        },
    });
    (server, call_over)
}

/// `axe-llm --timeout 1` with `flags` against `held_until_over(drip)`:
/// only the call's own deadline can end it, and it must, as a timeout.
fn times_out(drip: Option<(&'static str, &str)>, flags: &[&str]) {
    let env = Env::new();
    let (server, call_over) = held_until_over(drip);
    let started = Instant::now();
    llm(&env, &server.url, "openai")
        .args(["-m", "openai/m", "--timeout", "1"])
        .args(flags)
        .arg("q")
        .assert()
        .code(3)
        .stderr("timeout: no complete reply within 1s\n");
    let took = started.elapsed();
    call_over.open();
    assert!(!call_over.ran_out(), "the server ended it");
    assert_eq!(server.requests().len(), 1);
    // Not before the second was up (less a timer tick: the kernel may
    // wake a read that much early), and nowhere near the server's
    // patience.
    assert!(
        took >= Duration::from_millis(990) && took < Duration::from_secs(15),
        "took {took:?}"
    );
}

#[test]
fn timeout_bounds_the_whole_call() {
    times_out(None, &[]);
    times_out(None, &["--stream"]);
}

#[test]
fn a_reply_that_never_finishes_is_a_timeout() {
    times_out(Some(("application/json", " ")), &[]);
    times_out(Some(("text/event-stream", ": ping\n\n")), &["--stream"]);
}

#[test]
fn timeout_includes_retries() {
    let env = Env::new();
    // Every answer a 500 asking for another try in a second, 50 more
    // tries allowed: only the timeout can stop it. Each try starts at
    // least a second after the one before, and a wait that would end
    // past the deadline is not begun, so 3 seconds hold at most 3 tries.
    let server = Server::start(vec![
        Answer::json(500, &json!({})).with_header("retry-after", "1"),
    ]);
    let started = Instant::now();
    llm(&env, &server.url, "openai")
        .args(["-m", "openai/m", "--timeout", "3", "--retries", "50", "q"])
        .assert()
        .code(3)
        .stderr(format!(
            "server: {}/v1/chat/completions answered 500 Internal Server Error\n",
            server.url
        ));
    let took = started.elapsed();
    let tries = server.requests().len();
    assert!((2..=3).contains(&tries), "{tries} tries");
    assert!(took < Duration::from_secs(15), "took {took:?}");
}

#[test]
fn retries_honour_retry_after() {
    let env = Env::new();
    let server = Server::start(vec![
        Answer::json(429, &error_body("anthropic", "slow down")).with_header("retry-after", "1"),
        Answer::json(529, &error_body("anthropic", "overloaded")).with_header("retry-after", "0"),
        Answer::json(200, &anthropic_reply("finally")),
    ]);
    llm(&env, &server.url, "anthropic")
        .args(["-m", "anthropic/m", "--retries", "3", "q"])
        .assert()
        .success()
        .stdout("finally");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    let gap = reqs[1].at - reqs[0].at;
    assert!(
        gap >= Duration::from_millis(950),
        "waited {gap:?} for Retry-After: 1"
    );
    assert_eq!(reqs[0].body, reqs[2].body, "the same request each time");
}

#[test]
fn retries_cover_5xx_and_dropped_connections_but_not_client_errors() {
    let env = Env::new();
    let server = Server::start(vec![
        Answer::Drop,
        Answer::json(502, &json!({})).with_header("retry-after", "0"),
        Answer::json(200, &openai_reply("ok")),
    ]);
    llm(&env, &server.url, "openai")
        .args(["-m", "openai/m", "--retries", "2", "q"])
        .assert()
        .success()
        .stdout("ok");
    assert_eq!(server.requests().len(), 3);

    for status in [400, 401, 403, 404] {
        let server = Server::start(vec![Answer::json(status, &json!({}))]);
        llm(&env, &server.url, "openai")
            .args(["-m", "openai/m", "--retries", "3", "q"])
            .assert()
            .failure();
        assert_eq!(server.requests().len(), 1, "{status} was retried");
    }
    let server = Server::start(vec![Answer::json(500, &json!({}))]);
    llm(&env, &server.url, "openai")
        .args(["-m", "openai/m", "q"])
        .assert()
        .code(3);
    assert_eq!(server.requests().len(), 1, "no retries unless asked");
}

#[test]
fn streaming_prints_as_text_arrives_for_every_provider() {
    let env = Env::new();
    let pieces = ["The answer ", "is ", "forty-two", "."];
    for provider in PROVIDERS {
        // Anthropic's first text comes in its third event.
        let before_gate = if provider == "anthropic" { 3 } else { 1 };
        let (answer, gate) = stream_answer(provider, &pieces).gated_after(before_gate);
        let server = Server::start(vec![answer]);
        let mut child = llm_std(&env, &server.url, provider)
            .args(["-m", &format!("{provider}/m"), "--stream", "q"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The rest of the stream waits for the gate: the first words must
        // reach our stdout before the server sends anything more.
        let mut stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut all = Vec::new();
            let mut buf = [0u8; 64];
            while let Ok(n @ 1..) = stdout.read(&mut buf) {
                all.extend_from_slice(&buf[..n]);
                let _ = tx.send(all.clone());
            }
        });
        let mut seen = rx
            .recv_timeout(Duration::from_secs(5))
            .expect("text before the rest");
        assert_eq!(String::from_utf8_lossy(&seen), pieces[0], "{provider}");
        drop(gate);
        let status = child.wait().unwrap();
        assert!(status.success(), "{provider}: {status}");
        // The reader ends at the end of the child's output, now closed.
        for more in rx {
            seen = more;
        }
        assert_eq!(
            String::from_utf8(seen).unwrap(),
            pieces.concat(),
            "{provider}"
        );
        let req = server.only_request();
        let body = req.json();
        match provider {
            // Gemini streams from another method, named in the path.
            "google" => assert_eq!(req.path, "/v1beta/models/m:streamGenerateContent?alt=sse"),
            _ => assert_eq!(body["stream"], true, "{provider}"),
        }
        if provider == "openai" || provider == "openrouter" {
            assert_eq!(body["stream_options"], json!({"include_usage": true}));
        }
    }
}

#[test]
fn streamed_json_is_the_same_envelope() {
    let env = Env::new();
    for provider in PROVIDERS {
        let server = Server::start(vec![stream_answer(provider, &["a", "b", "c"])]);
        let out = llm(&env, &server.url, provider)
            .args(["-m", &format!("{provider}/m"), "--stream", "--json", "q"])
            .assert()
            .success();
        let e: Envelope = serde_json::from_str(&stdout(out.get_output())).unwrap();
        assert_eq!(e.content, "abc", "{provider}");
        assert_eq!(
            (e.input_tokens, e.output_tokens),
            (Some(11), Some(7)),
            "{provider}"
        );
        assert!(e.model.ends_with("-test"), "{provider}");
        let stop = match provider {
            "anthropic" => "end_turn",
            "google" => "STOP",
            _ => "stop",
        };
        assert_eq!(e.stop_reason, stop);
    }
}

#[test]
fn streamed_tool_calls_are_assembled() {
    let env = Env::new();
    let file = env.root().join("req.json");
    std::fs::write(&file, tool_conversation().to_string()).unwrap();
    let server = Server::start(vec![Answer::sse(&[
        sse_data(&json!({"model": "g", "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "id": "call_7", "type": "function", "function": {"name": "weather", "arguments": ""}}]}}]}).to_string()),
        sse_data(&json!({"model": "g", "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": "{\"city\":"}}]}}]}).to_string()),
        sse_data(&json!({"model": "g", "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": "\"Rome\"}"}}]}, "finish_reason": "tool_calls"}]}).to_string()),
        sse_data("[DONE]"),
    ])]);
    let out = llm(&env, &server.url, "openai")
        .args([
            "-m",
            "openai/m",
            "--stream",
            "--json",
            "--request",
            file.to_str().unwrap(),
        ])
        .assert()
        .success();
    let e: Envelope = serde_json::from_str(&stdout(out.get_output())).unwrap();
    assert_eq!(
        e.calls,
        [json!({"id": "call_7", "name": "weather", "arguments": {"city": "Rome"}})]
    );
    assert_eq!(e.stop_reason, "tool_calls");
}

#[test]
fn stream_errors_are_reported() {
    let env = Env::new();
    let server = Server::start(vec![Answer::sse(&[
        sse_event(
            "message_start",
            &json!({"type": "message_start", "message": {"model": "c", "usage": {}}}),
        ),
        sse_event(
            "error",
            &json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ),
    ])]);
    llm(&env, &server.url, "anthropic")
        .args(["-m", "anthropic/m", "--stream", "q"])
        .assert()
        .code(3)
        .stderr("overloaded: Overloaded\n");
}

#[test]
fn the_key_never_leaks() {
    let env = Env::new();
    let echo = format!("invalid x-api-key: {KEY}");
    let cases = [
        Answer::json(401, &error_body("anthropic", &echo)),
        Answer::json(200, &anthropic_reply(&format!("your key is {KEY}, right?"))),
    ];
    for answer in cases {
        let server = Server::start(vec![answer]);
        for json in [false, true] {
            let mut cmd = llm(&env, &server.url, "anthropic");
            cmd.args(["-m", "anthropic/m", "q"]);
            if json {
                cmd.arg("--json");
            }
            let out = cmd.output().unwrap();
            let all = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                !all.contains(KEY) && !all.contains("SECRET"),
                "leaked: {all}"
            );
            assert!(all.contains("[REDACTED]"), "{all}");
        }
    }
    // Split over stream pieces.
    let server = Server::start(vec![stream_answer(
        "openai",
        &["key: sk-test-SEC", "RET-4242 done"],
    )]);
    llm(&env, &server.url, "openai")
        .args(["-m", "openai/m", "--stream", "q"])
        .assert()
        .success()
        .stdout("key: [REDACTED] done");
}

#[test]
fn keys_and_base_urls_from_config_toml() {
    let env = Env::new();
    let server = Server::start(vec![Answer::json(200, &openai_reply("ok"))]);
    env.write(
        &env.config_dir().join("axe/config.toml"),
        format!(
            "[providers.openai]\napi_key_cmd = \"printf '%s\\\\n' cmd-key-1\"\nbase_url = \"{}/\"\n",
            server.url
        ),
    );
    env.cmd("axe-llm")
        .args(["-m", "openai/m", "q"])
        .assert()
        .success()
        .stdout("ok");
    assert_eq!(
        server.only_request().header("authorization"),
        Some("Bearer cmd-key-1")
    );
}

#[test]
fn key_and_config_errors() {
    let env = Env::new();
    env.cmd("axe-llm")
        .args(["-m", "anthropic/m", "q"])
        .assert()
        .code(2)
        .stderr(format!(
            "API key for provider \"anthropic\" is not configured: ANTHROPIC_API_KEY is not set, and there is no {}\n",
            env.config_dir().join("axe/config.toml").display()
        ));
    env.write(
        &env.config_dir().join("axe/config.toml"),
        "[providers.openai]\napi_key_cmd = \"echo nope >&2; exit 1\"\n",
    );
    env.cmd("axe-llm")
        .args(["-m", "openai/m", "q"])
        .assert()
        .code(3)
        .stderr("nope\napi_key_cmd for provider \"openai\" failed: exit status: 1\n");
    env.write(&env.config_dir().join("axe/config.toml"), "[providers\n");
    env.cmd("axe-llm")
        .args(["-m", "openai/m", "q"])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(
            "failed to parse config.toml: line 1",
        ));
}

#[test]
fn bad_input_errors() {
    let env = Env::new();
    let url = closed_port_url();
    let run = |args: &[&str]| llm(&env, &url, "openai").args(args).assert();
    run(&["-m", "gemini/pro", "q"]).code(1).stderr(
        "unsupported provider \"gemini\": supported providers are anthropic, openai, ollama, openrouter, google, requesty, atlascloud, edenai\n",
    );
    run(&["-m", "gpt4", "q"])
        .code(1)
        .stderr("invalid model format \"gpt4\": expected provider/model-name\n");
    run(&["-m", "openai/", "q"])
        .code(1)
        .stderr("invalid model format \"openai/\": empty model name\n");
    run(&["q"])
        .code(1)
        .stderr("missing required flag --model (or set default_model in config.toml)\n");
    run(&["-m", "openai/m"])
        .code(1)
        .stderr("no prompt: give PROMPT or pipe it on standard input\n");
    run(&["-m", "openai/m", "--system-file", "missing.txt", "q"])
        .code(2)
        .stderr("system file not found: missing.txt\n");
    run(&["-m", "openai/m", "-s", "a", "--system-file", "b", "q"])
        .code(1)
        .stderr("cannot use both --system and --system-file\n");
    run(&["-m", "openai/m", "--timeout", "0", "q"])
        .code(1)
        .stderr("--timeout must be a positive number of seconds\n");
    run(&["-m", "openai/m", "--retries", "x", "q"])
        .code(1)
        .stderr("error parsing flag --retries: invalid number \"x\"\n");
    let bad = env.root().join("bad.json");
    std::fs::write(&bad, "{\"messages\": [{\"role\": \"robot\"}]}").unwrap();
    run(&["-m", "openai/m", "--request", bad.to_str().unwrap()])
        .code(1)
        .stderr(predicate::str::starts_with(format!(
            "malformed request {}: unknown variant `robot`",
            bad.display()
        )));
    std::fs::write(&bad, "{\"messages\": []}").unwrap();
    run(&["-m", "openai/m", "--request", bad.to_str().unwrap()])
        .code(1)
        .stderr(format!(
            "malformed request {}: no messages\n",
            bad.display()
        ));
    run(&["-m", "openai/m", "--request", "nope.json"])
        .code(1)
        .stderr("failed to read request file nope.json: no such file or directory\n");
    run(&["-m", "openai/m", "--request", "x.json", "extra"])
        .code(1)
        .stderr("cannot combine --request with a PROMPT\n");
}

#[test]
fn unreadable_system_file_is_a_config_error() {
    let env = Env::new();
    let file = env.root().join("sys.txt");
    std::fs::write(&file, "secret persona").unwrap();
    crate::util::set_mode(&file, 0o000);
    env.unprivileged("axe-llm")
        .env("OPENAI_API_KEY", KEY)
        .env("AXE_OPENAI_BASE_URL", closed_port_url())
        .args([
            "-m",
            "openai/m",
            "--system-file",
            file.to_str().unwrap(),
            "q",
        ])
        .assert()
        .code(2)
        .stderr(format!(
            "failed to read system file {}: permission denied\n",
            file.display()
        ));
}

#[test]
fn system_file_is_sent() {
    let env = Env::new();
    let server = Server::start(vec![Answer::json(200, &anthropic_reply("ok"))]);
    let file = env.root().join("sys.md");
    std::fs::write(&file, "You review diffs.\n").unwrap();
    llm(&env, &server.url, "anthropic")
        .args([
            "-m",
            "anthropic/m",
            "--system-file",
            file.to_str().unwrap(),
            "q",
        ])
        .assert()
        .success();
    assert_eq!(
        server.only_request().json()["system"],
        "You review diffs.\n"
    );
}

/// Flags are read before anything is: a system prompt that is not UTF-8
/// is the error even when the request file is missing too, as cobra
/// parsed flags first in Go.
#[test]
fn a_malformed_flag_is_the_error_before_the_request_file_is_read() {
    use std::os::unix::ffi::OsStrExt;
    let env = Env::new();
    let missing = env.root().join("missing.json");
    env.cmd("axe-llm")
        .arg("-s")
        .arg(std::ffi::OsStr::from_bytes(b"be \xff brief"))
        .arg("--request")
        .arg(&missing)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "error parsing flag --system: not valid UTF-8",
        ))
        .stderr(predicate::str::contains("request file").not());
}

/// A model OpenAI's API does not serve (a local server's, as the
/// Quickstart's) with no base URL set: what is missing is the server's
/// address, named with the variable and the setting that give it, not
/// `OPENAI_API_KEY`; nothing is sent anywhere. A model of OpenAI's own
/// still asks for the key.
#[test]
fn a_local_model_without_a_base_url_asks_for_the_base_url_not_a_key() {
    let env = Env::new();
    env.agent(
        "local",
        "name = \"local\"\nmodel = \"openai/qwen2.5-7b-instruct\"\n",
    );
    let config = env.config_dir().join("axe/config.toml");
    let expected = format!(
        "base URL for provider \"openai\" is not configured: \"qwen2.5-7b-instruct\" is no model of its hosted API (https://api.openai.com), so set AXE_OPENAI_BASE_URL, or base_url under [providers.openai] in {}, to your server's address (http://localhost:8080/v1); OPENAI_API_KEY is only for the hosted API\n",
        config.display()
    );
    env.cmd("axe-llm")
        .args(["-m", "openai/qwen2.5-7b-instruct", "hi"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(expected.clone());
    env.cmd("axe-run")
        .args(["local", "hi"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(expected);
    env.cmd("axe-llm")
        .args(["-m", "openai/gpt-4o-mini", "hi"])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(
            "API key for provider \"openai\" is not configured: OPENAI_API_KEY is not set",
        ));
}
