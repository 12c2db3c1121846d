//! Merging two versions of a state file by what it means (for
//! `axe-sync`): tasks by id, steps, files and facts as sets, decisions and
//! errors by their content and iteration, fields this version does not
//! know kept. Three-way: what one side removed since the base (a step no
//! longer pending, a decision pruned) stays removed; what either side
//! added is kept; a value only one side changed takes that change, and
//! where both changed it the local one stays.

use std::collections::{BTreeMap, HashSet};
use std::hash::Hash;
use std::path::Path;

use super::data::{Decision, ErrorRecord, State, Task, VERSION, step_key};
use super::doc::Unknown;
use super::store::parse;
use axe_base::error::Result;

/// The state files `ours` and `theirs` merged against `base` (each may be
/// empty: no file), as a save writes it; `path` names the file in errors.
pub fn merge(path: &Path, base: &[u8], ours: &[u8], theirs: &[u8]) -> Result<Vec<u8>> {
    let base: State = parse(path, base)?;
    let ours: State = parse(path, ours)?;
    let theirs: State = parse(path, theirs)?;
    let mut merged = merge_states(&base, &ours, &theirs);
    merged.version = merged.version.max(VERSION);
    let mut json = serde_json::to_vec_pretty(&merged).expect("a state serialises");
    json.push(b'\n');
    Ok(json)
}

fn merge_states(b: &State, o: &State, t: &State) -> State {
    // Runs counted on each side since the base, counted once each.
    let iteration = match o.iteration >= b.iteration && t.iteration >= b.iteration {
        true => b
            .iteration
            .saturating_add(o.iteration - b.iteration)
            .saturating_add(t.iteration - b.iteration),
        false => o.iteration.max(t.iteration),
    };
    let mut tasks = BTreeMap::new();
    for id in o.tasks.keys().chain(t.tasks.keys()) {
        if tasks.contains_key(id) {
            continue;
        }
        let task = match (o.tasks.get(id), t.tasks.get(id)) {
            (Some(o), Some(t)) => merge_task(b.tasks.get(id), o, t),
            (Some(one), None) | (None, Some(one)) => one.clone(),
            (None, None) => continue,
        };
        tasks.insert(id.clone(), task);
    }
    let mut decisions = set3(&b.decisions, &o.decisions, &t.decisions, decision_key);
    decisions.sort_by_key(|d| d.iteration);
    let mut errors = set3(&b.errors, &o.errors, &t.errors, error_key);
    for e in &mut errors {
        // Resolved on either side is resolved.
        let key = error_key(e);
        let resolved = o.errors.iter().chain(&t.errors);
        if let Some(other) = resolved
            .filter(|x| x.resolved)
            .find(|x| error_key(x) == key)
            && !e.resolved
        {
            e.resolved = true;
            e.resolution = other.resolution.clone();
        }
    }
    errors.sort_by_key(|e| e.iteration);
    State {
        version: o.version.max(t.version),
        iteration,
        tasks,
        decisions,
        errors,
        key_facts: set3(&b.key_facts, &o.key_facts, &t.key_facts, Clone::clone),
        last_checkpoint: o.last_checkpoint.clone().max(t.last_checkpoint.clone()),
        unknown: unknown3(&b.unknown, &o.unknown, &t.unknown),
    }
}

fn merge_task(b: Option<&Task>, o: &Task, t: &Task) -> Task {
    let empty = Task::default();
    let b = b.unwrap_or(&empty);
    let completed = set3(
        &b.completed_steps,
        &o.completed_steps,
        &t.completed_steps,
        |s| step_key(s),
    );
    let done: HashSet<String> = completed.iter().map(|s| step_key(s)).collect();
    let mut pending = set3(&b.pending_steps, &o.pending_steps, &t.pending_steps, |s| {
        step_key(s)
    });
    pending.retain(|s| !done.contains(&step_key(s)));
    Task {
        id: o.id.clone(),
        phase: scalar3(&b.phase, &o.phase, &t.phase),
        branch: scalar3(&b.branch, &o.branch, &t.branch),
        pr_number: scalar3(&b.pr_number, &o.pr_number, &t.pr_number),
        completed_steps: completed,
        pending_steps: pending,
        blocked_reason: scalar3(&b.blocked_reason, &o.blocked_reason, &t.blocked_reason),
        files_modified: set3(
            &b.files_modified,
            &o.files_modified,
            &t.files_modified,
            Clone::clone,
        ),
        unknown: unknown3(&b.unknown, &o.unknown, &t.unknown),
    }
}

fn decision_key(d: &Decision) -> (u64, String, String, String) {
    (
        d.iteration,
        d.task_id.clone(),
        d.description.clone(),
        d.rationale.clone(),
    )
}

