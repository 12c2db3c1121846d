//! `axe-run`'s options from the Go `axe`'s later releases (issue 24), each
//! against the local server: the token budget, response formats, prompt
//! caching and its counts, OpenRouter's cost, Gemini's tool loop, and a
//! conversation carried from run to run with `--messages`.

use std::fs;

use serde_json::{Value, json};

use crate::run::{run, tool_use};
use crate::server::{Answer, Recorded, Server};
use crate::tools::{calls, tool_agent};
use crate::util::{Env, read, stdout};
use crate::wire::{anthropic_reply, google_reply, openai_reply, system_text};

fn json_of(out: &std::process::Output) -> Value {
    serde_json::from_str(&stdout(out)).unwrap()
}

/// The output of a command that must exit with `code`.
trait Exits {
    fn exits(&mut self, code: i32) -> std::process::Output;
}

impl Exits for assert_cmd::Command {
    fn exits(&mut self, code: i32) -> std::process::Output {
        self.assert().code(code).get_output().clone()
    }
}

/// The parent `boss`, which may call `helper`, with `extra` in its file;
/// both keep a run log and state.
fn family(env: &Env, model: &str, extra: &str) {
    let member = |name: &str| {
        env.agent_file(name)
            .model(model)
            .prompt(&format!("You are {name}."))
            .memory("")
            .state("")
    };
    member("boss")
        .toml("sub_agents = [\"helper\"]")
        .toml(extra)
        .write();
    member("helper").write();
}

/// A reply with text before its one `call_agent` call to `helper`.
fn thinking_then_call(usage: Value) -> Value {
    let mut reply = tool_use(&[("c1", json!({"agent": "helper", "task": "look"}))]);
    reply["content"]
        .as_array_mut()
        .unwrap()
        .insert(0, json!({"type": "text", "text": "Let me ask the helper."}));
    reply["usage"] = usage;
    reply
}

// --- [budget] --------------------------------------------------------------

#[test]
fn a_spent_budget_stops_before_tools_run_prints_the_partial_answer_and_remembers_nothing() {
    let env = Env::new();
    family(&env, "anthropic/claude-test", "[budget]\nmax_tokens = 10\n");
    let server = Server::start(vec![Answer::json(
        200,
        &thinking_then_call(json!({"input_tokens": 8, "output_tokens": 5})),
    )]);
    run(&env, &server.url)
        .args(["boss", "go"])
        .assert()
        .code(4)
        .stdout("Let me ask the helper.")
        .stderr("budget exceeded: used 13 of 10 tokens\n");
    assert_eq!(server.requests().len(), 1, "the helper never ran");
    assert!(!env.log_path("boss").exists(), "no run-log entry");
    assert!(!env.state_path("boss").exists(), "no state written");

    // --json: the document, then the same line and code.
    let out = run(&env, &server.url)
        .args(["boss", "go", "--json"])
        .exits(4);
    let doc = json_of(&out);
    assert_eq!(doc["content"], "Let me ask the helper.");
    assert_eq!(
        (
            &doc["budget_max_tokens"],
            &doc["budget_used_tokens"],
            &doc["budget_exceeded"]
        ),
        (&json!(10), &json!(13), &json!(true))
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("budget exceeded: used 13 of 10 tokens"));
}

