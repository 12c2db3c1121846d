//! Requests waiting for their responses on a connection where answers come
//! back on their own (a stdio server's output, an SSE stream), in any
//! order: a reader thread hands each response to the request with its id.

use std::collections::HashMap;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use axe_base::lock::Recover;

use serde_json::{Value, json};

use super::error::McpError;
use super::jsonrpc::METHOD_NOT_FOUND;

#[derive(Default)]
pub struct Pending {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    waiting: HashMap<u64, Sender<Value>>,
    /// Why no more answers can come, once none can.
    ended: Option<String>,
}

impl Pending {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().recover()
    }

    /// Registers request `id` before it is sent, so that an answer quicker
    /// than the sender finds its waiter.
    pub fn expect(&self, id: u64) -> Result<Receiver<Value>, McpError> {
        let mut state = self.state();
        if let Some(why) = &state.ended {
            return Err(why.clone().into());
        }
        let (tx, rx) = channel();
        state.waiting.insert(id, tx);
        Ok(rx)
    }

    /// The answer to `id`, or why none came before `deadline`.
    pub fn wait(
        &self,
        id: u64,
        rx: &Receiver<Value>,
        deadline: Instant,
    ) -> Result<Value, McpError> {
        let left = deadline.saturating_duration_since(Instant::now());
        let got = rx.recv_timeout(left);
        self.state().waiting.remove(&id);
        match got {
            Ok(answer) => Ok(answer),
            Err(RecvTimeoutError::Timeout) => Err("no answer before the run's deadline".into()),
            Err(RecvTimeoutError::Disconnected) => Err(self.why_ended().into()),
        }
    }

    /// Why no more answers come.
    pub fn why_ended(&self) -> String {
        (self.state().ended.clone()).unwrap_or_else(|| "the connection ended".into())
    }

    /// Gives up request `id` (it could not be sent).
    pub fn forget(&self, id: u64) {
        self.state().waiting.remove(&id);
    }

    /// No more answers will come, because of `why`: every waiter is told.
    pub fn end(&self, why: String) {
        let mut state = self.state();
        state.ended.get_or_insert(why);
        state.waiting.clear();
    }

    /// One message from the server: a response goes to its waiter; a
    /// request gets `reply`'s answer (`ping` is answered, anything else is
    /// a method this client does not offer); a notification is dropped.
    pub fn handle(&self, message: Value, reply: &dyn Fn(Value)) {
        if let Value::Array(batch) = message {
            return batch.into_iter().for_each(|m| self.handle(m, reply));
        }
        let id = message.get("id").cloned();
        match (message.get("method").and_then(Value::as_str), id) {
            (Some(method), Some(id)) => reply(answer(method, id)),
            (Some(_), None) | (None, None) => {}
            (None, Some(id)) => {
                let waiter = id.as_u64().and_then(|id| self.state().waiting.remove(&id));
                if let Some(tx) = waiter {
                    let _ = tx.send(message);
                }
            }
        }
    }
}

/// Our answer to request `id` the server sent us: `ping` is answered at
/// once, anything else is a method this client does not offer. The same
/// on every transport.
pub fn answer(method: &str, id: Value) -> Value {
    match method {
        "ping" => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
        _ => json!({
            "jsonrpc": "2.0", "id": id,
            "error": {"code": METHOD_NOT_FOUND, "message": format!("method not found: {method}")},
        }),
    }
}