fn error_key(e: &ErrorRecord) -> (u64, String, String, String) {
    (
        e.iteration,
        e.task_id.clone(),
        e.phase.clone(),
        e.error.clone(),
    )
}

/// Theirs when only they changed it, else ours.
fn scalar3<T: PartialEq + Clone>(b: &T, o: &T, t: &T) -> T {
    match o == b {
        true => t.clone(),
        false => o.clone(),
    }
}

/// A list merged as a set of `key`s: ours in our order, less what they
/// removed since the base, then what they added, each once.
fn set3<T: Clone, K: Eq + Hash>(b: &[T], o: &[T], t: &[T], key: impl Fn(&T) -> K) -> Vec<T> {
    let base: HashSet<K> = b.iter().map(&key).collect();
    let theirs: HashSet<K> = t.iter().map(&key).collect();
    let mut seen = HashSet::new();
    let mut out = Vec::with_capacity(o.len().max(t.len()));
    for x in o {
        let k = key(x);
        if (!base.contains(&k) || theirs.contains(&k)) && !seen.contains(&k) {
            seen.insert(k);
            out.push(x.clone());
        }
    }
    for x in t {
        let k = key(x);
        if !base.contains(&k) && !seen.contains(&k) {
            seen.insert(k);
            out.push(x.clone());
        }
    }
    out
}

/// Unknown fields merged one by one as [`scalar3`] does, their text kept.
fn unknown3(b: &Unknown, o: &Unknown, t: &Unknown) -> Unknown {
    let text = |u: &Unknown, k: &str| u.0.get(k).map(|v| v.get().to_owned());
    let mut out = BTreeMap::new();
    for k in o.0.keys().chain(t.0.keys()) {
        let value = scalar3(&text(b, k), &text(o, k), &text(t, k));
        let from = match value == text(o, k) {
            true => o,
            false => t,
        };
        if let Some(v) = value.and(from.0.get(k)) {
            out.insert(k.clone(), v.clone());
        }
    }
    Unknown(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The merge as JSON, and as the text written.
    fn merged(b: &str, o: &str, t: &str) -> (serde_json::Value, String) {
        let out = merge(
            Path::new("s.json"),
            b.as_bytes(),
            o.as_bytes(),
            t.as_bytes(),
        )
        .unwrap();
        (
            serde_json::from_slice(&out).unwrap(),
            String::from_utf8(out).unwrap(),
        )
    }

    #[test]
    fn tasks_steps_facts_and_decisions_are_united() {
        let b = r#"{"version":1,"iteration":1,"tasks":{"main":{"id":"main","phase":"a","completed_steps":[],"pending_steps":["x","y"],"files_modified":[]}},"decisions":[],"errors":[],"key_facts":["f0"]}"#;
        let o = r#"{"version":1,"iteration":2,"tasks":{"main":{"id":"main","phase":"a","completed_steps":["x"],"pending_steps":["y"],"files_modified":[]}},"decisions":[{"iteration":2,"description":"d-ours"}],"errors":[],"key_facts":["f0","f1"],"newer":{"n":1e5}}"#;
        let t = r#"{"version":1,"iteration":2,"tasks":{"main":{"id":"main","phase":"b","completed_steps":[],"pending_steps":["x","y","z"],"files_modified":[]},"other":{"id":"other","phase":"","completed_steps":[],"pending_steps":[],"files_modified":[]}},"decisions":[{"iteration":2,"description":"d-theirs"}],"errors":[],"key_facts":["f2"]}"#;
        let (m, text) = merged(b, o, t);
        assert_eq!(m["iteration"], 3);
        assert_eq!(m["tasks"]["main"]["phase"], "b");
        assert_eq!(
            m["tasks"]["main"]["completed_steps"],
            serde_json::json!(["x"])
        );
        assert_eq!(
            m["tasks"]["main"]["pending_steps"],
            serde_json::json!(["y", "z"])
        );
        assert!(m["tasks"]["other"].is_object());
        assert_eq!(m["decisions"].as_array().unwrap().len(), 2);
        // f0 was removed by them since the base.
        assert_eq!(m["key_facts"], serde_json::json!(["f1", "f2"]));
        assert!(text.contains("1e5"), "unknown fields kept verbatim");
    }

    #[test]
    fn an_error_resolved_on_either_side_is_resolved() {
        let b = r#"{"errors":[{"iteration":1,"phase":"p","error":"boom","resolved":false}]}"#;
        let o = b;
        let t = r#"{"errors":[{"iteration":1,"phase":"p","error":"boom","resolution":"fixed","resolved":true}]}"#;
        let (m, _) = merged(b, o, t);
        assert_eq!(m["errors"][0]["resolved"], true);
        assert_eq!(m["errors"][0]["resolution"], "fixed");
    }
}
