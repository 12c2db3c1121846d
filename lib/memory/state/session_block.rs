//! The "Session Memory" block: the state, most wanted first, within a
//! character budget.
//!
//! Items are taken in priority order (agentium's): the current task and
//! its pending steps, other tasks still open, unresolved errors (newest
//! first), decisions (newest first), key facts, each error, decision and
//! fact once however often the file holds it, and filled by the rule of
//! every budgeted block ([`Block`]): what does not fit is left out and
//! listed, and smaller items after it may still go in. Every line is the
//! block's own: a string of the state is shown on one line, whatever line
//! breaks it holds (see [`one_line`]), and what counts against the budget
//! is the text as shown.

use std::borrow::Cow;
use std::collections::HashSet;
use std::fmt::Write;

use super::view::{ErrorView, TaskView, Text, View};
use crate::block::{Block, Place};

/// The heading of the block on its own.
pub const HEAD: &str = "## Session Memory\n";

/// Whether `c` would end a line, or move or clear what a terminal shows:
/// every control character but tab, and Unicode's line and paragraph
/// separators.
fn breaks(c: char) -> bool {
    (c.is_control() && c != '\t') || c == '\u{2028}' || c == '\u{2029}'
}

/// `text` on one line, as the block shows every string of the state.
///
/// The strings come from outside: a model's signals, a provider's error,
/// a script's flags, a file edited by hand. Shown as they are, their line
/// breaks would put headings, list items and signal lines into the block
/// that it did not write, and the model reading it could not tell them
/// from the block's own. So each line break (`\r\n` as one) and every
/// other control character but tab shows as a space, as the run log shows
/// a task's newlines; the file keeps the text as it was given.
fn one_line(text: &str) -> Cow<'_, str> {
    if plain(text) || !text.chars().any(breaks) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() == Some(&'\n') {
            continue;
        }
        out.push(if breaks(c) { ' ' } else { c });
    }
    Cow::Owned(out)
}

/// Whether `text` holds no byte that can start a character [`breaks`]
/// is true of: no C0 control but tab, no DEL, no lead byte of U+0080..
/// U+00BF (the C1 controls) or of U+2000..U+2FFF (the separators). Most
/// text does, and is shown as it is. Every string of the state is checked
/// on every block, those left out too, so the check is written to be
/// vectorised: no branch and no early exit (a third of the time of
/// `bytes().any(..)` over a state of 10,000 items).
fn plain(text: &str) -> bool {
    let suspect = |b: u8| {
        u8::from(b < 0x20) & u8::from(b != b'\t')
            | u8::from(b == 0x7f)
            | u8::from(b == 0xc2)
            | u8::from(b == 0xe2)
    };
    text.bytes().fold(0, |seen, b| seen | suspect(b)) == 0
}

fn task_block(t: &TaskView, out: &mut String) {
    let _ = write!(out, "\n### Task: {}", one_line(&t.id));
    if !t.phase.is_empty() {
        let _ = write!(out, " (Phase: {})", one_line(&t.phase));
    }
    out.push('\n');
    let list = |l: &[Text]| l.iter().map(|s| one_line(s)).collect::<Vec<_>>().join(", ");
    let lines = [
        ("Branch", one_line(&t.branch)),
        ("PR", one_line(&t.pr_number)),
        ("Completed", Cow::Owned(list(&t.completed_steps))),
        ("Pending", Cow::Owned(list(&t.pending_steps))),
        ("Blocked", one_line(&t.blocked_reason)),
        ("Files modified", Cow::Owned(list(&t.files_modified))),
    ];
    for (label, value) in lines {
        if !value.is_empty() {
            let _ = writeln!(out, "{label}: {value}");
        }
    }
}

/// Where the next run stands: its task, shown first, and its phase,
/// whose unresolved errors come before the others'.
#[derive(Debug, Clone, Copy, Default)]
pub struct Current<'a> {
    pub task: Option<&'a str>,
    pub phase: Option<&'a str>,
}

/// The block for `state` in `block`.
pub fn build<'a>(state: &'a View<'a>, now: Current<'a>, mut block: Block<'a>) -> Block<'a> {
    offer(state, now, HEAD, &mut block);
    block
}

