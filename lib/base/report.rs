//! Where the libraries' lines go. Nothing below the commands writes to
//! stderr itself: what a run, a tool or a server has to say goes to the
//! [`Report`] its caller gave, so a caller that wants the lines (a test,
//! a process serving another) gets them, and the commands give
//! [`Stderr`], which writes them as [`crate::stderr::note`] always did.

use std::fmt;
use std::sync::{Arc, Mutex};

use crate::lock::Recover;

/// A sink for one-line notes (warnings, `-v` lines). Shared between the
/// threads of a run's parallel tool calls, so one takes `&self`.
pub trait Report: Send + Sync {
    fn note(&self, line: fmt::Arguments);

    /// Several lines, in order. A sink that writes takes them in one go.
    fn notes(&self, lines: &[String]) {
        for line in lines {
            self.note(format_args!("{line}"));
        }
    }
}

/// Each line to stderr, escaped, whole ([`crate::stderr::note`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Stderr;

impl Report for Stderr {
    fn note(&self, line: fmt::Arguments) {
        crate::stderr::note(line);
    }

    fn notes(&self, lines: &[String]) {
        let mut out = String::new();
        for line in lines {
            crate::stderr::push_line(&mut out, line);
        }
        crate::stderr::write(&out);
    }
}

/// Each line kept, in the order it came.
#[derive(Debug, Default)]
pub struct Collected(Mutex<Vec<String>>);

impl Collected {
    /// The lines so far.
    pub fn lines(&self) -> Vec<String> {
        self.0.lock().recover().clone()
    }
}

impl Report for Collected {
    fn note(&self, line: fmt::Arguments) {
        self.0.lock().recover().push(line.to_string());
    }
}

/// A report shared by many threads whose lines leave together: a thread
/// that notes while another writes leaves its line for that writer, which
/// looks for such lines once more after each write, so under load the
/// lines of many requests leave in one write and no thread waits on
/// another's (a write per line, on the request's thread, was a tenth of
/// a request's time, and woke the log's reader as often). No thread of
/// its own and no wake-up: a lone line is written at once, as before.
/// Lines keep their order. When [`Batched::MOST`] bytes wait, a note
/// waits for the writer, as a write to a full pipe would.
pub struct Batched {
    to: Arc<dyn Report>,
    /// Noted and not yet taken by a writer, and their bytes.
    pending: Mutex<(Vec<String>, usize)>,
    /// Held by the one thread writing.
    writing: Mutex<()>,
}

impl Batched {
    /// What may wait unwritten before a note waits.
    pub const MOST: usize = 1 << 20;

    pub fn new(to: Arc<dyn Report>) -> Batched {
        Batched {
            to,
            pending: Mutex::default(),
            writing: Mutex::new(()),
        }
    }
}