#[test]
fn the_budget_is_shared_with_sub_agents_and_the_flag_sets_it() {
    let env = Env::new();
    family(&env, "anthropic/claude-test", "");
    // The parent's first turn uses 8, the helper 18: 26 of 20 before the
    // parent's second call, which is never made.
    let server = Server::route(|r| {
        if system_text(&r.json()).starts_with("You are boss.") {
            Answer::json(
                200,
                &thinking_then_call(json!({"input_tokens": 5, "output_tokens": 3})),
            )
        } else {
            Answer::json(200, &anthropic_reply("found it"))
        }
    });
    let out = run(&env, &server.url)
        .args(["boss", "go", "--budget-tokens", "20", "--json", "-v"])
        .exits(4);
    let doc = json_of(&out);
    assert_eq!(doc["budget_used_tokens"], 26);
    assert_eq!(doc["budget_exceeded"], true);
    assert_eq!(doc["input_tokens"], 5, "the parent's own turns");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Tokens:   5 input, 3 output (cumulative, budget: 26/20)\n"),
        "{stderr}"
    );
    // With --json, the error is a JSON line too.
    assert!(
        stderr.ends_with("{\"error\":\"budget exceeded: used 26 of 20 tokens\",\"exit_code\":4}\n")
    );
    assert_eq!(server.requests().len(), 2, "no third call");

    // A budget the run stays within: a normal run, the fields still there.
    let server = Server::start(vec![Answer::json(200, &anthropic_reply("ok"))]);
    let out = run(&env, &server.url)
        .args(["helper", "go", "--budget-tokens", "100", "--json"])
        .exits(0);
    let doc = json_of(&out);
    assert_eq!(
        (&doc["budget_used_tokens"], &doc["budget_exceeded"]),
        (&json!(18), &json!(false))
    );
    // 0 is no limit, over the agent's own; without a budget, no fields.
    env.agent(
        "tight",
        "name = \"tight\"\nmodel = \"anthropic/claude-test\"\n[budget]\nmax_tokens = 1\n",
    );
    let server = Server::start(vec![Answer::json(
        200,
        &thinking_then_call(json!({"input_tokens": 5, "output_tokens": 3})),
    )]);
    let out = run(&env, &server.url)
        .args(["tight", "go", "--budget-tokens", "0", "--json"])
        .exits(0);
    assert!(json_of(&out).get("budget_max_tokens").is_none());
}

#[test]
fn a_sub_agent_that_finds_the_budget_spent_makes_no_call() {
    let env = Env::new();
    family(
        &env,
        "anthropic/claude-test",
        "[sub_agents_config]\nparallel = false\n",
    );
    // Two calls one after the other: the first helper spends the budget,
    // the second is refused before its call, and the parent stops.
    let server = Server::route(|r| {
        if system_text(&r.json()).starts_with("You are boss.") {
            let calls = [
                ("c1", json!({"agent": "helper", "task": "one"})),
                ("c2", json!({"agent": "helper", "task": "two"})),
            ];
            Answer::json(200, &tool_use(&calls))
        } else {
            Answer::json(200, &anthropic_reply("found it"))
        }
    });
    run(&env, &server.url)
        .args(["boss", "go", "--budget-tokens", "20"])
        .assert()
        .code(4)
        .stderr("budget exceeded: used 26 of 20 tokens\n");
    assert_eq!(server.requests().len(), 2, "the parent's and one helper's");
}

#[test]
fn a_sub_agent_called_after_the_budget_is_spent_starts_nothing() {
    let env = Env::new();
    family(
        &env,
        "anthropic/claude-test",
        "[sub_agents_config]\nparallel = false\n",
    );
    let marker = env.root().join("started");
    // `second`'s one MCP server marks that it was started (and is gone).
    env.agent(
        "second",
        &format!(
            "name = \"second\"\nmodel = \"anthropic/claude-test\"\nsystem_prompt = \"You are second.\"\n\
             [[mcp_servers]]\nname = \"local\"\ntransport = \"stdio\"\ncommand = \"touch\"\nargs = [{:?}]\nrequired = false\n",
            marker.display().to_string()
        ),
    );
    let boss = env.config_dir().join("axe/agents/boss.toml");
    let text = fs::read_to_string(&boss).unwrap();
    fs::write(
        &boss,
        text.replace("[\"helper\"]", "[\"helper\", \"second\"]"),
    )
    .unwrap();
    // The helper spends the budget; `second`, called after it in the same
    // reply, finds it spent.
    let server = Server::route(|r| {
        if system_text(&r.json()).starts_with("You are boss.") {
            let calls = [
                ("c1", json!({"agent": "helper", "task": "one"})),
                ("c2", json!({"agent": "second", "task": "two"})),
            ];
            Answer::json(200, &tool_use(&calls))
        } else {
            Answer::json(200, &anthropic_reply("found it"))
        }
    });
    let out = run(&env, &server.url)
        .args(["boss", "go", "--budget-tokens", "20", "--json"])
        .exits(4);
    assert_eq!(server.requests().len(), 2, "the parent's and the helper's");
    assert!(!marker.exists(), "second's MCP server was started");
    let doc = json_of(&out);
    let details = doc["tool_call_details"].as_array().unwrap();
    assert_eq!(
        details[1]["output"],
        "Error: sub-agent \"second\" failed - budget exceeded: used 26 of 20 tokens. You may retry or proceed without this result."
    );
}

