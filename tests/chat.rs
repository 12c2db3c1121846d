//! `axe-chat` in a real terminal: tmux runs it, the test types with
//! send-keys and reads the screen with capture-pane, against the local
//! server. Without tmux the tests say so and pass (fail under
//! AXE_TEST_ALL=1, as CI runs them).

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use serde_json::{Value, json};

use crate::server::{Answer, PATIENCE, Recorded, Server, sse_event};
use crate::util::{Env, have, read};
use crate::wire::{KEY, stream_answer};

/// A tmux server of the test's own (its socket in the test's directory),
/// running `axe-chat ARGS` in a window; killed when dropped.
struct Term {
    socket: PathBuf,
}

impl Term {
    fn start(env: &Env, url: &str, args: &str) -> Term {
        let std = env.std_cmd("axe-chat");
        let mut script = String::from("#!/bin/sh\n");
        for (k, v) in std.get_envs() {
            let k = k.to_str().unwrap();
            match v {
                Some(v) => script.push_str(&format!("export {k}='{}'\n", v.to_str().unwrap())),
                None => script.push_str(&format!("unset {k}\n")),
            }
        }
        for p in ["ANTHROPIC", "OPENAI", "OLLAMA", "OPENROUTER", "GOOGLE"] {
            script.push_str(&format!("export AXE_{p}_BASE_URL='{url}'\n"));
        }
        script.push_str(&format!(
            "export ANTHROPIC_API_KEY='{KEY}'\nexport TERM=xterm\n"
        ));
        script.push_str(&format!(
            "cd '{}'\nexec '{}' {args}\n",
            env.root().display(),
            std.get_program().to_str().unwrap()
        ));
        let path = env.root().join("chat.sh");
        env.write(&path, script);
        let term = Term {
            socket: env.root().join("tmux.sock"),
        };
        term.tmux(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "chat",
            "-x",
            "120",
            "-y",
            "40",
        ])
        .arg(format!("sh {}", path.display()))
        .status()
        .unwrap();
        term.tmux(&["set-option", "-t", "chat", "remain-on-exit", "on"])
            .status()
            .unwrap();
        term
    }

    fn tmux(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("tmux");
        cmd.arg("-S").arg(&self.socket).args(args);
        cmd
    }

    /// Types `text` and, when `enter`, presses Enter.
    fn typed(&self, text: &str, enter: bool) {
        assert!(
            self.tmux(&["send-keys", "-t", "chat", "-l", text])
                .status()
                .unwrap()
                .success()
        );
        if enter {
            self.key("Enter");
        }
    }

    fn key(&self, key: &str) {
        assert!(
            self.tmux(&["send-keys", "-t", "chat", key])
                .status()
                .unwrap()
                .success()
        );
    }

    fn screen(&self) -> String {
        let out = self
            .tmux(&["capture-pane", "-p", "-J", "-t", "chat", "-S", "-200"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until the screen shows `text` `times` times, or fails.
    fn shows(&self, text: &str, times: usize) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.matches(text).count() >= times {
                return screen;
            }
            assert!(
                start.elapsed() < PATIENCE,
                "never showed {text:?}:\n{screen}"
            );
            std::thread::yield_now();
        }
    }

    /// Waits until the screen has `n` lines with the prompt.
    fn prompts(&self, n: usize) {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.lines().filter(|l| l.starts_with('>')).count() >= n {
                return;
            }
            assert!(start.elapsed() < PATIENCE, "never {n} prompts:\n{screen}");
            std::thread::yield_now();
        }
    }

    /// Waits until axe-chat has ended.
    fn ended(&self) {
        let start = Instant::now();
        loop {
            let out = self
                .tmux(&["display-message", "-p", "-t", "chat", "#{pane_dead}"])
                .output()
                .unwrap();
            if String::from_utf8_lossy(&out.stdout).trim() == "1" {
                return;
            }
            assert!(
                start.elapsed() < PATIENCE,
                "never ended:\n{}",
                self.screen()
            );
            std::thread::yield_now();
        }
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]).status();
    }
}

/// `(role, text)` of each message the request sent.
fn sent(r: &Recorded) -> Vec<(String, String)> {
    r.json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let text = match &m["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
                _ => String::new(),
            };
            (m["role"].as_str().unwrap().to_owned(), text)
        })
        .collect()
}

fn pair(role: &str, text: &str) -> (String, String) {
    (role.to_owned(), text.to_owned())
}

fn conversation_file(env: &Env, id: &str) -> PathBuf {
    env.data_dir()
        .join(format!("axe/conversations/agents/geo/{id}.jsonl"))
}

