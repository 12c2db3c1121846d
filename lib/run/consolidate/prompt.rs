//! What the model is shown and told: MEMORY.md, the world topics it
//! names and the new entries, gathered within the agent's budget, and the
//! agent cut down to its notes tools.

use axe_agent::AgentConfig;
use axe_base::error::Result;
use axe_memory::error::io_error;
use axe_memory::hash::sha256_hex;
use axe_memory::notes::Workspace;
use axe_memory::notes::entries::{self, Entry};
use axe_memory::notes::history;

use crate::prepared::Prepared;

/// What the model is told it is doing.
pub(super) const SYSTEM: &str = "\
You consolidate an agent's notes between its sessions. Its MEMORY.md is its curated \
long-term memory, read at the start of every run; its daily logs are what happened, \
entry by entry. You are given MEMORY.md whole, the world topics it names, and the \
daily-log entries written since the last consolidation.

Keep what will still matter in a month: durable facts, decisions and why they were \
made, the user's preferences, names, dates, plans as they stand now. Leave out what \
was routine or is already in MEMORY.md. When a new entry supersedes something in \
MEMORY.md (a plan changed, a value was moved, a decision was reversed), replace the \
old statement rather than keeping both, and say in your final answer what you removed \
as superseded and why. Keep dates where they matter (\"since 2026-05-03\").

Write MEMORY.md with reflect: one call with its whole new text, which must stay \
within its cap of {cap} characters: merge and shorten rather than append. A fact about \
the world shared by every agent (a person, a system, a place) goes to its topic with \
learn_fact, the topic's whole new text. What you were shown counts as read: you need \
not recall first. If a write is refused because the file changed meanwhile, stop: \
do not write again, the next consolidation will see the change. If nothing is worth \
keeping, write nothing. End with a short answer: what you kept, what you merged, \
what you removed as superseded.";

/// What the model is shown.
pub(super) struct Gathered {
    pub(super) memory: Option<Vec<u8>>,
    pub(super) topics: Vec<(String, Vec<u8>)>,
    pub(super) new: Vec<Entry>,
    pub(super) left: usize,
}

/// The agent as a consolidation runs it: its notes tools and nothing
/// else (no built-in tool, MCP server or sub-agent, no context file or
/// skill), since all it is to do is rewrite its notes.
pub(super) fn only_notes(mut cfg: AgentConfig) -> AgentConfig {
    cfg.tools.clear();
    cfg.mcp_servers.clear();
    cfg.sub_agents.clear();
    cfg.files.clear();
    cfg.skill.clear();
    cfg.memory.context.budget = None;
    cfg
}

/// MEMORY.md, the world topics it names and the new entries, within the
/// agent's `recall_chars` (the oldest entries first; the rest wait for
/// the next consolidation).
pub(super) fn gather(ws: &Workspace, agent: &str, cfg: &AgentConfig) -> Result<Gathered> {
    let memory = ws.read(&ws.memory(agent))?;
    let text = String::from_utf8_lossy(memory.as_deref().unwrap_or_default()).to_lowercase();
    let mut topics = Vec::new();
    let world = ws.world();
    if let Some(dir) = ws
        .open_dir(&world)
        .map_err(|e| io_error("", "open", &world, e))?
    {
        let files = Workspace::md_files(&dir).map_err(|e| io_error("", "read", &world, e))?;
        for (file, at) in files {
            let stem = file.trim_end_matches(".md");
            if !names(&text, stem) {
                continue;
            }
            let mut bytes = Vec::new();
            if at
                .read_into(ws, &mut bytes)
                .map_err(|e| io_error("", "read", world.join(&file), e))?
            {
                topics.push((stem.to_owned(), bytes));
            }
        }
    }
    let consolidated = history::consolidated(&history::list(ws, agent)?);
    let fresh: Vec<Entry> = entries::all(ws, agent)?
        .into_iter()
        .filter(|e| !consolidated.contains(&e.id))
        .collect();
    let shown: usize =
        memory.as_ref().map_or(0, Vec::len) + topics.iter().map(|(_, t)| t.len()).sum::<usize>();
    let mut budget = cfg
        .memory
        .notes
        .recall_chars
        .as_usize()
        .saturating_sub(shown);
    let mut new = Vec::new();
    for e in &fresh {
        let size = e.text.len() + 32;
        // The first always goes, or one long entry would wait forever.
        if !new.is_empty() && size > budget {
            break;
        }
        budget = budget.saturating_sub(size);
        new.push(e.clone());
    }
    Ok(Gathered {
        left: fresh.len() - new.len(),
        memory,
        topics,
        new,
    })
}

