//! Provider replies in each wire format, for the local server to send.

use serde_json::{Value, json};

use crate::server::{Answer, sse_data, sse_event};

/// The API key the tests hand out; it must never show up in output.
pub const KEY: &str = "sk-test-SECRET-4242";

/// `cmd` with every provider's base URL pointed at `url` and the keys set.
pub fn served_by(mut cmd: assert_cmd::Command, url: &str) -> assert_cmd::Command {
    for p in ["ANTHROPIC", "OPENAI", "OLLAMA", "OPENROUTER", "GOOGLE"] {
        cmd.env(format!("AXE_{p}_BASE_URL"), url);
    }
    for key in ["ANTHROPIC", "OPENAI", "OPENROUTER", "GEMINI"] {
        cmd.env(format!("{key}_API_KEY"), KEY);
    }
    cmd
}

/// The system prompt of a request body as text, however the wire spells
/// it: Anthropic's string or blocks (cached and not), Gemini's
/// `systemInstruction`.
pub fn system_text(body: &Value) -> String {
    let blocks = match &body["system"] {
        Value::String(s) => return s.clone(),
        Value::Array(blocks) => blocks,
        _ => match body["systemInstruction"]["parts"].as_array() {
            Some(parts) => parts,
            None => return String::new(),
        },
    };
    blocks.iter().filter_map(|b| b["text"].as_str()).collect()
}

pub fn google_reply(text: &str) -> Value {
    json!({
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 11, "candidatesTokenCount": 7, "totalTokenCount": 18},
        "modelVersion": "gemini-test"
    })
}

pub fn anthropic_reply(text: &str) -> Value {
    json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn", "usage": {"input_tokens": 11, "output_tokens": 7}
    })
}

pub fn openai_reply(text: &str) -> Value {
    json!({
        "id": "c1", "object": "chat.completion", "model": "gpt-test",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7}
    })
}

pub fn ollama_reply(text: &str) -> Value {
    json!({
        "model": "llama-test", "message": {"role": "assistant", "content": text},
        "done": true, "done_reason": "stop", "prompt_eval_count": 11, "eval_count": 7
    })
}

pub fn reply_for(provider: &str, text: &str) -> Value {
    match provider {
        "anthropic" => anthropic_reply(text),
        "openai" | "openrouter" => openai_reply(text),
        "google" => google_reply(text),
        _ => ollama_reply(text),
    }
}

pub fn stream_answer(provider: &str, pieces: &[&str]) -> Answer {
    match provider {
        "anthropic" => {
            let mut events = vec![sse_event(
                "message_start",
                &json!({"type": "message_start", "message": {"model": "claude-test", "usage": {"input_tokens": 11}}}),
            )];
            events.push(sse_event(
                "content_block_start",
                &json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            ));
            for p in pieces {
                events.push(sse_event(
                    "content_block_delta",
                    &json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": p}}),
                ));
            }
            events.push(": keep-alive\n\n".to_owned());
            events.push(sse_event(
                "content_block_stop",
                &json!({"type": "content_block_stop", "index": 0}),
            ));
            events.push(sse_event(
                "message_delta",
                &json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 7}}),
            ));
            events.push(sse_event("message_stop", &json!({"type": "message_stop"})));
            Answer::sse(&events)
        }
        "openai" | "openrouter" => {
            let mut events: Vec<String> = pieces
                .iter()
                .map(|p| {
                    sse_data(&json!({"model": "gpt-test", "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": null}]}).to_string())
                })
                .collect();
            events.push(sse_data(
                &json!({"model": "gpt-test", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}).to_string(),
            ));
            events.push(sse_data(
                &json!({"model": "gpt-test", "choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": 7}}).to_string(),
            ));
            events.push(sse_data("[DONE]"));
            Answer::sse(&events)
        }
        "google" => {
            // Each event a response of its own; the last has the finish
            // reason and the counts.
            let mut events: Vec<String> = pieces
                .iter()
                .map(|p| {
                    sse_data(&json!({"candidates": [{"content": {"role": "model", "parts": [{"text": p}]}, "index": 0}], "modelVersion": "gemini-test"}).to_string())
                })
                .collect();
            events.push(sse_data(
                &json!({"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": "STOP", "index": 0}],
                        "usageMetadata": {"promptTokenCount": 11, "candidatesTokenCount": 7}, "modelVersion": "gemini-test"}).to_string(),
            ));
            Answer::sse(&events)
        }
        _ => {
            let mut lines: Vec<Value> = pieces
                .iter()
                .map(|p| json!({"model": "llama-test", "message": {"role": "assistant", "content": p}, "done": false}))
                .collect();
            lines.push(json!({"model": "llama-test", "message": {"role": "assistant", "content": ""},
                              "done": true, "done_reason": "stop", "prompt_eval_count": 11, "eval_count": 7}));
            Answer::lines(&lines)
        }
    }
}
