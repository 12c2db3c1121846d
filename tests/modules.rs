//! The library's module graph has no cycles: every module reads top-down,
//! and none imports from a module that imports it (a child using its
//! parent's items while the parent uses the child, say). Test code inside
//! modules may reach anything and is left out.
//!
//! A module's edges are the paths it names (in `use` items and inline)
//! that start with `crate::`, `super::`, `self::` or one of its child
//! modules (`entry::HEADER`); each path is followed down the module tree
//! as far as it names modules, so `super::entry::HEADER` is an edge to
//! the sibling `entry`, and `super::Matches` one to the parent. A `mod`
//! declaration alone is no edge: declaring a child is not using it, and
//! counting it would make every child's `super::` a cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

type Module = Vec<String>;

/// Every module of `lib/` and its source, test code removed.
fn modules() -> BTreeMap<Module, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("lib");
    let mut found = BTreeMap::new();
    collect(&root, &root, &mut found);
    found
}

fn collect(root: &Path, dir: &Path, found: &mut BTreeMap<Module, String>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(root, &path, found);
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let rel = path.strip_prefix(root).unwrap().with_extension("");
        let mut module: Module = vec!["crate".into()];
        module.extend(rel.iter().map(|s| s.to_string_lossy().into_owned()));
        if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
            module.pop();
        }
        if module.last().is_some_and(|m| m == "tests") {
            continue;
        }
        found.insert(module, without_tests(&fs::read_to_string(&path).unwrap()));
    }
}

/// The source without comments and without its `#[cfg(test)]` module.
fn without_tests(source: &str) -> String {
    let mut out = String::new();
    let mut lines = source.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]" {
            match lines.peek().map(|l| l.trim()) {
                Some("mod tests;") => {
                    lines.next();
                    continue;
                }
                // The test module runs to the end of the file.
                _ => break,
            }
        }
        let code = match line.find("//") {
            Some(i) if i == 0 || line[..i].ends_with(char::is_whitespace) => &line[..i],
            _ => line,
        };
        out.push_str(code);
        out.push('\n');
    }
    out
}

/// `a::{b, c::{d, e as f}}` as `a::b`, `a::c::d`, `a::c::e`.
fn expand(tree: &str) -> Vec<String> {
    // Without white space and renames (`as f`), which name no module.
    let mut words = tree.split_whitespace();
    let mut tree = String::new();
    while let Some(word) = words.next() {
        match word {
            "as" => {
                let alias = words.next().unwrap_or_default();
                tree.push_str(alias.trim_start_matches(|c: char| c.is_alphanumeric() || c == '_'));
            }
            _ => tree.push_str(word),
        }
    }
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap()];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .filter(|p| !p.is_empty())
        .flat_map(expand)
        .map(|p| format!("{prefix}{p}"))
        .collect()
}

/// The module that `path`, named inside `from`, leads to, if it is one of
/// ours.
fn resolve(path: &str, from: &Module, known: &BTreeSet<Module>) -> Option<Module> {
    let mut segments = path.split("::").filter(|s| !s.is_empty()).peekable();
    let mut at: Module = match *segments.peek()? {
        "crate" => {
            segments.next();
            vec!["crate".into()]
        }
        "self" | "super" => from.clone(),
        child => {
            let mut c = from.clone();
            c.push(child.to_owned());
            if !known.contains(&c) {
                return None;
            }
            from.clone()
        }
    };
    while segments.peek() == Some(&"super") || segments.peek() == Some(&"self") {
        if segments.next() == Some("super") {
            at.pop();
        }
    }
    for segment in segments {
        let mut next = at.clone();
        next.push(segment.to_owned());
        if !known.contains(&next) {
            break;
        }
        at = next;
    }
    Some(at)
}

/// Each line of `source` with the offset it starts at.
fn line_starts(source: &str) -> impl Iterator<Item = (usize, &str)> {
    source.split_inclusive('\n').scan(0, |at, line| {
        let start = *at;
        *at += line.len();
        Some((start, line))
    })
}

