//! Taking a lock whose last holder panicked: [`Recover::recover`], the one
//! way every axe crate does it.
//!
//! Why recover rather than fail: what these locks guard is kept whole by
//! each holder (a counter bumped, an entry pushed or taken, a flag set:
//! no step leaves it half-changed), and nothing in axe panics on purpose,
//! so a poisoned lock means one holder failed its own work, not that the
//! data is torn. Refusing the lock from then on would turn that one
//! failure into many: signals held forever, a server's sessions or slots
//! never freed, a run's spent budget unreadable. Each caller still gets
//! its own errors through its own paths.

use std::sync::{LockResult, PoisonError};

/// A lock's result taken whether or not its last holder panicked.
pub trait Recover<G> {
    /// The guard (or whatever the lock gave), poisoned or not.
    fn recover(self) -> G;
}

impl<G> Recover<G> for LockResult<G> {
    fn recover(self) -> G {
        self.unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::Recover;

    #[test]
    fn a_lock_whose_holder_panicked_still_gives_what_it_holds() {
        let shared = Arc::new(Mutex::new(vec![1]));
        let held = Arc::clone(&shared);
        let panicked = std::thread::spawn(move || {
            let mut v = held.lock().recover();
            v.push(2);
            panic!("the holder fails");
        })
        .join();
        assert!(panicked.is_err());
        assert!(shared.is_poisoned());
        assert_eq!(*shared.lock().recover(), [1, 2]);
    }
}
