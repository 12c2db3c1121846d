//! The run's bound on work done at once: the tool calls of a reply, and
//! the MCP servers of an agent starting. One pool serves the whole tree
//! of agents, so a `call_agent` nested in another does not multiply it.
//!
//! The pool counts threads, not queued work: whoever has a batch runs it
//! on its own thread and on as many more as the pool has to spare at that
//! moment, and never waits for one. So a call whose own calls find the
//! pool empty (their callers hold it all) runs them itself, one after the
//! other: nothing ever waits on a thread its own ancestor holds. Under a
//! bound of N, at most N threads run work at once, the run's own among
//! them.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

/// Threads at once when `[sub_agents_config] max_parallel` is 0. Tool
/// calls wait on a model, the network, a command or a server far more
/// than they use a core, so more than a core count pays; yet each may
/// hold a sub-agent's whole conversation, with its connections and MCP
/// server processes, and 8 of those, even five deep, stay far below a
/// user's default limits on processes and open files.
pub const DEFAULT_MAX_PARALLEL: usize = 8;

/// The threads a run may add to its own.
pub struct Pool {
    spare: AtomicUsize,
}

/// A thread taken from the pool, given back when dropped.
struct Taken<'a>(&'a Pool);

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        self.0.spare.fetch_add(1, Ordering::AcqRel);
    }
}

impl Pool {
    /// A pool letting `max` threads run work at once (0: the default).
    pub fn new(max: usize) -> Pool {
        let max = match max {
            0 => DEFAULT_MAX_PARALLEL,
            n => n,
        };
        Pool {
            spare: AtomicUsize::new(max - 1),
        }
    }

    /// One more thread, if the pool has one to spare now.
    fn take(&self) -> Option<Taken<'_>> {
        self.spare
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .ok()
            .map(|_| Taken(self))
    }

    /// `work` on each of `items`, their results in the items' order: on
    /// this thread, and on the threads the pool spares. An item whose
    /// work panics gets `crashed`'s result instead.
    pub fn each<T: Sync, R: Send>(
        &self,
        items: &[T],
        work: impl Fn(&T) -> R + Sync,
        crashed: impl Fn(&T) -> R + Sync,
    ) -> Vec<R> {
        let next = AtomicUsize::new(0);
        // Takes the next item no thread has taken, until none is left.
        let drain = || {
            let mut done = Vec::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else {
                    return done;
                };
                let result = catch_unwind(AssertUnwindSafe(|| work(item)));
                done.push((i, result.unwrap_or_else(|_| crashed(item))));
            }
        };
        let mut results: Vec<Option<R>> = items.iter().map(|_| None).collect();
        thread::scope(|scope| {
            let mut helpers = Vec::new();
            // Never more helpers than items left for them.
            for _ in 1..items.len() {
                let Some(taken) = self.take() else { break };
                let drain = &drain;
                let spawned = thread::Builder::new().spawn_scoped(scope, move || {
                    let _taken = taken;
                    drain()
                });
                // No thread to be had: this one does the rest.
                let Ok(helper) = spawned else { break };
                helpers.push(helper);
            }
            let mine = drain();
            let theirs = helpers
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_default());
            for (i, result) in mine.into_iter().chain(theirs) {
                results[i] = Some(result);
            }
        });
        results
            .into_iter()
            .zip(items)
            .map(|(result, item)| result.unwrap_or_else(|| crashed(item)))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn results_keep_order_and_a_panic_is_one_items() {
        let pool = Pool::new(4);
        let items: Vec<u32> = (0..100).collect();
        let out = pool.each(
            &items,
            |&i| {
                assert!(i != 7, "seven");
                i * 2
            },
            |_| u32::MAX,
        );
        let want: Vec<u32> = (0..100)
            .map(|i| if i == 7 { u32::MAX } else { i * 2 })
            .collect();
        assert_eq!(out, want);
        assert_eq!(
            pool.spare.load(Ordering::Acquire),
            3,
            "every thread given back"
        );
    }

    #[test]
    fn nested_batches_stay_within_the_bound_and_finish() {
        let pool = Pool::new(3);
        let now = Mutex::new((0usize, 0usize));
        let items: Vec<u32> = (0..10).collect();
        let leaf = |_: &u32| {
            let mut n = now.lock().unwrap();
            n.0 += 1;
            n.1 = n.1.max(n.0);
            drop(n);
            thread::sleep(std::time::Duration::from_millis(1));
            now.lock().unwrap().0 -= 1;
        };
        pool.each(&items, |_| pool.each(&items, leaf, |_| ()), |_| Vec::new());
        let peak = now.lock().unwrap().1;
        assert!((1..=3).contains(&peak), "{peak}");
    }
}