/// The edges of the module graph.
fn graph() -> BTreeMap<Module, BTreeSet<Module>> {
    let modules = modules();
    let known: BTreeSet<Module> = modules.keys().cloned().collect();
    let mut graph = BTreeMap::new();
    for (module, source) in &modules {
        let mut paths = Vec::new();
        // `use` items, braces and all: lines that start one.
        for (at, line) in line_starts(source) {
            let item = line.trim_start();
            let item = item
                .strip_prefix("pub ")
                .or_else(|| item.strip_prefix("pub(crate) "))
                .or_else(|| item.strip_prefix("pub(super) "))
                .unwrap_or(item);
            if let Some(tree) = item.strip_prefix("use ") {
                let offset = at + line.len() - tree.len();
                if let Some(end) = source[offset..].find(';') {
                    paths.extend(expand(&source[offset..offset + end]));
                }
            }
        }
        // Inline paths: `crate::x::f()`, `super::y`, `child::z`.
        let bytes = source.as_bytes();
        for (i, _) in source.match_indices("::") {
            let start = source[..i]
                .rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .map_or(0, |s| s + 1);
            let end = source[i..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .map_or(source.len(), |e| i + e);
            // `super::{a, b}` is a `use` item's, read above.
            if start < i && !bytes[start].is_ascii_uppercase() && !source[..end].ends_with("::") {
                paths.push(source[start..end].to_owned());
            }
        }
        let edges: BTreeSet<Module> = paths
            .iter()
            .filter_map(|p| resolve(p, module, &known))
            .filter(|target| target != module)
            .collect();
        graph.insert(module.clone(), edges);
    }
    graph
}

/// A cycle through `node`, if the search from it finds one.
fn cycle_from(
    node: &Module,
    graph: &BTreeMap<Module, BTreeSet<Module>>,
    stack: &mut Vec<Module>,
    done: &mut BTreeSet<Module>,
) -> Option<Vec<Module>> {
    if let Some(i) = stack.iter().position(|m| m == node) {
        let mut cycle = stack[i..].to_vec();
        cycle.push(node.clone());
        return Some(cycle);
    }
    if done.contains(node) {
        return None;
    }
    stack.push(node.clone());
    for next in graph.get(node).into_iter().flatten() {
        if let Some(cycle) = cycle_from(next, graph, stack, done) {
            return Some(cycle);
        }
    }
    stack.pop();
    done.insert(node.clone());
    None
}

#[test]
fn the_module_graph_has_no_cycles() {
    let graph = graph();
    assert!(graph.len() > 40, "found only {} modules", graph.len());
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        if let Some(cycle) = cycle_from(node, &graph, &mut Vec::new(), &mut done) {
            let shown: Vec<String> = cycle.iter().map(|m| m.join("::")).collect();
            panic!("import cycle: {}", shown.join(" -> "));
        }
    }
}

#[test]
fn the_checker_sees_edges_and_cycles() {
    let graph = graph();
    let edge = |from: &str, to: &str| {
        let m = |s: &str| -> Module { s.split("::").map(str::to_owned).collect() };
        graph[&m(from)].contains(&m(to))
    };
    // A use of a sibling, an inline crate path, a re-export of a child.
    assert!(edge("crate::memory::log", "crate::memory::log::entry"));
    assert!(edge("crate::memory::log", "crate::memory::lock"));
    assert!(edge("crate::commands::run", "crate::run"));
    assert!(edge("crate::llm", "crate::llm::providers"));
    assert_eq!(
        expand("super::{a, b::{c, d as e}}"),
        ["super::a", "super::b::c", "super::b::d"]
    );
    // A made-up upward use closes a cycle.
    let mut cyclic = graph.clone();
    let m = |s: &str| -> Module { s.split("::").map(str::to_owned).collect() };
    cyclic
        .get_mut(&m("crate::llm::http"))
        .unwrap()
        .insert(m("crate::llm"));
    let found = cyclic
        .keys()
        .find_map(|n| cycle_from(n, &cyclic, &mut Vec::new(), &mut BTreeSet::new()));
    assert!(
        found.is_some(),
        "a child using its parent's items is a cycle"
    );
}