#[test]
fn a_sub_agent_that_spends_the_budget_on_the_last_turn_ends_the_run_over_budget() {
    let env = Env::new();
    family(&env, "anthropic/claude-test", "");
    // The parent's 49 first turns call a tool it does not have and cost
    // nothing; its 50th, the last it may take, calls the helper, whose
    // reply (18 tokens) spends the budget of 10. The run is over budget,
    // not out of turns: the sub-agent's failure is the budget's.
    let server = Server::route(|r| {
        let body = r.json();
        if !system_text(&body).starts_with("You are boss.") {
            return Answer::json(200, &anthropic_reply("found it"));
        }
        let free = json!({"input_tokens": 0, "output_tokens": 0});
        // Turn k sends 2k - 1 messages.
        if body["messages"].as_array().unwrap().len() < 99 {
            let call = json!({"type": "tool_use", "id": "n", "name": "nothing", "input": {}});
            let reply = json!({
                "model": "claude-test", "content": [call], "stop_reason": "tool_use", "usage": free
            });
            return Answer::json(200, &reply);
        }
        Answer::json(200, &thinking_then_call(free))
    });
    let out = run(&env, &server.url)
        .args(["boss", "go", "--budget-tokens", "10", "--json"])
        .exits(4);
    let doc = json_of(&out);
    assert_eq!(doc["content"], "Let me ask the helper.");
    assert_eq!(
        (
            &doc["budget_max_tokens"],
            &doc["budget_used_tokens"],
            &doc["budget_exceeded"]
        ),
        (&json!(10), &json!(18), &json!(true))
    );
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .ends_with("{\"error\":\"budget exceeded: used 18 of 10 tokens\",\"exit_code\":4}\n")
    );
    assert_eq!(server.requests().len(), 51, "50 turns and the helper's");
    assert!(!env.state_path("boss").exists(), "nothing remembered");
}

#[test]
fn a_negative_budget_is_a_config_error() {
    let env = Env::new();
    env.agent(
        "a",
        "name = \"a\"\nmodel = \"anthropic/m\"\n[budget]\nmax_tokens = -5\n",
    );
    env.cmd("axe-run")
        .args(["a", "--dry-run"])
        .assert()
        .code(2)
        .stderr("budget.max_tokens must be non-negative\n");
}

// --- [params] response_format ----------------------------------------------

/// The body `model` is sent with `format` as the agent's response_format.
fn sent_with(model: &str, format: &str, reply: Value) -> Value {
    let env = Env::new();
    env.agent(
        "f",
        &format!("name = \"f\"\nmodel = \"{model}\"\n[params]\nresponse_format = {format}\n"),
    );
    let server = Server::start(vec![Answer::json(200, &reply)]);
    run(&env, &server.url).args(["f", "q"]).assert().success();
    server.only_request().json()
}

const SCHEMA: &str = r#"{ type = "json_schema", name = "verdict", strict = true, schema = { type = "object", properties = { ok = { type = "boolean" } } } }"#;

#[test]
fn response_formats_go_out_in_each_providers_words() {
    let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
    let openai = sent_with("openai/gpt", "\"json_object\"", openai_reply("{}"));
    assert_eq!(openai["response_format"], json!({"type": "json_object"}));
    let openai = sent_with("openai/gpt", SCHEMA, openai_reply("{}"));
    assert_eq!(
        openai["response_format"],
        json!({"type": "json_schema", "json_schema": {"name": "verdict", "strict": true, "schema": schema}})
    );
    let openrouter = sent_with("openrouter/x/y", "\"text\"", openai_reply("t"));
    assert_eq!(openrouter["response_format"], json!({"type": "text"}));
    let ollama = sent_with(
        "ollama/llama3",
        "\"json_object\"",
        crate::wire::ollama_reply("{}"),
    );
    assert_eq!(ollama["format"], "json");
    let ollama = sent_with("ollama/llama3", SCHEMA, crate::wire::ollama_reply("{}"));
    assert_eq!(ollama["format"], schema);
    let google = sent_with("google/gemini-x", SCHEMA, google_reply("{}"));
    assert_eq!(
        google["generationConfig"],
        json!({"responseMimeType": "application/json", "responseJsonSchema": schema})
    );
    // Free text asks nothing of Anthropic, which has no JSON mode.
    let anthropic = sent_with("anthropic/claude", "\"text\"", anthropic_reply("t"));
    assert!(anthropic.get("response_format").is_none());
}

