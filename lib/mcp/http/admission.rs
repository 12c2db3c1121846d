//! Who may hold a connection. A connection is *waiting* from its accept
//! until its first head is whole and passes the endpoint's checks (with
//! `--tokens`, a bearer token that reaches the agent; without, a head
//! that names a loopback `Host` and an endpoint, which is all anyone on
//! this machine needs); then it is *admitted*. The two are bounded
//! apart: at most [`MAX_WAITING`] wait, each for its whole head within
//! [`FIRST_HEAD_TIME`], and a connection past that bound cuts off the
//! oldest waiting one of whichever peer address holds the most, so a
//! client that opens connections and sends nothing (or one byte) uses up
//! its own, never the room of the token holders, whose heads arrive in
//! a round trip. At most [`MAX_ADMITTED`] are admitted.

use std::net::{IpAddr, Shutdown, TcpStream};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axe_base::lock::Recover;

/// Connections waiting for their first head to pass, at once.
pub const MAX_WAITING: usize = 128;

/// Admitted connections at once; one more is answered 503 on its head.
pub const MAX_ADMITTED: usize = 512;

/// How long a new connection has for its whole first head, a TLS
/// handshake included: a round trip or two for any client.
pub const FIRST_HEAD_TIME: Duration = Duration::from_secs(5);

#[derive(Default)]
pub struct Admission {
    /// In the order they came.
    waiting: Mutex<Vec<Waiting>>,
    next: AtomicU64,
    admitted: AtomicUsize,
}

struct Waiting {
    id: u64,
    peer: Option<IpAddr>,
    /// The same socket as the connection's thread reads: shut down to
    /// cut it off.
    socket: TcpStream,
}

/// A connection's place; it leaves when dropped.
pub struct Ticket {
    admission: Arc<Admission>,
    id: u64,
    admitted: bool,
    /// When the connection was accepted.
    pub since: Instant,
}

/// What [`Ticket::admit`] found.
pub enum Admitted {
    Yes,
    /// Every admitted place is taken.
    Full,
    /// The connection was cut off meanwhile.
    CutOff,
}

impl Admission {
    /// A place among the waiting for `stream`, just accepted, making room
    /// when there is none; `None` when its socket cannot be shared.
    pub fn enter(self: &Arc<Self>, stream: &TcpStream) -> Option<Ticket> {
        let socket = stream.try_clone().ok()?;
        let peer = stream.peer_addr().ok().map(|a| a.ip());
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let mut waiting = self.waiting.lock().recover();
        if waiting.len() >= MAX_WAITING
            && let Some(at) = victim(&waiting.iter().map(|w| w.peer).collect::<Vec<_>>())
        {
            let cut = waiting.remove(at);
            let _ = cut.socket.shutdown(Shutdown::Both);
        }
        waiting.push(Waiting { id, peer, socket });
        Some(Ticket {
            admission: Arc::clone(self),
            id,
            admitted: false,
            since: Instant::now(),
        })
    }
}

/// Of the waiting connections' peers, oldest first: which to cut off,
/// the oldest of the peer that holds the most.
fn victim(peers: &[Option<IpAddr>]) -> Option<usize> {
    let count = |peer: &Option<IpAddr>| peers.iter().filter(|p| *p == peer).count();
    let most = peers.iter().map(count).max()?;
    peers.iter().position(|p| count(p) == most)
}

impl Ticket {
    pub fn admitted(&self) -> bool {
        self.admitted
    }

    /// Moves the connection from the waiting to the admitted.
    pub fn admit(&mut self) -> Admitted {
        if self.admitted {
            return Admitted::Yes;
        }
        let a = &self.admission;
        let mut waiting = a.waiting.lock().recover();
        let Some(at) = waiting.iter().position(|w| w.id == self.id) else {
            return Admitted::CutOff;
        };
        if a.admitted.fetch_add(1, Ordering::SeqCst) >= MAX_ADMITTED {
            a.admitted.fetch_sub(1, Ordering::SeqCst);
            return Admitted::Full;
        }
        waiting.remove(at);
        self.admitted = true;
        Admitted::Yes
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let a = &self.admission;
        if self.admitted {
            a.admitted.fetch_sub(1, Ordering::SeqCst);
        } else {
            let mut waiting = a.waiting.lock().recover();
            waiting.retain(|w| w.id != self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peer_holding_most_loses_its_oldest_and_no_other_its_own() {
        let ip = |last: u8| Some(IpAddr::from([127, 0, 0, last]));
        let (team, flood) = (ip(1), ip(2));
        assert_eq!(victim(&[team, flood, flood, team, flood]), Some(1));
        assert_eq!(victim(&[team, team, flood]), Some(0));
        // One peer alone (a proxy in front): its oldest.
        assert_eq!(victim(&[flood, flood, flood]), Some(0));
        assert_eq!(victim(&[]), None);
    }
}