/// Whether MEMORY.md's text (lower case) names the topic `stem`: as
/// `world/<stem>` or as the words of its name, standing apart.
fn names(text: &str, stem: &str) -> bool {
    let words = stem.replace('-', " ");
    [stem, words.as_str()].iter().any(|needle| {
        text.match_indices(needle).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + needle.len()..].chars().next();
            !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
        })
    })
}

/// The user message: what to consolidate.
pub(super) fn task(agent: &Prepared, g: &Gathered) -> String {
    let mut t = format!("Consolidate the notes of the agent \"{}\".\n\n", agent.name);
    let memory = g.memory.as_deref().unwrap_or_default();
    t.push_str(&format!(
        "## MEMORY.md ({} characters; its cap is {})\n\n",
        String::from_utf8_lossy(memory).chars().count(),
        agent.cfg.memory.notes.max_memory_chars.get()
    ));
    match memory.trim_ascii().is_empty() {
        true => t.push_str("(empty)\n\n"),
        false => t.push_str(&format!(
            "{}\n\n",
            String::from_utf8_lossy(memory).trim_end()
        )),
    }
    if !g.topics.is_empty() {
        t.push_str("## The world topics MEMORY.md names\n\n");
        for (topic, text) in &g.topics {
            t.push_str(&format!(
                "### world/{topic}.md (learn_fact topic \"{topic}\")\n\n{}\n\n",
                String::from_utf8_lossy(text).trim_end()
            ));
        }
    }
    t.push_str(&format!(
        "## New daily-log entries since the last consolidation ({}, oldest first)\n\n",
        g.new.len()
    ));
    for e in &g.new {
        t.push_str(&format!("### {} {}\n\n{}\n\n", e.day, e.time, e.text));
    }
    if let Some(r) = agent
        .recall
        .as_ref()
        .filter(|r| !r.entries.trim().is_empty())
    {
        t.push_str("## Its recent runs (the run log)\n\n");
        t.push_str(r.entries.trim_end());
        t.push_str("\n\n");
    }
    if let Some(path) = &agent.state {
        let budget = agent.cfg.memory.state.context_budget.as_usize();
        let block = axe_memory::state::read(path, agent.wait)
            .ok()
            .and_then(|bytes| {
                let view = axe_memory::state::view(path, &bytes).ok()?;
                let now = axe_memory::state::Current {
                    task: None,
                    phase: None,
                };
                Some(
                    axe_memory::state::build(&view, now, axe_memory::block::Block::new(budget))
                        .text,
                )
            });
        if let Some(block) = block.filter(|b| !b.trim().is_empty()) {
            t.push_str("## Its state (decisions and what it is doing)\n\n");
            t.push_str(block.trim_end());
            t.push_str("\n\n");
        }
    }
    t.push_str("Rewrite MEMORY.md (reflect) and any topic (learn_fact) as the instructions say.");
    t
}

/// What the prompt showed whole, as the notes tools count it seen.
pub(super) fn seen(g: &Gathered) -> axe_tools::NotesSeen {
    axe_tools::NotesSeen {
        memory: Some(sha256_hex(g.memory.as_deref().unwrap_or_default())),
        world: g
            .topics
            .iter()
            .map(|(t, text)| (t.clone(), sha256_hex(text)))
            .collect(),
        recalled: false,
        unseen_world: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::names;

    #[test]
    fn memory_names_a_topic_by_its_words_standing_apart() {
        assert!(names("see world/deploys.md", "deploys"));
        assert!(names("the deploy process is blue-green", "deploy-process"));
        assert!(!names("redeploys weekly", "deploys"));
        assert!(!names("nothing here", "people"));
    }
}