#[test]
fn a_json_format_anthropic_cannot_give_or_an_unknown_type_is_refused() {
    let env = Env::new();
    env.agent(
        "a",
        "name = \"a\"\nmodel = \"anthropic/claude\"\n[params]\nresponse_format = \"json_object\"\n",
    );
    let server = Server::start(vec![Answer::json(200, &anthropic_reply("x"))]);
    run(&env, &server.url)
        .args(["a", "q"])
        .assert()
        .code(2)
        .stderr("params.response_format \"json_object\" is not supported by provider \"anthropic\" (supported by openai, ollama, openrouter, google, requesty, atlascloud, edenai)\n");
    assert!(server.requests().is_empty());
    // -m to a provider that can: the same agent runs.
    let server = Server::start(vec![Answer::json(200, &openai_reply("{}"))]);
    run(&env, &server.url)
        .args(["a", "q", "-m", "openai/gpt"])
        .assert()
        .success();
    for (format, why) in [
        (
            "\"xml\"",
            "unknown type \"xml\" (expected text, json_object, json_schema)",
        ),
        (
            "{ type = \"json_schema\" }",
            "type \"json_schema\" needs a schema",
        ),
        (
            "{ type = \"json_object\", schema = {} }",
            "unknown field \"schema\" for type \"json_object\"",
        ),
        ("3", "must be a string or a table"),
    ] {
        env.agent(
            "bad",
            &format!(
                "name = \"bad\"\nmodel = \"openai/m\"\n[params]\nresponse_format = {format}\n"
            ),
        );
        env.cmd("axe-run")
            .args(["bad", "--dry-run"])
            .assert()
            .code(2)
            .stderr(format!("params.response_format: {why}\n"));
    }
}

// --- prompt caching ---------------------------------------------------------

/// A persona long enough to be worth caching.
fn long_persona() -> String {
    "You review Rust code with care. ".repeat(40)
}

#[test]
fn anthropic_caches_the_stable_prefix_and_a_repeat_run_sends_it_byte_for_byte() {
    let env = Env::new();
    let persona = long_persona();
    env.agent(
        "c",
        &format!(
            "name = \"c\"\nmodel = \"anthropic/claude-test\"\nsystem_prompt = \"{persona}\"\nsub_agents = [\"c\"]\n[memory]\nenabled = true\n"
        ),
    );
    let reply = |usage: Value| {
        let mut r = anthropic_reply("fine");
        r["usage"] = usage;
        Answer::json(200, &r)
    };
    let server = Server::start(vec![
        reply(
            json!({"input_tokens": 20, "output_tokens": 7, "cache_creation_input_tokens": 300, "cache_read_input_tokens": 0}),
        ),
        reply(
            json!({"input_tokens": 60, "output_tokens": 7, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 300}),
        ),
    ]);
    let first = run(&env, &server.url).args(["c", "one", "--json"]).exits(0);
    let first = json_of(&first);
    assert_eq!(
        (
            &first["input_tokens"],
            &first["cache_write_tokens"],
            &first["cache_read_tokens"]
        ),
        (&json!(320), &json!(300), &json!(0)),
        "input counts every prompt token, cached or not"
    );
    let second = run(&env, &server.url).args(["c", "two", "-v"]).exits(0);
    assert!(String::from_utf8_lossy(&second.stderr).contains("\nCache:    300 read, 0 written\n"));
    let bodies: Vec<Value> = server.requests().iter().map(Recorded::json).collect();
    let ephemeral = json!({"type": "ephemeral"});
    for body in &bodies {
        let tools = body["tools"].as_array().unwrap();
        assert_eq!(tools.last().unwrap()["cache_control"], ephemeral);
        assert_eq!(body["system"][0]["cache_control"], ephemeral);
        assert_eq!(body["system"][0]["text"], persona.as_str());
    }
    // The first run's entry is in the second's prompt, after the cached
    // block, which stayed the same.
    assert_eq!(bodies[0]["system"].as_array().unwrap().len(), 1);
    assert_eq!(bodies[0]["system"][0], bodies[1]["system"][0]);
    let memory = bodies[1]["system"][1]["text"].as_str().unwrap();
    assert!(memory.starts_with("\n\n---\n\n## Memory\n\n") && memory.contains("**Task:** one"));
    assert!(bodies[1]["system"][1].get("cache_control").is_none());
}

