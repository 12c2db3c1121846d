//! The reference MCP memory server's knowledge graph, and world topics
//! that hold it.
//!
//! The server (`@modelcontextprotocol/server-memory`, `src/memory/index.ts`
//! of modelcontextprotocol/servers; `saveGraph`) keeps one JSON object a
//! line: `{"type":"entity","name","entityType","observations":[..]}` and
//! `{"type":"relation","from","to","relationType"}`, and its `loadGraph`
//! throws on a line that is not JSON, so what axe exports is strict.
//!
//! An entity is a world topic, in a layout that reads as notes and parses
//! back exactly ([`topic`] and [`parse_topic`]):
//!
//! ```text
//! # John Smith
//!
//! Type: person
//!
//! - Speaks fluent Spanish
//! - An observation of
//!   two lines
//!
//! ## Relations
//!
//! - [[John Smith]] works_at [[Anthropic]]
//! ```
//!
//! A relation is a line in both its ends' topics (a topic without `Type:`
//! holds relations to a name that is no entity). The relations are
//! sorted, so a topic is the same text whatever order the file had. Two
//! entity types are axe's own: `axe-topic` (a world topic not in this
//! layout, its lines as observations, verbatim) and `axe-memory` (an
//! agent's MEMORY.md, its lines as observations, named after the agent):
//! so every note goes out and comes back byte for byte, as far as JSON
//! strings hold it (a final newline is added where there was none, which
//! an import of it into the same notes takes as no difference; bytes not
//! UTF-8 are lost).

use std::collections::{BTreeSet, HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An agent's MEMORY.md as an entity.
pub const MEMORY_TYPE: &str = "axe-memory";
/// A world topic in no graph layout, as an entity.
pub const TOPIC_TYPE: &str = "axe-topic";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entity {
    pub name: String,
    #[serde(rename = "entityType")]
    pub entity_type: String,
    pub observations: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Relation {
    pub from: String,
    #[serde(rename = "relationType")]
    pub relation_type: String,
    pub to: String,
}

#[derive(Debug, Default)]
pub struct Graph {
    pub entities: Vec<Entity>,
    pub relations: Vec<Relation>,
}

/// Whether entities of `entity_type` are axe's own notes rather than
/// the graph's: an agent's MEMORY.md is named after its agent, and may
/// share that name with a world topic.
pub fn is_axe_type(entity_type: &str) -> bool {
    entity_type == MEMORY_TYPE || entity_type == TOPIC_TYPE
}

/// The graph in `bytes` (the server's JSONL), and a line for each line
/// left out: not JSON, not an object of a known type, a field missing.
/// An entity named twice (a file edited by hand; the server never writes
/// one) has its observations united under the first; the two of an
/// agent's MEMORY.md and a topic of one name (axe's export writes those)
/// stay apart, each with its own type.
pub fn parse_jsonl(bytes: &[u8]) -> (Graph, Vec<String>) {
    let mut graph = Graph::default();
    let mut problems = Vec::new();
    let mut seen_rel = BTreeSet::new();
    // Indices, so a file of many entities (16 MiB holds some 100,000) is
    // read in one pass, not compared with every entity before it: an
    // entity's place by its name and whether it is a MEMORY.md, and the
    // observations of one named twice.
    let mut placed: HashMap<(String, bool), usize> = HashMap::new();
    let mut observed: HashMap<usize, HashSet<String>> = HashMap::new();
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let n = i + 1;
        if line.trim_ascii().is_empty() {
            continue;
        }
        let value: Value = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(e) => {
                problems.push(format!("line {n}: not JSON ({e}); left out"));
                continue;
            }
        };
        match value.get("type").and_then(Value::as_str) {
            Some("entity") => match serde_json::from_value::<Entity>(value) {
                Ok(e) => match name_problem(&e.name) {
                    Some(p) => problems.push(format!("line {n}: entity {p}; left out")),
                    None => {
                        let key = (e.name.clone(), e.entity_type == MEMORY_TYPE);
                        match placed.get(&key) {
                            Some(&i) => {
                                let first = &mut graph.entities[i];
                                let seen = observed.entry(i).or_insert_with(|| {
                                    first.observations.iter().cloned().collect()
                                });
                                for o in e.observations {
                                    if seen.insert(o.clone()) {
                                        first.observations.push(o);
                                    }
                                }
                            }
                            None => {
                                placed.insert(key, graph.entities.len());
                                graph.entities.push(e);
                            }
                        }
                    }
                },
                Err(e) => problems.push(format!("line {n}: not an entity ({e}); left out")),
            },
            Some("relation") => match serde_json::from_value::<Relation>(value) {
                Ok(r) => {
                    let bad = [&r.from, &r.to]
                        .into_iter()
                        .find_map(|name| name_problem(name))
                        .or_else(|| {
                            (r.relation_type.contains(['\n', '[', ']'])
                                || r.relation_type.is_empty())
                            .then(|| "type is empty or holds a newline or bracket".into())
                        });
                    match bad {
                        Some(p) => problems.push(format!("line {n}: relation {p}; left out")),
                        None if seen_rel.insert(r.clone()) => graph.relations.push(r),
                        None => {}
                    }
                }
                Err(e) => problems.push(format!("line {n}: not a relation ({e}); left out")),
            },
            _ => problems.push(format!(
                "line {n}: neither an entity nor a relation (no \"type\" of either); left out"
            )),
        }
    }
    (graph, problems)
}

