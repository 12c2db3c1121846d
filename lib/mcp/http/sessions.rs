//! The handshake generation's sessions: what one client has been shown
//! (recall's hashes, so its rewrites cover only what it saw), kept under
//! an id the client sends back. Bounded twice: a token holds at most
//! [`PER_TOKEN`] sessions, its own oldest giving way to its next, so one
//! token (a CI job in a loop, a leaked read-only token) never evicts
//! another's; and the whole table at most [`MAX`], where the oldest
//! session of the token holding the most gives way. A session idle for
//! a day is gone.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axe_base::lock::Recover;
use axe_tools::MemoryTools;

/// At most this many sessions are kept in all.
const MAX: usize = 1024;

/// At most this many sessions are kept for one token. A server without
/// tokens (loopback only) has one holder, everyone: [`MAX`] is its bound.
const PER_TOKEN: usize = 128;

/// A session unused this long is forgotten.
const IDLE: Duration = Duration::from_secs(24 * 3600);

/// One client's session. Its rights are not kept here: they are the
/// tokens file's as it is when each request comes.
pub struct Session {
    /// The agent of the endpoint it began on: it serves no other.
    pub agent: String,
    /// The SHA-256 of the token it began with: no other token may use
    /// it (not one given the same name later), and it ends with it.
    pub token: Option<String>,
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
        let mut table = self.table.lock().recover();
        let now = Instant::now();
        table.retain(|_, (_, used)| now.duration_since(*used) < IDLE);
        let bound = match session.token {
            Some(_) => PER_TOKEN,
            None => MAX,
        };
        let own = |s: &Session| s.token == session.token;
        if table.values().filter(|(s, _)| own(s)).count() >= bound {
            evict_oldest(&mut table, |s| own(s));
        }
        if table.len() >= MAX {
            // The holder of the most gives way: never a token below its
            // share for one above it.
            let mut held: HashMap<Option<&str>, usize> = HashMap::new();
            for (s, _) in table.values() {
                *held.entry(s.token.as_deref()).or_default() += 1;
            }
            if let Some(most) = held
                .into_iter()
                .max_by_key(|(_, n)| *n)
                .map(|(t, _)| t.map(str::to_owned))
            {
                evict_oldest(&mut table, |s| s.token == most);
            }
        }
        table.insert(id.clone(), (Arc::new(session), now));
        Ok(id)
    }

    /// The session `id`, marked used.
    pub fn get(&self, id: &str) -> Option<Arc<Session>> {
        let mut table = self.table.lock().recover();
        let (session, used) = table.get_mut(id)?;
        *used = Instant::now();
        Some(Arc::clone(session))
    }

    /// Ends the session `id`.
    pub fn remove(&self, id: &str) {
        let mut table = self.table.lock().recover();
        table.remove(id);
    }

    /// Ends every session `keep` refuses: those of a token removed from
    /// the file, or that no longer reaches the session's agent.
    pub fn retain(&self, keep: impl Fn(&Session) -> bool) {
        let mut table = self.table.lock().recover();
        table.retain(|_, (s, _)| keep(s));
    }
}

/// Removes the least recently used session that `which` picks.
fn evict_oldest(
    table: &mut HashMap<String, (Arc<Session>, Instant)>,
    which: impl Fn(&Session) -> bool,
) {
    if let Some(oldest) = table
        .iter()
        .filter(|(_, (s, _))| which(s))
        .min_by_key(|(_, (_, used))| *used)
        .map(|(id, _)| id.clone())
    {
        table.remove(&oldest);
    }
}

/// A session id: 128 random bits in hex, visible ASCII as the spec asks,
/// and not to be guessed.
fn new_id() -> std::io::Result<String> {
    Ok(super::tokens::hex(&super::tokens::random::<16>()?))
}
