//! The state document and the changes signals and outcomes make to it.

use super::doc::{DecisionOf, ErrorOf, StateOf, TaskOf, Unknown};
use super::signal_lines::{Kind, Signal};

/// The version this axe writes; a newer file's unknown fields are kept.
pub const VERSION: u64 = 1;

/// An agent's structured state, as a save reads and rewrites it.
pub type State = StateOf<String, Unknown>;
/// One task's progress.
pub type Task = TaskOf<String, Unknown>;
/// A decision and when it was made.
pub type Decision = DecisionOf<String, Unknown>;
/// An error met, and how it was resolved.
pub type ErrorRecord = ErrorOf<String, Unknown>;

/// `item` added to `list` unless it is there already.
fn add_once(list: &mut Vec<String>, item: &str) {
    if !list.iter().any(|x| x == item) {
        list.push(item.to_owned());
    }
}

/// A step as a person would name it: surrounding spaces and case aside.
/// Two steps are the same when their keys are equal.
pub(super) fn step_key(step: &str) -> String {
    step.trim().chars().flat_map(char::to_lowercase).collect()
}

/// How a run on a task ended, as recorded by [`State::record`].
#[derive(Debug, Clone, Default)]
pub struct Outcome<'a> {
    pub success: bool,
    /// What went wrong, for a failure.
    pub error: Option<&'a str>,
    pub files: &'a [String],
    pub branch: Option<&'a str>,
    pub pr: Option<&'a str>,
    /// The run's time (RFC 3339), the checkpoint of a success.
    pub at: String,
}

impl State {
    /// Counts one more iteration on `task` and records how it ended: a
    /// success sets the checkpoint and resolves the task's errors; a
    /// failure records its error, unresolved.
    pub fn record(&mut self, task: &str, phase: Option<&str>, outcome: &Outcome) {
        // Saturates: a file whose counter is already at the top (written by
        // hand: no one runs 2^64 times) still gets its record, in the last
        // iteration, rather than an overflow that would start again at 0.
        self.iteration = self.iteration.saturating_add(1);
        let iteration = self.iteration;
        let entry = self.task(task, phase);
        if let Some(b) = outcome.branch {
            entry.branch = b.to_owned();
        }
        if let Some(p) = outcome.pr {
            entry.pr_number = p.to_owned();
        }
        for f in outcome.files {
            add_once(&mut entry.files_modified, f);
        }
        let phase = entry.phase.clone();
        if outcome.success {
            self.last_checkpoint = Some(outcome.at.clone());
            for e in self
                .errors
                .iter_mut()
                .filter(|e| e.task_id == task && !e.resolved)
            {
                e.resolved = true;
                e.resolution = format!("iteration {iteration} succeeded");
            }
        } else {
            let error = outcome
                .error
                .map_or_else(|| format!("iteration {iteration} failed"), str::to_owned);
            let earlier = self.open_error(task, &phase, &error);
            self.push_error(task, phase, error, earlier);
            compact(&mut self.errors, earlier.into_iter().collect());
        }
    }

    /// A decision on `task`, made in this iteration. One the list holds
    /// already at `earlier` (the same description) is made again: taken
    /// out of its place (left empty, for [`compact`] to drop) and put last
    /// with this iteration, keeping what else it had (a rationale, fields
    /// of a newer version). So a decision is kept once, the list stays in
    /// the order decisions were last made, and pruning, which drops from
    /// the front, drops the one not made for longest, never a repeat's
    /// older copies in place of other decisions.
    fn push_decision(&mut self, task: &str, description: &str, earlier: Option<usize>) {
        let old = earlier.map(|i| std::mem::take(&mut self.decisions[i]));
        self.decisions.push(Decision {
            iteration: self.iteration,
            task_id: task.to_owned(),
            description: description.to_owned(),
            ..old.unwrap_or_default()
        });
    }

    /// An unresolved error on `task` in `phase`, met in this iteration; one
    /// at `earlier` (the same task, phase and text, unresolved) is met
    /// again, as [`State::push_decision`] makes a decision again. An error
    /// resolved since is a new one: it came back.
    fn push_error(&mut self, task: &str, phase: String, error: String, earlier: Option<usize>) {
        let old = earlier.map(|i| std::mem::take(&mut self.errors[i]));
        self.errors.push(ErrorRecord {
            iteration: self.iteration,
            task_id: task.to_owned(),
            phase,
            error,
            ..old.unwrap_or_default()
        });
    }