#[test]
fn cache_false_sends_the_prompt_as_before() {
    let env = Env::new();
    let persona = long_persona();
    env.agent(
        "c",
        &format!(
            "name = \"c\"\nmodel = \"anthropic/claude-test\"\nsystem_prompt = \"{persona}\"\nsub_agents = [\"c\"]\n[params]\ncache = false\n"
        ),
    );
    let server = Server::start(vec![Answer::json(200, &anthropic_reply("x"))]);
    run(&env, &server.url).args(["c", "q"]).assert().success();
    let body = server.only_request().json();
    assert_eq!(body["system"], persona.as_str());
    assert!(!body.to_string().contains("cache_control"));
}

#[test]
fn openai_cached_tokens_are_counted_streamed_or_not() {
    let env = Env::new();
    env.agent("o", "name = \"o\"\nmodel = \"openai/gpt\"\n");
    let usage = json!({"prompt_tokens": 50, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 32}});
    let mut whole = openai_reply("hi");
    whole["usage"] = usage.clone();
    let streamed = Answer::sse(&[
        crate::server::sse_data(&json!({"model": "gpt-test", "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]}).to_string()),
        crate::server::sse_data(&json!({"model": "gpt-test", "choices": [], "usage": usage}).to_string()),
        crate::server::sse_data("[DONE]"),
    ]);
    let server = Server::start(vec![Answer::json(200, &whole), streamed]);
    for args in [&["o", "q", "--json"][..], &["o", "q", "--json", "--stream"]] {
        let out = run(&env, &server.url).args(args).exits(0);
        let doc = json_of(&out);
        assert_eq!(
            (&doc["input_tokens"], &doc["cache_read_tokens"]),
            (&json!(50), &json!(32)),
            "{args:?}"
        );
        assert!(doc.get("cache_write_tokens").is_none());
    }
}

// --- OpenRouter's cost -------------------------------------------------------

#[test]
fn openrouter_cost_is_summed_over_turns_and_sub_agents() {
    let env = Env::new();
    family(&env, "openrouter/anthropic/claude", "");
    let server = Server::route(|r| {
        let body = r.json();
        assert_eq!(body["usage"], json!({"include": true}), "cost asked for");
        let boss =
            system_text(&body).is_empty() && body["messages"][0]["content"] == "You are boss.";
        let turns = body["messages"].as_array().unwrap().len();
        let mut reply = if boss && turns == 2 {
            json!({"model": "m", "choices": [{"index": 0, "message": {"role": "assistant", "content": null,
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "call_agent", "arguments": "{\"agent\":\"helper\",\"task\":\"t\"}"}}]},
                "finish_reason": "tool_calls"}]})
        } else {
            openai_reply("done")
        };
        reply["usage"] = json!({"prompt_tokens": 10, "completion_tokens": 1, "cost": 0.25});
        Answer::json(200, &reply)
    });
    let out = run(&env, &server.url)
        .args(["boss", "go", "--json"])
        .exits(0);
    let doc = json_of(&out);
    assert_eq!(server.requests().len(), 3);
    assert_eq!(
        doc["cost"], 0.75,
        "two turns of the parent and the helper's"
    );
    assert_eq!(doc["input_tokens"], 20, "the parent's own turns");
    // axe-llm too; a provider without a cost has no field.
    let out = env
        .cmd("axe-llm")
        .env("AXE_OPENROUTER_BASE_URL", &server.url)
        .env("OPENROUTER_API_KEY", crate::wire::KEY)
        .args(["-m", "openrouter/x/y", "--json", "q"])
        .exits(0);
    assert_eq!(json_of(&out)["cost"], 0.25);
    let server = Server::start(vec![Answer::json(200, &anthropic_reply("x"))]);
    let out = run(&env, &server.url)
        .args(["helper", "q", "--json", "-m", "anthropic/m"])
        .exits(0);
    assert!(json_of(&out).get("cost").is_none());
}