#[test]
fn chat_turns_carry_the_conversation_and_the_commands_work() {
    if !have("tmux") {
        return;
    }
    let env = Env::new();
    let server = Server::start(vec![
        stream_answer("anthropic", &["Par", "is."]),
        stream_answer("anthropic", &["About two ", "million."]),
    ]);
    env.agent_file("geo")
        .prompt("You are geo.")
        .memory("")
        .write();
    let term = Term::start(&env, &server.url, "geo");
    term.shows("axe chat with geo (anthropic/claude-test)", 1);
    term.typed("capital of France?", true);
    term.shows("Paris.", 1);
    term.prompts(2);
    term.typed("/help", true);
    term.shows("/exit            end the session", 1);
    term.prompts(3);
    term.typed("/model", true);
    term.shows("model: anthropic/claude-test", 1);
    term.prompts(4);
    term.typed("/save", true);
    let screen = term.shows("conversation: ", 1);
    term.prompts(5);
    let id = screen
        .lines()
        .find_map(|l| l.strip_prefix("conversation: "))
        .unwrap()
        .trim()
        .to_owned();
    // A line ending in \ goes on on the next.
    term.typed("how many people\\", true);
    term.shows("... ", 1);
    term.typed("live there?", true);
    term.shows("About two million.", 1);
    term.typed("/exit", true);
    term.ended();
    let requests = server.requests();
    assert_eq!(
        sent(&requests[1]),
        [
            pair("user", "capital of France?"),
            pair("assistant", "Paris."),
            pair("user", "how many people\nlive there?"),
        ]
    );
    // One run-log entry per turn, and the first turn's is not sent again
    // through the memory block of the second.
    let body = String::from_utf8_lossy(&requests[1].body).into_owned();
    assert_eq!(body.matches("capital of France?").count(), 1, "{body}");
    assert_eq!(read(&env.log_path("geo")).matches("## ").count(), 2);
    // The conversation is axe-run's: --cid goes on with it.
    assert_eq!(read(&conversation_file(&env, &id)).lines().count(), 6);
}

#[test]
fn ctrl_c_cancels_the_answer_not_the_session() {
    if !have("tmux") {
        return;
    }
    let env = Env::new();
    let (story, rest) = stream_answer("anthropic", &["Once upon", " a time"]).gated_after(3);
    let server = Server::start(vec![story, stream_answer("anthropic", &["Hello."])]);
    env.agent_file("geo")
        .prompt("You are geo.")
        .memory("")
        .write();
    let term = Term::start(&env, &server.url, "geo --cid tale --new");
    term.shows("axe chat with geo", 1);
    term.prompts(1);
    term.typed("tell a story", true);
    term.shows("Once upon", 1);
    term.key("C-c");
    term.shows("(answer cancelled)", 1);
    // The rest of the answer comes; it is not shown, and the session goes on.
    rest.send(()).unwrap();
    term.prompts(2);
    term.typed("hi", true);
    term.shows("Hello.", 1);
    let screen = term.screen();
    assert!(!screen.contains("a time"), "{screen}");
    // Ctrl-C while typing clears the line; Ctrl-D ends the session.
    term.prompts(3);
    term.typed("never sent", false);
    term.shows("never sent", 1);
    term.key("C-c");
    term.prompts(4);
    term.key("C-d");
    term.ended();
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        sent(&requests[1]),
        [pair("user", "hi")],
        "the cancelled turn is not kept"
    );
    let kept = read(&conversation_file(&env, "tale"));
    assert!(
        kept.contains("\"hi\"") && !kept.contains("tell a story"),
        "{kept}"
    );
}

/// A streamed reply that calls `name` with `input`.
fn streamed_call(name: &str, input: &Value) -> Answer {
    let mut events = vec![message_start()];
    events.extend(call_to_the_end(0, name, input));
    Answer::sse(&events)
}

/// The stream's first event.
fn message_start() -> String {
    sse_event(
        "message_start",
        &json!({"type": "message_start", "message": {"model": "claude-test", "usage": {"input_tokens": 1}}}),
    )
}

/// A call of `name` with `input` as the content block `index`, and the
/// stream's end after it.
fn call_to_the_end(index: usize, name: &str, input: &Value) -> [String; 5] {
    [
        sse_event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": index,
                    "content_block": {"type": "tool_use", "id": "t0", "name": name, "input": {}}}),
        ),
        sse_event(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
        ),
        sse_event(
            "content_block_stop",
            &json!({"type": "content_block_stop", "index": index}),
        ),
        sse_event(
            "message_delta",
            &json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 1}}),
        ),
        sse_event("message_stop", &json!({"type": "message_stop"})),
    ]
}