/// Why `name` cannot be a topic's heading and a link, if it cannot: a
/// newline would end the heading, `]]` the link.
fn name_problem(name: &str) -> Option<String> {
    (name.trim().is_empty() || name.trim() != name || name.contains('\n') || name.contains("]]"))
        .then(|| format!("name {name:?} is empty, padded, or holds a newline or \"]]\""))
}

/// The topic of the name `name`: its entity (`None`: only relations name
/// it) and the relations it is an end of.
pub fn topic(name: &str, entity: Option<&Entity>, relations: &[&Relation]) -> String {
    let mut out = format!("# {name}\n");
    if let Some(e) = entity {
        out.push_str(&format!("\nType: {}\n", one_line(&e.entity_type)));
        if !e.observations.is_empty() {
            out.push('\n');
            for o in &e.observations {
                out.push_str("- ");
                out.push_str(&o.replace('\n', "\n  "));
                out.push('\n');
            }
        }
    }
    let mut rels: Vec<&&Relation> = relations.iter().collect();
    rels.sort();
    rels.dedup();
    if !rels.is_empty() {
        out.push_str("\n## Relations\n\n");
        for r in rels {
            out.push_str(&format!(
                "- [[{}]] {} [[{}]]\n",
                r.from, r.relation_type, r.to
            ));
        }
    }
    out
}

fn one_line(s: &str) -> String {
    s.replace('\n', " ")
}

/// A topic in the layout [`topic`] writes, read back: its name, its
/// entity (when it has a `Type:`) and its relations. `None` for any other
/// text, or one [`topic`] would not write the same.
pub fn parse_topic(text: &str) -> Option<(String, Option<Entity>, Vec<Relation>)> {
    let mut lines = text.strip_suffix('\n')?.split('\n').peekable();
    let name = lines.next()?.strip_prefix("# ")?.to_owned();
    let mut entity = None;
    let mut relations = Vec::new();
    while let Some(line) = lines.next() {
        if !line.is_empty() {
            return None;
        }
        let head = lines.next()?;
        if let Some(t) = head.strip_prefix("Type: ") {
            if entity.is_some() || !relations.is_empty() {
                return None;
            }
            entity = Some(Entity {
                name: name.clone(),
                entity_type: t.to_owned(),
                observations: Vec::new(),
            });
        } else if head == "## Relations" {
            if !lines.next()?.is_empty() {
                return None;
            }
            while let Some(l) = lines.next_if(|l| !l.is_empty()) {
                let rest = l.strip_prefix("- [[")?;
                let (from, rest) = rest.split_once("]] ")?;
                let (kind, to) = rest.split_once(" [[")?;
                let to = to.strip_suffix("]]")?;
                relations.push(Relation {
                    from: from.to_owned(),
                    relation_type: kind.to_owned(),
                    to: to.to_owned(),
                });
            }
        } else if head.starts_with("- ") {
            let e = entity.as_mut()?;
            if !e.observations.is_empty() || !relations.is_empty() {
                return None;
            }
            let mut next = Some(head);
            while let Some(l) = next {
                if let Some(o) = l.strip_prefix("- ") {
                    e.observations.push(o.to_owned());
                } else {
                    let more = l.strip_prefix("  ")?;
                    let last = e.observations.last_mut()?;
                    last.push('\n');
                    last.push_str(more);
                }
                next = lines.next_if(|l| l.starts_with("- ") || l.starts_with("  "));
            }
        } else {
            return None;
        }
    }
    let refs: Vec<&Relation> = relations.iter().collect();
    (topic(&name, entity.as_ref(), &refs) == text && name_problem(&name).is_none())
        .then_some((name, entity, relations))
}