// --- Gemini -------------------------------------------------------------------

#[test]
fn gemini_runs_a_tool_loop_with_a_sub_agent() {
    let env = Env::new();
    family(&env, "google/gemini-test", "");
    let server = Server::route(|r| {
        let body = r.json();
        let contents = body["contents"].as_array().unwrap();
        if system_text(&body).starts_with("You are boss.") && contents.len() == 1 {
            return Answer::json(
                200,
                &json!({"candidates": [{"content": {"role": "model", "parts": [
                    {"functionCall": {"name": "call_agent", "args": {"agent": "helper", "task": "look"}}}
                ]}, "finishReason": "STOP"}], "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 2}}),
            );
        }
        if system_text(&body).starts_with("You are helper.") {
            return Answer::json(200, &google_reply("found it"));
        }
        let last = &contents.last().unwrap()["parts"][0];
        Answer::json(200, &google_reply(&format!("saw {last}")))
    });
    let out = run(&env, &server.url)
        .args(["boss", "go", "--json"])
        .exits(0);
    let doc = json_of(&out);
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    for r in &requests {
        assert_eq!(r.path, "/v1beta/models/gemini-test:generateContent");
        assert_eq!(r.header("x-goog-api-key"), Some(crate::wire::KEY));
    }
    let result =
        json!({"functionResponse": {"name": "call_agent", "response": {"content": "found it"}}});
    assert_eq!(doc["content"], format!("saw {result}"));
    assert_eq!(doc["tool_calls"], 1);
    assert_eq!(doc["input_tokens"], 15, "4 and 11 over the parent's turns");
}

// --- --messages ---------------------------------------------------------------

#[test]
fn a_conversation_goes_on_from_messages_and_comes_back_whole() {
    let env = Env::new();
    env.memory_agent("m", "");
    let given = json!([
        {"role": "user", "content": "Name a Unix tool."},
        {"role": "assistant", "content": "grep"}
    ]);
    let conv = env.root().join("conv.json");
    fs::write(&conv, given.to_string()).unwrap();
    let server = Server::start(vec![Answer::json(200, &anthropic_reply("sed"))]);
    let out = run(&env, &server.url)
        .args([
            "m",
            "--json",
            "--messages",
            conv.to_str().unwrap(),
            "Another?",
        ])
        .exits(0);
    let sent = server.only_request().json()["messages"].clone();
    assert_eq!(sent.as_array().unwrap()[..2], given.as_array().unwrap()[..]);
    assert_eq!(sent[2]["role"], "user");
    assert_eq!(sent.as_array().unwrap().len(), 3);
    let doc = json_of(&out);
    assert_eq!(
        doc["messages"],
        json!([
            {"role": "user", "content": "Name a Unix tool."},
            {"role": "assistant", "content": "grep"},
            {"role": "user", "content": "Another?"},
            {"role": "assistant", "content": "sed"}
        ])
    );
    assert!(read(&env.log_path("m")).contains("**Task:** Another?"));

    // Fed back through standard input, without a prompt: the last
    // message is the user's to answer.
    let mut asked = doc["messages"].clone();
    asked
        .as_array_mut()
        .unwrap()
        .push(json!({"role": "user", "content": "And a third?"}));
    let server = Server::start(vec![Answer::json(200, &anthropic_reply("awk"))]);
    let out = run(&env, &server.url)
        .args(["m", "--json", "--messages", "-"])
        .write_stdin(asked.to_string())
        .exits(0);
    let messages = json_of(&out)["messages"].clone();
    assert_eq!(messages.as_array().unwrap().len(), 6);
    assert_eq!(messages[5]["content"], "awk");
    assert_eq!(
        server.only_request().json()["messages"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
}

#[test]
fn bad_messages_are_one_line_naming_the_message() {
    let env = Env::new();
    env.agent("a", "name = \"a\"\nmodel = \"anthropic/m\"\n");
    let server = Server::start(vec![Answer::json(200, &anthropic_reply("x"))]);
    let cases = [
        (
            r#"{"role": "user"}"#,
            "expected a JSON array of messages, found an object",
        ),
        (
            r#"[{"role": "system", "content": "x"}]"#,
            "message 0: unknown role \"system\" (expected user, assistant or tool)",
        ),
        (
            r#"[{"role": "user", "content": "x"}, {"role": "tool", "tool_results": [{"call_id": "c9", "content": "r"}]}]"#,
            "message 1: tool result for \"c9\" matches no tool call of the message before it",
        ),
        (
            r#"[{"role": "user", "content": "x"}, {"role": "assistant", "tool_calls": [{"id": "c1", "name": "recall"}]}]"#,
            "message 1: tool call \"c1\" (recall) has no result in the tool message after it",
        ),
    ];
    for (text, why) in cases {
        run(&env, &server.url)
            .args(["a", "q", "--messages", "-"])
            .write_stdin(text)
            .assert()
            .code(1)
            .stderr(format!("invalid messages -: {why}\n"));
    }
    run(&env, &server.url)
        .args(["a", "--messages", "-"])
        .write_stdin(r#"[{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]"#)
        .assert()
        .code(1)
        .stderr("--messages: the conversation does not end with a user message: give a prompt to send next\n");
    // A file far over the bound is refused by its size, unread.
    let big = env.root().join("big.json");
    fs::File::create(&big).unwrap().set_len(65 << 20).unwrap();
    let out = run(&env, &server.url)
        .args(["a", "q", "--messages", big.to_str().unwrap()])
        .exits(1);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("failed to read messages ") && err.contains("over the limit"),
        "{err}"
    );
    assert!(server.requests().is_empty());
}

#[test]
fn dry_run_shows_the_turns_before_the_task() {
    let env = Env::new();
    env.agent("a", "name = \"a\"\nmodel = \"anthropic/m\"\n");
    let conv = r#"[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}, {"role": "user", "content": "and now?"}]"#;
    let out = env
        .cmd("axe-run")
        .args(["a", "--dry-run", "--messages", "-"])
        .write_stdin(conv)
        .exits(0);
    let text = stdout(&out);
    assert!(
        text.contains("--- Task ---\nand now?\n\n--- Stdin ---\n(none)\n\n--- Messages ---\n2 message(s) before the task\n"),
        "{text}"
    );
    let out = env
        .cmd("axe-run")
        .args(["a", "--dry-run", "--json", "--messages", "-"])
        .write_stdin(conv)
        .exits(0);
    let doc = json_of(&out);
    assert_eq!(doc["task"], "and now?");
    assert_eq!(doc["messages"].as_array().unwrap().len(), 2);
}

#[test]
fn anthropic_cache_counts_come_from_a_stream_too() {
    let env = Env::new();
    env.agent("a", "name = \"a\"\nmodel = \"anthropic/claude-test\"\n");
    let event = crate::server::sse_event;
    let server = Server::start(vec![Answer::sse(&[
        event(
            "message_start",
            &json!({"type": "message_start", "message": {"model": "claude-test",
                "usage": {"input_tokens": 4, "cache_read_input_tokens": 900, "cache_creation_input_tokens": 100}}}),
        ),
        event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": "hi"}}),
        ),
        event(
            "message_delta",
            &json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}),
        ),
        event("message_stop", &json!({"type": "message_stop"})),
    ])]);
    let out = run(&env, &server.url)
        .args(["a", "q", "--stream", "--json"])
        .exits(0);
    let doc = json_of(&out);
    assert_eq!(
        (
            &doc["input_tokens"],
            &doc["output_tokens"],
            &doc["cache_read_tokens"],
            &doc["cache_write_tokens"]
        ),
        (&json!(1004), &json!(2), &json!(900), &json!(100))
    );
}

#[test]
fn a_budget_that_stops_a_reply_of_tool_calls_gives_back_messages_to_send_again() {
    let env = Env::new();
    let work = tool_agent(&env, "\"read_file\"", "[budget]\nmax_tokens = 10\n");
    fs::write(work.join("f.txt"), "hello\n").unwrap();
    // The second reply, only a tool call, takes the run past its budget.
    let read = || calls(&[("read_file", json!({"path": "f.txt"}))]);
    let server = Server::start(vec![read(), read()]);
    let conv = env.root().join("conv.json");
    fs::write(&conv, "[]").unwrap();
    let out = run(&env, &server.url)
        .args([
            "a",
            "--json",
            "--messages",
            conv.to_str().unwrap(),
            "read it",
        ])
        .exits(4);
    let messages = json_of(&out)["messages"].clone();
    // No empty assistant message, which providers refuse (Anthropic's
    // "text content blocks must be non-empty"): the call the budget
    // stopped is left out, and with it the reply that was nothing else.
    let roles: Vec<&Value> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["role"])
        .collect();
    assert_eq!(roles, [&json!("user"), &json!("assistant"), &json!("tool")]);
    assert_eq!(messages[1]["tool_calls"][0]["name"], "read_file");

    // Sent again with the next prompt: every message has something in it.
    let server = Server::start(vec![Answer::json(200, &anthropic_reply("ok"))]);
    run(&env, &server.url)
        .args(["a", "--messages", "-", "--budget-tokens", "0", "go on"])
        .write_stdin(messages.to_string())
        .assert()
        .success()
        .stdout("ok");
    let sent = server.only_request().json()["messages"].clone();
    assert_eq!(sent.as_array().unwrap().len(), 4);
    assert!(
        sent.as_array().unwrap().iter().all(|m| m["content"] != ""),
        "{sent}"
    );
}