    /// Where the unresolved error `error` on `task` in `phase` is, if the
    /// list holds it.
    fn open_error(&self, task: &str, phase: &str, error: &str) -> Option<usize> {
        self.errors
            .iter()
            .rposition(|e| !e.resolved && e.task_id == task && e.phase == phase && e.error == error)
    }

    /// The phase an error signal on `task` is met in: the one given, else
    /// the task's.
    fn error_phase(&mut self, task: &str, phase: Option<&str>) -> String {
        phase
            .map(str::to_owned)
            .unwrap_or_else(|| self.task(task, None).phase.clone())
    }

    /// The task `id`, created (with `phase`) if new; a given phase is set.
    pub fn task(&mut self, id: &str, phase: Option<&str>) -> &mut Task {
        let task = self.tasks.entry(id.to_owned()).or_insert_with(|| Task {
            id: id.to_owned(),
            ..Task::default()
        });
        if let Some(phase) = phase {
            task.phase = phase.to_owned();
        }
        task
    }

    /// Records `signals` in order, for task `task` in `phase`: facts and
    /// files kept once, decisions and unresolved errors once, as last made
    /// or met ([`State::push_decision`]), a STEP_DONE completing the
    /// pending step of the same key (which keeps its own wording), a step
    /// pending or completed once. Facts, decisions, errors and steps are
    /// looked up by key, not scanned, so a long output costs no more per
    /// signal than a short one.
    pub fn apply(&mut self, signals: &[Signal], task: &str, phase: Option<&str>) {
        use std::collections::{HashMap, HashSet};
        let mut facts: HashSet<String> = self.key_facts.iter().cloned().collect();
        // The last of each, where an earlier file already holds repeats.
        let mut decided: HashMap<String, usize> = (self.decisions.iter().enumerate())
            .map(|(i, d)| (d.description.clone(), i))
            .collect();
        // Every error signal here is met in one phase (see `error_phase`).
        let error_phase = match phase {
            Some(p) => p.to_owned(),
            None => (self.tasks.get(task)).map_or_else(String::new, |t| t.phase.clone()),
        };
        let mut met: HashMap<String, usize> = (self.errors.iter().enumerate())
            .filter(|(_, e)| !e.resolved && e.task_id == task && e.phase == error_phase)
            .map(|(i, e)| (e.error.clone(), i))
            .collect();
        let (mut decisions_gone, mut errors_gone) = (Vec::new(), Vec::new());
        // Pending steps are counted, not just known: a file written by hand
        // may list one twice, and each completion takes one of them.
        let mut pending: HashMap<String, usize> = HashMap::new();
        let mut completed = HashSet::new();
        if let Some(t) = self.tasks.get(task) {
            for step in &t.pending_steps {
                *pending.entry(step_key(step)).or_default() += 1;
            }
            completed.extend(t.completed_steps.iter().map(|s| step_key(s)));
        }
        for signal in signals {
            let text = signal.text.as_str();
            match signal.kind {
                Kind::KeyFact => {
                    if facts.insert(signal.text.clone()) {
                        self.key_facts.push(signal.text.clone());
                    }
                }
                Kind::Decision => {
                    let earlier = decided.insert(text.to_owned(), self.decisions.len());
                    decisions_gone.extend(earlier);
                    self.push_decision(task, text, earlier);
                }
                Kind::Error => {
                    let phase = self.error_phase(task, phase);
                    let earlier = met.insert(text.to_owned(), self.errors.len());
                    errors_gone.extend(earlier);
                    self.push_error(task, phase, text.to_owned(), earlier);
                }
                Kind::StepPending => {
                    let t = self.task(task, phase);
                    let count = pending.entry(step_key(text)).or_default();
                    if *count == 0 {
                        *count = 1;
                        t.pending_steps.push(text.to_owned());
                    }
                }
                Kind::StepDone => {
                    let t = self.task(task, phase);
                    let key = step_key(text);
                    // Only a step known to be pending is searched for.
                    let i = pending
                        .get_mut(&key)
                        .filter(|count| **count > 0)
                        .and_then(|count| {
                            *count -= 1;
                            t.pending_steps.iter().position(|p| step_key(p) == key)
                        });
                    let done = match i {
                        Some(i) => t.pending_steps.remove(i),
                        None => text.to_owned(),
                    };
                    if completed.insert(key) {
                        t.completed_steps.push(done);
                    }
                }
                Kind::FileModified => add_once(&mut self.task(task, phase).files_modified, text),
            }
        }
        compact(&mut self.decisions, decisions_gone);
        compact(&mut self.errors, errors_gone);
    }
}

