//! Searches in one process share a refresh of their index.
//!
//! The team server (`axe-mcp --http`) runs many searches of one
//! workspace at once. Each made the index current on its own: it stat'ed
//! the same files, read the same changed day log again and wrote the same
//! delta. Under bench's load (32 clients, some 8 searches in flight) that
//! was 30% of the server's time (perf: `Index::open` and `save`).
//!
//! A search may take the result of a refresh that began after it did:
//! that refresh read the notes later than the search began, so what the
//! search sees is at least as fresh as its own refresh would have been
//! (every write it must see ended before it began). A refresh already
//! under way began too early (a write may have landed after it read
//! that file), so the search waits for it to end and then starts the
//! next one, which every search waiting by then shares. One refresh runs
//! at a time per index in a process. A command runs one search, so it
//! runs its own refresh, as before.
//!
//! What is shared is kept only while a search waits for it: the last
//! one to take it lets it go.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, LazyLock, Mutex};

use axe_base::lock::Recover;

use super::Index;

/// The refreshes of each index (by its directory) in this process.
pub struct Flights<T> {
    all: Mutex<HashMap<PathBuf, Arc<Flight<T>>>>,
}

struct Flight<T> {
    state: Mutex<State<T>>,
    ended: Condvar,
}

struct State<T> {
    /// Refreshes begun, numbered from 1.
    started: u64,
    running: bool,
    /// The last refresh's number and result, while a search waits.
    last: Option<(u64, T)>,
    waiting: usize,
}

impl<T: Clone> Flights<T> {
    pub fn new() -> Flights<T> {
        Flights {
            all: Mutex::new(HashMap::new()),
        }
    }

    /// The result of a refresh of the index at `place` that began after
    /// this call did: `refresh`'s own (`true`), or a copy of one another
    /// thread ran (`false`).
    pub fn shared(&self, place: &Path, refresh: impl FnOnce() -> T) -> (T, bool) {
        let flight = Arc::clone(
            self.all
                .lock()
                .recover()
                .entry(place.to_owned())
                .or_insert_with(|| {
                    Arc::new(Flight {
                        state: Mutex::new(State {
                            started: 0,
                            running: false,
                            last: None,
                            waiting: 0,
                        }),
                        ended: Condvar::new(),
                    })
                }),
        );
        let mut state = flight.state.lock().recover();
        // The first refresh that may serve: the next to begin.
        let need = state.started + 1;
        state.waiting += 1;
        while state.running && state.last.as_ref().is_none_or(|(n, _)| *n < need) {
            state = flight.ended.wait(state).recover();
        }
        state.waiting -= 1;
        if let Some((n, result)) = &state.last
            && *n >= need
        {
            let copy = result.clone();
            if state.waiting == 0 {
                state.last = None;
            }
            return (copy, false);
        }
        state.started += 1;
        state.running = true;
        let number = state.started;
        drop(state);
        let mut running = Running {
            flight: &flight,
            ended: false,
        };
        let result = refresh();
        let mut state = flight.state.lock().recover();
        state.running = false;
        state.last = (state.waiting > 0).then(|| (number, result.clone()));
        running.ended = true;
        flight.ended.notify_all();
        (result, true)
    }

    /// How many wait on the index at `place`.
    #[cfg(test)]
    fn waiting(&self, place: &Path) -> usize {
        let all = self.all.lock().recover();
        all.get(place)
            .map_or(0, |f| f.state.lock().recover().waiting)
    }
}

/// A refresh under way: if it panics, the searches waiting for it are
/// let go (each then runs its own).
struct Running<'a, T> {
    flight: &'a Flight<T>,
    ended: bool,
}

impl<T> Drop for Running<'_, T> {
    fn drop(&mut self) {
        if !self.ended {
            self.flight.state.lock().recover().running = false;
            self.flight.ended.notify_all();
        }
    }
}

static INDEXES: LazyLock<Flights<Result<Index, String>>> = LazyLock::new(Flights::new);

/// [`Flights::shared`] for this process's indexes.
pub fn shared(
    place: &Path,
    refresh: impl FnOnce() -> Result<Index, String>,
) -> (Result<Index, String>, bool) {
    INDEXES.shared(place, refresh)
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::thread;

    use super::*;

    /// Waits until `n` threads wait on `place`.
    fn until_waiting(flights: &Flights<u32>, place: &Path, n: usize) {
        while flights.waiting(place) != n {
            thread::yield_now();
        }
    }

    /// Waits until a refresh of `place` runs.
    fn until_running(flights: &Flights<u32>, place: &Path) {
        while !flights
            .all
            .lock()
            .unwrap()
            .get(place)
            .is_some_and(|f| f.state.lock().unwrap().running)
        {
            thread::yield_now();
        }
    }

    #[test]
    fn searches_that_arrive_during_a_refresh_share_the_next_one() {
        let flights = Arc::new(Flights::<u32>::new());
        let place = Path::new("/index");
        let (go, gate) = mpsc::channel::<()>();
        let runs = Arc::new(Mutex::new(Vec::new()));
        // The first search's refresh holds until it is let go.
        let first = {
            let (flights, runs) = (Arc::clone(&flights), Arc::clone(&runs));
            thread::spawn(move || {
                flights.shared(place, || {
                    gate.recv().unwrap();
                    runs.lock().unwrap().push(1);
                    1
                })
            })
        };
        until_running(&flights, place);
        // Two more arrive while it runs: neither may take its result.
        let later: Vec<_> = (0..2)
            .map(|_| {
                let (flights, runs) = (Arc::clone(&flights), Arc::clone(&runs));
                thread::spawn(move || {
                    flights.shared(place, || {
                        runs.lock().unwrap().push(2);
                        2
                    })
                })
            })
            .collect();
        until_waiting(&flights, place, 2);
        go.send(()).unwrap();
        assert_eq!(first.join().unwrap(), (1, true));
        let mut got: Vec<(u32, bool)> = later.into_iter().map(|t| t.join().unwrap()).collect();
        got.sort();
        // One ran the second refresh, the other took it.
        assert_eq!(got, vec![(2, false), (2, true)]);
        assert_eq!(*runs.lock().unwrap(), vec![1, 2]);
        // Nothing kept once taken.
        assert!(
            flights.all.lock().unwrap()[place]
                .state
                .lock()
                .unwrap()
                .last
                .is_none()
        );
    }

    #[test]
    fn a_search_alone_runs_its_own_and_another_index_is_not_shared() {
        let flights = Flights::<u32>::new();
        assert_eq!(flights.shared(Path::new("/a"), || 1), (1, true));
        assert_eq!(flights.shared(Path::new("/a"), || 2), (2, true));
        assert_eq!(flights.shared(Path::new("/b"), || 3), (3, true));
    }

    #[test]
    fn a_refresh_that_panics_lets_the_waiting_run_their_own() {
        let flights = Arc::new(Flights::<u32>::new());
        let place = Path::new("/index");
        let (go, gate) = mpsc::channel::<()>();
        let first = {
            let flights = Arc::clone(&flights);
            thread::spawn(move || {
                flights.shared(place, || {
                    gate.recv().unwrap();
                    panic!("a refresh fails");
                })
            })
        };
        until_running(&flights, place);
        let waiter = {
            let flights = Arc::clone(&flights);
            thread::spawn(move || flights.shared(place, || 7))
        };
        until_waiting(&flights, place, 1);
        go.send(()).unwrap();
        assert!(first.join().is_err());
        assert_eq!(waiter.join().unwrap(), (7, true));
    }
}
