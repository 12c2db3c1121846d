//! Secrets out of a state before it is saved: every string this version
//! knows goes through the policy, whichever command or answer put it
//! there, so no way into the state is missed. Fields written by a newer
//! version are kept as they were read (their meaning is unknown here).

use std::collections::BTreeMap;

use super::data::{State, Task};
use crate::secrets::{Kind, Secrets};

/// Redacts every known string of `state`, task ids included, and says
/// what it took out.
pub fn redact(state: &mut State, secrets: &Secrets) -> Vec<Kind> {
    let mut kinds = Vec::new();
    let mut scrub = |s: &mut String| {
        let (out, found) = secrets.redact_str(s);
        if !found.is_empty() {
            *s = out.into_owned();
            kinds.extend(found);
        }
    };
    state.key_facts.iter_mut().for_each(&mut scrub);
    for d in &mut state.decisions {
        [&mut d.task_id, &mut d.description, &mut d.rationale]
            .into_iter()
            .for_each(&mut scrub);
    }
    for e in &mut state.errors {
        [
            &mut e.task_id,
            &mut e.phase,
            &mut e.error,
            &mut e.resolution,
        ]
        .into_iter()
        .for_each(&mut scrub);
    }
    let tasks = std::mem::take(&mut state.tasks);
    state.tasks = tasks
        .into_iter()
        .map(|(mut id, mut t)| {
            scrub(&mut id);
            scrub_task(&mut t, &mut scrub);
            (id, t)
        })
        .fold(BTreeMap::new(), insert);
    kinds
}

fn scrub_task(t: &mut Task, scrub: &mut impl FnMut(&mut String)) {
    [
        &mut t.id,
        &mut t.phase,
        &mut t.branch,
        &mut t.pr_number,
        &mut t.blocked_reason,
    ]
    .into_iter()
    .for_each(&mut *scrub);
    t.completed_steps
        .iter_mut()
        .chain(&mut t.pending_steps)
        .chain(&mut t.files_modified)
        .for_each(scrub);
}

/// `task` under `id`; two ids that redact to the same text both stay,
/// the second under `<id> (2)`, so no task is lost.
fn insert(mut tasks: BTreeMap<String, Task>, (id, task): (String, Task)) -> BTreeMap<String, Task> {
    let mut key = id.clone();
    let mut n = 2;
    while tasks.contains_key(&key) {
        key = format!("{id} ({n})");
        n += 1;
    }
    tasks.insert(key, task);
    tasks
}