impl Report for Batched {
    fn note(&self, line: fmt::Arguments) {
        let full = {
            let mut pending = self.pending.lock().recover();
            let line = line.to_string();
            pending.1 += line.len();
            pending.0.push(line);
            pending.1 >= Self::MOST
        };
        let mut wait = full;
        loop {
            let writing = match wait {
                true => self.writing.lock().recover(),
                false => match self.writing.try_lock() {
                    Ok(w) => w,
                    Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
                    // The writer looks again once it is done.
                    Err(std::sync::TryLockError::WouldBlock) => return,
                },
            };
            let (lines, _) = std::mem::take(&mut *self.pending.lock().recover());
            if lines.is_empty() {
                return;
            }
            self.to.notes(&lines);
            drop(writing);
            // Noted while this thread wrote, by threads that left their
            // lines to it.
            if self.pending.lock().recover().0.is_empty() {
                return;
            }
            wait = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Condvar;
    use std::time::Duration;

    /// A report that takes its lines slowly, counting its writes.
    #[derive(Default)]
    struct Slow {
        lines: Mutex<Vec<String>>,
        writes: Mutex<usize>,
    }

    impl Report for Slow {
        fn note(&self, line: fmt::Arguments) {
            self.notes(&[line.to_string()]);
        }

        fn notes(&self, lines: &[String]) {
            std::thread::sleep(Duration::from_millis(5));
            *self.writes.lock().recover() += 1;
            self.lines.lock().recover().extend_from_slice(lines);
        }
    }

    #[test]
    fn lines_noted_at_once_leave_together_each_threads_in_order_and_all() {
        let slow = Arc::new(Slow::default());
        let batched = Arc::new(Batched::new(Arc::clone(&slow) as Arc<dyn Report>));
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let batched = Arc::clone(&batched);
                std::thread::spawn(move || {
                    for i in 0..25 {
                        batched.note(format_args!("{t} {i}"));
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let lines = slow.lines.lock().recover().clone();
        assert_eq!(lines.len(), 200);
        for t in 0..8 {
            let own: Vec<&String> = lines
                .iter()
                .filter(|l| l.starts_with(&format!("{t} ")))
                .collect();
            let expected: Vec<String> = (0..25).map(|i| format!("{t} {i}")).collect();
            assert_eq!(own, expected.iter().collect::<Vec<_>>());
        }
        // Eight threads noting while one writes: far fewer writes than
        // lines.
        let writes = *slow.writes.lock().recover();
        assert!(writes < 100, "{writes} writes");
    }

    #[test]
    fn a_lone_line_is_written_before_its_note_returns() {
        let slow = Arc::new(Slow::default());
        let batched = Batched::new(Arc::clone(&slow) as Arc<dyn Report>);
        for i in 0..3 {
            batched.note(format_args!("{i}"));
            assert_eq!(slow.lines.lock().recover().len(), i + 1);
        }
    }

    /// A report whose writes wait until the test opens the gate, and say
    /// when one has begun.
    struct Gate {
        open: Mutex<bool>,
        opened: Condvar,
        entered: Mutex<std::sync::mpsc::Sender<()>>,
        lines: Mutex<Vec<String>>,
    }

    impl Report for Gate {
        fn note(&self, line: fmt::Arguments) {
            self.notes(&[line.to_string()]);
        }

        fn notes(&self, lines: &[String]) {
            let _ = self.entered.lock().recover().send(());
            let mut open = self.open.lock().recover();
            while !*open {
                open = self.opened.wait(open).recover();
            }
            self.lines.lock().recover().extend_from_slice(lines);
        }
    }

    #[test]
    fn a_writer_far_behind_holds_the_noter_back() {
        let (entered, writing) = std::sync::mpsc::channel();
        let gate = Arc::new(Gate {
            open: Mutex::new(false),
            opened: Condvar::new(),
            entered: Mutex::new(entered),
            lines: Mutex::default(),
        });
        let batched = Arc::new(Batched::new(Arc::clone(&gate) as Arc<dyn Report>));
        let note = |line: String| {
            let batched = Arc::clone(&batched);
            let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let flag = Arc::clone(&done);
            let thread = std::thread::spawn(move || {
                batched.note(format_args!("{line}"));
                flag.store(true, std::sync::atomic::Ordering::SeqCst);
            });
            (thread, done)
        };
        let (first, _) = note("first".into());
        writing.recv().unwrap();
        // The writer is stuck on "first": a line left for it returns at
        // once, but not the one that brings what waits to MOST.
        batched.note(format_args!("{}", "x".repeat(Batched::MOST - 1)));
        let (after, done) = note("after".into());
        std::thread::sleep(Duration::from_millis(100));
        let went_past = done.load(std::sync::atomic::Ordering::SeqCst);
        *gate.open.lock().recover() = true;
        gate.opened.notify_all();
        for t in [first, after] {
            t.join().unwrap();
        }
        assert!(!went_past, "a note went past the bound");
        let lines = gate.lines.lock().recover();
        assert_eq!(
            (lines.len(), &lines[0][..], &lines[2][..]),
            (3, "first", "after")
        );
    }
}