#[test]
fn each_tool_call_is_one_line_and_its_result_goes_back() {
    if !have("tmux") {
        return;
    }
    let env = Env::new();
    let work = env.root().join("work");
    env.write(&work.join("notes.txt"), "the launch is on friday");
    env.agent(
        "geo",
        &format!(
            "name = \"geo\"\nmodel = \"anthropic/claude-test\"\nworkdir = \"{}\"\ntools = [\"read_file\"]\n",
            work.display()
        ),
    );
    let server = Server::start(vec![
        streamed_call("read_file", &json!({"path": "notes.txt"})),
        stream_answer("anthropic", &["Friday."]),
    ]);
    let term = Term::start(&env, &server.url, "geo");
    term.prompts(1);
    term.typed("when is the launch?", true);
    term.shows("Friday.", 1);
    let screen = term.shows("[tool] read_file{\"path\":\"notes.txt\"}", 1);
    assert_eq!(screen.matches("[tool]").count(), 1, "{screen}");
    let second = server.requests()[1].json();
    assert!(
        second.to_string().contains("the launch is on friday"),
        "{second}"
    );
    term.prompts(2);
    term.typed("/exit", true);
    term.ended();
}

#[test]
fn sigterm_still_ends_the_session() {
    if !have("tmux") {
        return;
    }
    let env = Env::new();
    let server = Server::start(vec![]);
    env.agent_file("geo")
        .prompt("You are geo.")
        .memory("")
        .write();
    let term = Term::start(&env, &server.url, "geo");
    term.prompts(1);
    // Ctrl-C at the prompt is held, not an end; SIGTERM is.
    term.key("C-c");
    term.prompts(2);
    let out = term
        .tmux(&["display-message", "-p", "-t", "chat", "#{pane_pid}"])
        .output()
        .unwrap();
    let pid = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    term.ended();
}

/// A streamed reply that says `text` and then calls `name` with `input`.
fn said_then_called(text: &[&str], name: &str, input: &Value) -> Answer {
    let mut events = vec![
        message_start(),
        sse_event(
            "content_block_start",
            &json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
    ];
    for piece in text {
        events.push(sse_event(
            "content_block_delta",
            &json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}),
        ));
    }
    events.push(sse_event(
        "content_block_stop",
        &json!({"type": "content_block_stop", "index": 0}),
    ));
    events.extend(call_to_the_end(1, name, input));
    Answer::sse(&events)
}

/// The `[tool]` line is a line of its own: after the text the model said
/// before the call (which ended mid-line), before the answer's next word,
/// never inside either, whichever of the two reaches the terminal first.
#[test]
fn a_tool_line_never_lands_inside_the_answer() {
    if !have("tmux") {
        return;
    }
    let env = Env::new();
    let work = env.root().join("work");
    env.write(&work.join("notes.txt"), "the launch is on friday");
    env.agent(
        "geo",
        &format!(
            "name = \"geo\"\nmodel = \"anthropic/claude-test\"\nworkdir = \"{}\"\ntools = [\"read_file\"]\n",
            work.display()
        ),
    );
    // The answer after the call stops after its first piece, half a word,
    // until the test has looked at the screen.
    let (answer, rest) = stream_answer("anthropic", &["Fri", "day it is."]).gated_after(3);
    let server = Server::start(vec![
        said_then_called(
            &["Let me ", "look"],
            "read_file",
            &json!({"path": "notes.txt"}),
        ),
        answer,
    ]);
    let term = Term::start(&env, &server.url, "geo");
    term.prompts(1);
    term.typed("when is the launch?", true);
    let screen = term.shows("Fri", 1);
    let lines: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let tool = "  [tool] read_file{\"path\":\"notes.txt\"}";
    let at = lines.iter().position(|l| l.contains("[tool]"));
    assert!(
        at.is_some_and(|i| lines[i] == tool
            && lines[i - 1] == "Let me look"
            && lines[i + 1] == "Fri"),
        "{screen}"
    );
    rest.send(()).unwrap();
    let screen = term.shows("Friday it is.", 1);
    assert!(
        screen.lines().any(|l| l.trim_end() == "Friday it is."),
        "{screen}"
    );
    assert_eq!(screen.matches("[tool]").count(), 1, "{screen}");
    term.prompts(2);
    term.typed("/exit", true);
    term.ended();
}
