//! The handshake generation's sessions: what one client has been shown
//! (recall's hashes, so its rewrites cover only what it saw), kept under
//! an id the client sends back. Bounded: the oldest idle session gives way
//! to a new one, and a session idle for a day is gone.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axe_tools::MemoryTools;

/// At most this many sessions are kept.
const MAX: usize = 1024;

/// A session unused this long is forgotten.
const IDLE: Duration = Duration::from_secs(24 * 3600);

/// One client's session.
pub struct Session {
    /// The agent of the endpoint it began on: it serves no other.
    pub agent: String,
    /// The token it began with (its name): no other token may use it.
    pub token: Option<String>,
    pub read_only: bool,
    pub source: MemoryTools,
    pub instructions: String,
    /// The revision `initialize` settled on.
    pub negotiated: Mutex<Option<&'static str>>,
}

#[derive(Default)]
pub struct Sessions {
    table: Mutex<HashMap<String, (Arc<Session>, Instant)>>,
}

impl Sessions {
    /// Keeps `session` under a new id, which it returns.
    pub fn add(&self, session: Session) -> std::io::Result<String> {
        let id = new_id()?;
        let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        table.retain(|_, (_, used)| now.duration_since(*used) < IDLE);
        if table.len() >= MAX
            && let Some(oldest) = table
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(id, _)| id.clone())
        {
            table.remove(&oldest);
        }
        table.insert(id.clone(), (Arc::new(session), now));
        Ok(id)
    }

    /// The session `id`, marked used.
    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        let (session, used) = table.get_mut(id)?;
        *used = Instant::now();
        Some(Arc::clone(session))
    }

    /// Ends the session `id`.
    pub fn remove(&self, id: &str) {
        let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        table.remove(id);
    }
}

/// A session id: 128 random bits in hex, visible ASCII as the spec asks,
/// and not to be guessed.
fn new_id() -> std::io::Result<String> {
    Ok(super::tokens::hex(&super::tokens::random::<16>()?))
}
