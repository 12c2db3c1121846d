//! Where the libraries' lines go. Nothing below the commands writes to
//! stderr itself: what a run, a tool or a server has to say goes to the
//! [`Report`] its caller gave, so a caller that wants the lines (a test,
//! a process serving another) gets them, and the commands give
//! [`Stderr`], which writes them as [`crate::stderr::note`] always did.

use std::fmt;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

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

/// A report whose lines a thread of its own hands to another report:
/// a server's request thread leaves its log line and goes on, and under
/// load the lines of many requests leave in one write (a write per line
/// was a tenth of a request's time, and woke the log's reader as often).
/// Lines keep their order. When the writer falls behind by
/// [`Behind::MOST`] bytes, a note waits for it, as a write to a full
/// pipe would.
pub struct Behind {
    shared: Arc<Queue>,
    writer: Option<JoinHandle<()>>,
    /// The report itself, when no thread could be started to write to it.
    direct: Option<Arc<dyn Report>>,
}

#[derive(Default)]
struct Queue {
    state: Mutex<Pending>,
    changed: Condvar,
}

#[derive(Default)]
struct Pending {
    lines: Vec<String>,
    bytes: usize,
    /// Lines handed over and not yet written.
    writing: bool,
    closed: bool,
}

impl Behind {
    /// What may wait unwritten before a note waits.
    pub const MOST: usize = 1 << 20;

    /// Lines for `to`, written by a thread started here; without a thread
    /// (none can be started) each line is written at once.
    pub fn new(to: Arc<dyn Report>) -> Behind {
        let shared = Arc::new(Queue::default());
        let (queue, report) = (Arc::clone(&shared), Arc::clone(&to));
        let writer = std::thread::Builder::new()
            .name("report".into())
            .spawn(move || queue.write_to(&*report))
            .ok();
        let direct = writer.is_none().then_some(to);
        Behind {
            shared,
            writer,
            direct,
        }
    }

    /// Returns once every line noted so far is written.
    pub fn flush(&self) {
        let mut state = self.shared.state.lock().recover();
        while self.writer.is_some() && (!state.lines.is_empty() || state.writing) {
            state = self.shared.changed.wait(state).recover();
        }
    }
}

impl Queue {
    fn write_to(&self, to: &dyn Report) {
        let mut state = self.state.lock().recover();
        loop {
            if state.lines.is_empty() {
                if state.closed {
                    return;
                }
                state = self.changed.wait(state).recover();
                continue;
            }
            let lines = std::mem::take(&mut state.lines);
            state.bytes = 0;
            state.writing = true;
            drop(state);
            self.changed.notify_all();
            to.notes(&lines);
            state = self.state.lock().recover();
            state.writing = false;
            self.changed.notify_all();
        }
    }
}

impl Report for Behind {
    fn note(&self, line: fmt::Arguments) {
        if let Some(to) = &self.direct {
            return to.note(line);
        }
        let line = line.to_string();
        let mut state = self.shared.state.lock().recover();
        while state.bytes >= Self::MOST && !state.closed {
            state = self.shared.changed.wait(state).recover();
        }
        // The writer sleeps only with nothing to write and nothing in
        // hand: otherwise it looks again before it sleeps, and a wake-up
        // would be a system call for nobody.
        let asleep = state.lines.is_empty() && !state.writing;
        state.bytes += line.len();
        state.lines.push(line);
        drop(state);
        if asleep {
            self.shared.changed.notify_all();
        }
    }
}

impl Drop for Behind {
    /// Every line is written before the report is gone.
    fn drop(&mut self) {
        self.shared.state.lock().recover().closed = true;
        self.shared.changed.notify_all();
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A report that takes its lines slowly, counting how many writes.
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
            std::thread::sleep(Duration::from_millis(20));
            *self.writes.lock().recover() += 1;
            self.lines.lock().recover().extend_from_slice(lines);
        }
    }

    #[test]
    fn lines_behind_keep_their_order_leave_together_and_are_all_written() {
        let slow = Arc::new(Slow::default());
        let behind = Behind::new(Arc::clone(&slow) as Arc<dyn Report>);
        for i in 0..200 {
            behind.note(format_args!("line {i}"));
        }
        behind.flush();
        let expected: Vec<String> = (0..200).map(|i| format!("line {i}")).collect();
        assert_eq!(*slow.lines.lock().recover(), expected);
        // 200 lines noted faster than one write: far fewer writes.
        let writes = *slow.writes.lock().recover();
        assert!(writes < 20, "{writes} writes");
        behind.note(format_args!("last"));
        drop(behind);
        assert_eq!(
            slow.lines.lock().recover().last().map(String::as_str),
            Some("last")
        );
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
        let behind = Arc::new(Behind::new(Arc::clone(&gate) as Arc<dyn Report>));
        behind.note(format_args!("first"));
        writing.recv().unwrap();
        // The writer is stuck on "first"; a whole MOST waits behind it.
        behind.note(format_args!("{}", "x".repeat(Behind::MOST)));
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let late = {
            let (behind, done) = (Arc::clone(&behind), Arc::clone(&done));
            std::thread::spawn(move || {
                behind.note(format_args!("after"));
                done.store(true, std::sync::atomic::Ordering::SeqCst);
            })
        };
        std::thread::sleep(Duration::from_millis(100));
        let went_past = done.load(std::sync::atomic::Ordering::SeqCst);
        *gate.open.lock().recover() = true;
        gate.opened.notify_all();
        assert!(!went_past, "a note went past the bound");
        late.join().unwrap();
        behind.flush();
        let lines = gate.lines.lock().recover();
        assert_eq!(
            (lines.len(), &lines[0][..], &lines[2][..]),
            (3, "first", "after")
        );
    }
}