#[test]
fn a_run_whose_one_reply_overshoots_the_budget_is_reported_and_remembers_nothing() {
    let env = Env::new();
    env.agent(
        "local",
        "name = \"local\"\nmodel = \"anthropic/claude-test\"\n[memory]\nenabled = true\n",
    );
    let mut reply = anthropic_reply("hello");
    reply["usage"] = json!({"input_tokens": 700, "output_tokens": 5});
    let server = Server::start(vec![Answer::json(200, &reply), Answer::json(200, &reply)]);
    // The answer is printed, then the line: the run was not within budget.
    run(&env, &server.url)
        .args(["local", "--budget-tokens", "5", "hi"])
        .assert()
        .code(4)
        .stdout("hello")
        .stderr("budget exceeded: used 705 of 5 tokens\n");
    assert!(!env.log_path("local").exists(), "no run-log entry");
    let out = run(&env, &server.url)
        .args(["local", "--budget-tokens", "5", "--json", "hi"])
        .exits(4);
    let doc = json_of(&out);
    assert_eq!(doc["content"], "hello");
    assert_eq!(
        (
            &doc["budget_max_tokens"],
            &doc["budget_used_tokens"],
            &doc["budget_exceeded"]
        ),
        (&json!(5), &json!(705), &json!(true))
    );
    assert!(!env.log_path("local").exists(), "no run-log entry");
    assert_eq!(server.requests().len(), 2, "one call per run");
}

#[test]
fn a_prompt_whose_estimate_alone_is_over_the_budget_is_refused_before_any_call() {
    let env = Env::new();
    env.agent(
        "local",
        "name = \"local\"\nmodel = \"anthropic/claude-test\"\n[memory]\nenabled = true\n",
    );
    let server = Server::start(Vec::new());
    // 1,000 characters: about 250 tokens, one per 4 characters.
    let prompt = "x".repeat(1000);
    run(&env, &server.url)
        .args(["local", "--budget-tokens", "100", &prompt])
        .assert()
        .code(4)
        .stdout("")
        .stderr(
            "budget exceeded before any call: the prompt alone is about 250 tokens \
             (1 per 4 characters), over the budget of 100\n",
        );
    assert!(server.requests().is_empty(), "no request made");
    assert!(!env.log_path("local").exists(), "nothing remembered");
}