/// `list` without the items at `gone`, the places repeats were taken
/// from; one pass, however many.
fn compact<T>(list: &mut Vec<T>, mut gone: Vec<usize>) {
    if gone.is_empty() {
        return;
    }
    gone.sort_unstable();
    let mut i = 0;
    list.retain(|_| {
        let keep = gone.binary_search(&i).is_err();
        i += 1;
        keep
    });
}

#[cfg(test)]
mod tests {
    use super::{Decision, ErrorRecord, State, add_once, step_key};
    use crate::state::signal_lines::{Kind, Signal};

    fn same_step(a: &str, b: &str) -> bool {
        step_key(a) == step_key(b)
    }

    #[test]
    fn steps_match_ignoring_case_and_surrounding_space() {
        assert!(same_step("Write the parser", "  write THE parser "));
        assert!(same_step("Écrire l'analyseur", "écrire L'ANALYSEUR"));
        assert!(same_step("ΣΟΦΙΑ", "σοφια"));
        assert!(!same_step("write the parser", "write the parsers"));
        assert!(!same_step("é", "e"));
    }

    /// The rules of [`State::apply`] for one signal, as plainly as they
    /// can be written: every lookup a scan of the lists.
    fn apply_one(s: &mut State, signal: &Signal, task: &str, phase: Option<&str>) {
        let text = signal.text.as_str();
        match signal.kind {
            Kind::KeyFact => add_once(&mut s.key_facts, text),
            Kind::Decision => {
                let earlier = s.decisions.iter().position(|d| d.description == text);
                let old = earlier.map(|i| s.decisions.remove(i));
                s.decisions.push(Decision {
                    iteration: s.iteration,
                    task_id: task.to_owned(),
                    description: text.to_owned(),
                    ..old.unwrap_or_default()
                });
            }
            Kind::Error => {
                let phase = s.error_phase(task, phase);
                let earlier = (s.errors.iter()).position(|e| {
                    !e.resolved && e.task_id == task && e.phase == phase && e.error == text
                });
                let old = earlier.map(|i| s.errors.remove(i));
                s.errors.push(ErrorRecord {
                    iteration: s.iteration,
                    task_id: task.to_owned(),
                    phase,
                    error: text.to_owned(),
                    ..old.unwrap_or_default()
                });
            }
            Kind::StepDone => {
                let t = s.task(task, phase);
                let done = match t.pending_steps.iter().position(|p| same_step(p, text)) {
                    Some(i) => t.pending_steps.remove(i),
                    None => text.to_owned(),
                };
                if !t.completed_steps.iter().any(|c| same_step(c, &done)) {
                    t.completed_steps.push(done);
                }
            }
            Kind::StepPending => {
                let t = s.task(task, phase);
                if !t.pending_steps.iter().any(|p| same_step(p, text)) {
                    t.pending_steps.push(text.to_owned());
                }
            }
            Kind::FileModified => add_once(&mut s.task(task, phase).files_modified, text),
        }
    }

    /// `apply` with its lookups by key does what the plain scans of
    /// `apply_one` do, signal by signal: checked on random runs of signals
    /// over a small vocabulary, so that steps, facts and files repeat in
    /// different cases, on tasks whose lists already hold duplicates.
    #[test]
    fn apply_matches_the_plain_rules_one_signal_at_a_time() {
        let kinds = [
            Kind::KeyFact,
            Kind::Decision,
            Kind::StepDone,
            Kind::StepPending,
            Kind::FileModified,
            Kind::Error,
        ];
        let words = ["parse", "Parse ", "lex", "LEX", "emit", "É", "é"];
        let mut seed: u64 = 7;
        let mut next = |n: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % n
        };
        for _ in 0..2000 {
            let mut start = State::default();
            for _ in 0..next(4) {
                let t = start.task("main", None);
                t.pending_steps.push(words[next(words.len())].to_owned());
                t.completed_steps.push(words[next(words.len())].to_owned());
            }
            let signals: Vec<Signal> = (0..next(20))
                .map(|_| Signal {
                    kind: kinds[next(kinds.len())],
                    text: words[next(words.len())].to_owned(),
                })
                .collect();
            let mut one_by_one = start.clone();
            for s in &signals {
                apply_one(&mut one_by_one, s, "main", Some("BUILD"));
            }
            let mut all = start;
            all.apply(&signals, "main", Some("BUILD"));
            assert_eq!(all, one_by_one, "{signals:?}");
        }
    }
}