/// A file's lines, as observations kept verbatim (`axe-topic`,
/// `axe-memory`): the text is them joined by newlines, ending with one;
/// an empty file has none (not one empty line, which is `"\n"`).
pub fn lines_of(text: &str) -> Vec<String> {
    if text.is_empty() {
        return Vec::new();
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    body.split('\n').map(str::to_owned).collect()
}

/// The inverse of [`lines_of`]. A text whose last line had no newline
/// comes back with one: an import takes the two as the same note.
pub fn text_of(lines: &[String]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// One JSONL line of the server's for an entity or a relation, as its
/// `saveGraph` writes it: the same keys, in the same order (a struct, as
/// `serde_json`'s map would sort them).
pub fn entity_line(e: &Entity) -> String {
    #[derive(Serialize)]
    struct Line<'a> {
        #[serde(rename = "type")]
        kind: &'a str,
        name: &'a str,
        #[serde(rename = "entityType")]
        entity_type: &'a str,
        observations: &'a [String],
    }
    line(&Line {
        kind: "entity",
        name: &e.name,
        entity_type: &e.entity_type,
        observations: &e.observations,
    })
}

pub fn relation_line(r: &Relation) -> String {
    #[derive(Serialize)]
    struct Line<'a> {
        #[serde(rename = "type")]
        kind: &'a str,
        from: &'a str,
        to: &'a str,
        #[serde(rename = "relationType")]
        relation_type: &'a str,
    }
    line(&Line {
        kind: "relation",
        from: &r.from,
        to: &r.to,
        relation_type: &r.relation_type,
    })
}

fn line(value: &impl Serialize) -> String {
    // Strings and string lists only: serialising cannot fail.
    serde_json::to_string(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topics_parse_back_to_what_wrote_them() {
        let e = Entity {
            name: "John Smith".into(),
            entity_type: "person".into(),
            observations: vec!["Speaks Spanish".into(), "two\nlines".into(), "".into()],
        };
        let r = Relation {
            from: "John Smith".into(),
            relation_type: "works_at".into(),
            to: "Anthropic".into(),
        };
        let text = topic("John Smith", Some(&e), &[&r]);
        assert_eq!(
            text,
            "# John Smith\n\nType: person\n\n- Speaks Spanish\n- two\n  lines\n- \n\n## Relations\n\n- [[John Smith]] works_at [[Anthropic]]\n"
        );
        let (name, back, rels) = parse_topic(&text).unwrap();
        assert_eq!(
            (name.as_str(), back.as_ref(), rels),
            ("John Smith", Some(&e), vec![r.clone()])
        );
        let only = topic("Anthropic", None, &[&r]);
        assert_eq!(parse_topic(&only).unwrap().1, None);
        for other in [
            "# a\n\nsome prose\n",
            "no heading\n",
            "# a\n\nType: x\n\n- o\n\nmore\n",
            "# a",
        ] {
            assert!(parse_topic(other).is_none(), "{other:?}");
        }
    }

    #[test]
    fn bad_lines_are_named_and_the_rest_kept() {
        let jsonl = b"{\"type\":\"entity\",\"name\":\"a\",\"entityType\":\"t\",\"observations\":[\"x\"]}\n{not json\n\n{\"type\":\"relation\",\"from\":\"a\",\"to\":\"b\"}\n{\"type\":\"relation\",\"from\":\"a\",\"to\":\"b\",\"relationType\":\"r\"}\n";
        let (g, problems) = parse_jsonl(jsonl);
        assert_eq!(g.entities.len(), 1);
        assert_eq!(g.relations.len(), 1);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("line 2: "), "{problems:?}");
        assert!(problems[1].starts_with("line 4: "), "{problems:?}");
    }
}