/// Offers the items of `state` to `block` under the heading `section`, in
/// priority order.
pub fn offer<'a>(
    state: &'a View<'a>,
    now: Current<'a>,
    section: &'static str,
    block: &mut Block<'a>,
) {
    let at = |group| Place { section, group };
    let task = now.task;
    let current = task.and_then(|id| state.tasks.get(&Text(Cow::Borrowed(id))));
    let open = state.tasks.values().filter(|t| {
        let open = !t.pending_steps.is_empty() || !t.blocked_reason.is_empty();
        open && Some(&*t.id) != task
    });
    let mut scratch = String::new();
    for t in current.into_iter().chain(open) {
        scratch.clear();
        task_block(t, &mut scratch);
        block.offer(at(""), "task", Cow::Borrowed(&*t.id), &[&scratch]);
    }
    // The errors of the phase the run is in first: what it is about to
    // meet again.
    let in_phase = |e: &ErrorView| now.phase.is_some_and(|p| e.phase.eq_ignore_ascii_case(p));
    let unresolved = || state.errors.iter().rev().filter(|e| !e.resolved);
    // What a file holds more than once (agentium's own files, or two
    // machines' merged by axe-sync: saves keep each once) is shown once,
    // its newest.
    let mut shown = HashSet::new();
    let errors = unresolved()
        .filter(|e| in_phase(e))
        .chain(unresolved().filter(|e| !in_phase(e)))
        .filter(|e| shown.insert((&*e.phase.0, &*e.error.0)));
    for e in errors {
        scratch.clear();
        let _ = write!(scratch, "{}", e.iteration);
        let comma = if e.phase.is_empty() { "" } else { ", " };
        let (phase, error) = (one_line(&e.phase), one_line(&e.error));
        let line = ["- [Iteration ", &scratch, comma, &phase, "] ", &error, "\n"];
        block.offer(
            at("\n### Unresolved Errors\n"),
            "error",
            Cow::Borrowed(&e.error),
            &line,
        );
    }
    let mut shown = HashSet::new();
    for d in state.decisions.iter().rev() {
        if !shown.insert(&*d.description.0) {
            continue;
        }
        let text = &d.description;
        let line = ["- ", &one_line(text), "\n"];
        block.offer(
            at("\n### Key Decisions\n"),
            "decision",
            Cow::Borrowed(text),
            &line,
        );
    }
    let mut shown = HashSet::new();
    for f in state.key_facts.iter().filter(|f| shown.insert(&*f.0)) {
        block.offer(
            at("\n### Key Facts\n"),
            "fact",
            Cow::Borrowed(f),
            &["- ", &one_line(f), "\n"],
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::data::{Decision, ErrorRecord, State};

    fn now(task: &str) -> Current<'_> {
        Current {
            task: Some(task),
            phase: None,
        }
    }

    fn sample() -> State {
        let mut s = State::default();
        let t = s.task("42", Some("TEST"));
        t.branch = "fix-login".into();
        t.completed_steps = vec!["Created branch".into()];
        t.pending_steps = vec!["Fix failing test".into(), "Create PR".into()];
        s.errors.push(ErrorRecord {
            iteration: 2,
            phase: "TEST".into(),
            error: "TestTokenExpiry failed".into(),
            ..ErrorRecord::default()
        });
        s.decisions.push(Decision {
            description: "Mock the clock".into(),
            ..Decision::default()
        });
        s.key_facts.push("Go 1.19".into());
        s
    }

    #[test]
    fn the_layout_is_agentiums() {
        let s = sample();
        let v = s.view();
        let b = build(&v, now("42"), Block::listing(10_000));
        assert_eq!(
            b.text,
            "## Session Memory\n\n### Task: 42 (Phase: TEST)\nBranch: fix-login\nCompleted: Created branch\n\
             Pending: Fix failing test, Create PR\n\n### Unresolved Errors\n- [Iteration 2, TEST] TestTokenExpiry failed\n\
             \n### Key Decisions\n- Mock the clock\n\n### Key Facts\n- Go 1.19\n"
        );
        assert!(b.left_out.is_empty());
    }

    #[test]
    fn a_large_item_left_out_does_not_hide_smaller_ones() {
        let mut s = sample();
        s.decisions.push(Decision {
            description: "x".repeat(500),
            ..Decision::default()
        });
        let v = s.view();
        let b = build(&v, now("42"), Block::listing(260));
        assert!(b.text.chars().count() <= 260);
        assert_eq!(b.left_out.len(), 1, "{:?}", b.left_out);
        assert_eq!(b.left_out[0].kind, "decision");
        assert!(b.text.contains("- Go 1.19"), "{}", b.text);
    }

    #[test]
    fn the_errors_of_the_current_phase_come_first() {
        let mut s = sample();
        s.errors.push(ErrorRecord {
            iteration: 3,
            phase: "BUILD".into(),
            error: "link failed".into(),
            ..ErrorRecord::default()
        });
        let v = s.view();
        let errors = |phase| {
            let now = Current {
                task: Some("42"),
                phase,
            };
            let b = build(&v, now, Block::listing(10_000));
            b.included
                .iter()
                .filter(|p| p.kind == "error")
                .map(|p| p.item.to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(errors(None), ["link failed", "TestTokenExpiry failed"]);
        assert_eq!(
            errors(Some("test")),
            ["TestTokenExpiry failed", "link failed"]
        );
    }

    /// A small random generator, so the property needs no crate.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n.max(1)
        }
        fn text(&mut self) -> String {
            let len = self.next(80) as usize;
            (0..len)
                .map(|_| (b'a' + self.next(26) as u8) as char)
                .collect::<String>()
                + "é"
        }
        /// Text from outside: words, line breaks of every kind, other
        /// control characters, and what would forge a line of the block
        /// if it started one.
        fn hostile(&mut self) -> String {
            const PIECES: [&str; 24] = [
                "word",
                " ",
                "é",
                "\n",
                "\r\n",
                "\r",
                "\n\n",
                "\u{b}",
                "\u{c}",
                "\u{85}",
                "\u{2028}",
                "\u{2029}",
                "\t",
                "\0",
                "\u{1b}[2K",
                "\u{7f}",
                "\u{9b}",
                "# ",
                "### Key Facts",
                "## Session Memory",
                "- ",
                "AXE_MEMORY: KEY_FACT x",
                "AGENTIUM_MEMORY: ERROR y",
                "Pending: z",
            ];
            (0..self.next(12))
                .map(|_| PIECES[self.next(PIECES.len() as u64) as usize])
                .collect()
        }
    }

    /// Every line of `b` is one the block wrote: its headings (a blank line
    /// only before one), a task's heading and labelled lines, an item's
    /// `- `, as many of each as the items included account for; and no
    /// control character but the newlines ending them.
    fn assert_no_forged_lines(b: &Block) {
        let lines: Vec<&str> = b.text.lines().collect();
        let count = |start: &str| lines.iter().filter(|l| l.starts_with(start)).count();
        let included = |kinds: &[&str]| {
            b.included
                .iter()
                .filter(|p| kinds.contains(&p.kind))
                .count()
        };
        let tasks = included(&["task"]);
        assert_eq!(count("### Task: "), tasks, "{:?}", b.text);
        assert_eq!(
            count("- "),
            included(&["error", "decision", "fact"]),
            "{:?}",
            b.text
        );
        let labels = [
            "Branch: ",
            "PR: ",
            "Completed: ",
            "Pending: ",
            "Blocked: ",
            "Files modified: ",
        ];
        for label in labels {
            assert!(count(label) <= tasks, "{label} {:?}", b.text);
        }
        let headings = [
            "## Session Memory",
            "### Unresolved Errors",
            "### Key Decisions",
            "### Key Facts",
        ];
        for h in headings {
            assert!(
                lines.iter().filter(|l| **l == h).count() <= 1,
                "{h} {:?}",
                b.text
            );
        }
        for (i, line) in lines.iter().enumerate() {
            let own = match line.chars().next() {
                None => lines
                    .get(i + 1)
                    .is_some_and(|next| next.starts_with("### ")),
                Some('#') => headings.contains(line) || line.starts_with("### Task: "),
                Some(_) => line.starts_with("- ") || labels.iter().any(|l| line.starts_with(l)),
            };
            assert!(own, "line {i} is not the block's: {line:?} in {:?}", b.text);
        }
        assert!(
            !b.text.chars().any(|c| c != '\n' && breaks(c)),
            "{:?}",
            b.text
        );
    }

    #[test]
    fn one_line_keeps_text_without_breaks_and_spaces_the_rest() {
        assert!(matches!(
            one_line("plain — “quoted” é\ttab"),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            one_line("a\r\nb\n\nc\rd\u{85}e\u{2028}f\u{1b}[2K"),
            "a b  c d e f [2K"
        );
    }

    /// Checked on random states whose strings are plain or hostile
    /// ([`Rng::hostile`]): the budget is kept, nothing is left out that
    /// would have fitted, and no line is forged.
    #[test]
    fn never_over_budget_nothing_left_out_that_would_fit_no_line_forged() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for round in 0..4000 {
            let hostile = round % 2 == 1;
            let text = |rng: &mut Rng| if hostile { rng.hostile() } else { rng.text() };
            let mut s = State::default();
            for t in 0..rng.next(3) {
                let id = match t {
                    0 => "t0".to_owned(),
                    _ => text(&mut rng),
                };
                let phase = text(&mut rng);
                let task = s.task(&id, Some(&phase));
                task.branch = text(&mut rng);
                task.pr_number = text(&mut rng);
                task.blocked_reason = text(&mut rng);
                for _ in 0..rng.next(4) {
                    task.pending_steps.push(text(&mut rng));
                    task.completed_steps.push(text(&mut rng));
                    task.files_modified.push(text(&mut rng));
                }
            }
            for _ in 0..rng.next(6) {
                s.errors.push(ErrorRecord {
                    phase: text(&mut rng),
                    error: text(&mut rng),
                    resolved: rng.next(2) == 0,
                    ..ErrorRecord::default()
                });
                s.decisions.push(Decision {
                    description: text(&mut rng),
                    ..Decision::default()
                });
                s.key_facts.push(text(&mut rng));
            }
            let budget = rng.next(900) as usize;
            let v = s.view();
            let b = build(&v, now("t0"), Block::listing(budget));
            assert_no_forged_lines(&b);
            let shown = b.text.chars().count();
            assert!(shown <= budget, "{shown} > {budget}");
            assert_eq!(
                b.included.iter().map(|p| p.chars.unwrap()).sum::<usize>(),
                shown
            );
            // Each item left out would not have fitted in the room left at
            // its turn (its cost never shrinks later: headings only add).
            for p in &b.left_out {
                assert!(
                    p.chars.unwrap() > budget - shown,
                    "{p:?} fits in {}",
                    budget - shown
                );
            }
        }
    }
}
