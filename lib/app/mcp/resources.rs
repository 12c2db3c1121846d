//! The memory's files as MCP resources, read-only. URIs mirror where the
//! files are:
//!
//! ```text
//! axe://notes/world/<topic>.md                  a world topic
//! axe://notes/agents/<agent>/MEMORY.md          the agent's MEMORY.md
//! axe://notes/agents/<agent>/daily/<date>.md    a daily log
//! axe://state/<agent>.json                      the structured state
//! axe://log/<agent>.md                          the run log's last entries
//! ```
//!
//! Only the served agent's own files (and the shared world) are listed or
//! read, through the same bounded, symlink-safe reads as the tools.

use serde_json::{Value, json};

use super::jsonrpc::INVALID_PARAMS;
use axe_memory::notes::Workspace;
use axe_memory::{MemoryKind, log, state};
use axe_tools::Memory;

/// The run log's entries a resource read gives: its tail, as a run loads
/// it, never a gigabyte log whole.
const LOG_ENTRIES: u64 = 100;

/// How many daily logs are listed, newest first; older ones are read by
/// the template.
const DAYS_LISTED: usize = 30;

type Failure = (i64, String);

/// The order resources are listed in: the notes workspace's, then the
/// state and the run log.
const LISTED: [MemoryKind; 5] = [
    MemoryKind::Memory,
    MemoryKind::World,
    MemoryKind::Daily,
    MemoryKind::State,
    MemoryKind::Log,
];
const _: () = assert!(MemoryKind::each_once(&LISTED));

/// The resources there are now.
pub fn list(m: &Memory) -> Vec<Value> {
    LISTED.iter().flat_map(|&kind| of_kind(m, kind)).collect()
}

/// The resources of `kind` there are now: a match, so a new kind does
/// not compile until it says what it offers.
fn of_kind(m: &Memory, kind: MemoryKind) -> Vec<Value> {
    let row = kind.row();
    // The state and the run log are offered only for an agent served
    // whole, and kept by it.
    let kept = || {
        m.served
            .as_ref()
            .filter(|served| row.section.enabled(&served.cfg))
    };
    let own = |name: &str, title: &str| vec![resource(name, title, row.mime)];
    match kind {
        MemoryKind::Memory => match &m.notes {
            Some(ws) if ws.memory(&m.agent).exists() => own(
                &format!("axe://notes/agents/{}/MEMORY.md", m.agent),
                "MEMORY.md",
            ),
            _ => Vec::new(),
        },
        MemoryKind::World => m.notes.as_ref().map_or_else(Vec::new, |ws| {
            listed(ws, &ws.world())
                .into_iter()
                .map(|topic| resource(&format!("axe://notes/world/{topic}"), &topic, row.mime))
                .collect()
        }),
        MemoryKind::Daily => m.notes.as_ref().map_or_else(Vec::new, |ws| {
            let mut days = listed(ws, &ws.daily_dir(&m.agent));
            days.reverse();
            days.into_iter()
                .take(DAYS_LISTED)
                .map(|day| {
                    let uri = format!("axe://notes/agents/{}/daily/{day}", m.agent);
                    resource(&uri, &day, row.mime)
                })
                .collect()
        }),
        MemoryKind::State => match kept() {
            Some(served)
                if state::file_path(&m.agent, &served.cfg.state.path).is_ok_and(|p| p.exists()) =>
            {
                own(&format!("axe://state/{}.json", m.agent), "state")
            }
            _ => Vec::new(),
        },
        MemoryKind::Log => match kept() {
            Some(served)
                if log::file_path(&m.agent, &served.cfg.memory.path).is_ok_and(|p| p.exists()) =>
            {
                own(&format!("axe://log/{}.md", m.agent), "run log")
            }
            _ => Vec::new(),
        },
    }
}

/// The templates for what a list leaves out or what may come to be.
pub fn templates(m: &Memory) -> Vec<Value> {
    if m.notes.is_none() {
        return Vec::new();
    }
    vec![
        json!({"uriTemplate": "axe://notes/world/{topic}.md", "name": "world topic", "mimeType": "text/markdown"}),
        json!({"uriTemplate": format!("axe://notes/agents/{}/daily/{{date}}.md", m.agent), "name": "daily log", "mimeType": "text/markdown"}),
    ]
}

/// `resources/read {uri}`.
pub fn read(m: &Memory, params: &Value) -> Result<Value, Failure> {
    let uri = params["uri"]
        .as_str()
        .ok_or((INVALID_PARAMS, "resources/read needs a uri".to_owned()))?;
    let unknown = || (INVALID_PARAMS, format!("unknown resource: {uri}"));
    let rest = uri.strip_prefix("axe://").ok_or_else(unknown)?;
    let failed = |e: axe_base::error::Error| (INVALID_PARAMS, format!("{uri}: {e}"));
    let (mime, bytes) = if let Some(rel) = rest.strip_prefix("notes/") {
        let ws = m.notes.as_ref().ok_or_else(unknown)?;
        let own = format!("agents/{}/", m.agent);
        let allowed = rel.starts_with("world/") || rel.starts_with(&own);
        if !allowed || !rel.ends_with(".md") || rel.split('/').any(|p| p == ".." || p.is_empty()) {
            return Err(unknown());
        }
        let bytes = ws
            .read(&ws.root.join(rel))
            .map_err(failed)?
            .ok_or_else(unknown)?;
        ("text/markdown", bytes)
    } else if let Some(name) = rest.strip_prefix("state/") {
        let row = MemoryKind::State.row();
        let served = m.served.as_ref().filter(|s| row.section.enabled(&s.cfg));
        let cfg = served.ok_or_else(unknown)?;
        if name != format!("{}.json", m.agent) {
            return Err(unknown());
        }
        let path = state::file_path(&m.agent, &cfg.cfg.state.path).map_err(failed)?;
        (row.mime, state::read(&path).map_err(failed)?)
    } else if let Some(name) = rest.strip_prefix("log/") {
        let row = MemoryKind::Log.row();
        let served = m.served.as_ref().filter(|s| row.section.enabled(&s.cfg));
        let cfg = served.ok_or_else(unknown)?;
        if name != format!("{}.md", m.agent) {
            return Err(unknown());
        }
        let path = log::file_path(&m.agent, &cfg.cfg.memory.path).map_err(failed)?;
        (row.mime, log::load(&path, LOG_ENTRIES).map_err(failed)?)
    } else {
        return Err(unknown());
    };
    Ok(json!({"contents": [{
        "uri": uri,
        "mimeType": mime,
        "text": String::from_utf8_lossy(&bytes),
    }]}))
}

fn resource(uri: &str, name: &str, mime: &str) -> Value {
    json!({"uri": uri, "name": name, "mimeType": mime})
}

/// The notes files of a workspace directory, by name; none when it cannot
/// be listed (resources are a convenience; the tools say what is wrong).
fn listed(ws: &Workspace, dir: &std::path::Path) -> Vec<String> {
    ws.open_dir(dir)
        .ok()
        .flatten()
        .and_then(|d| Workspace::md_files(&d).ok())
        .map(|files| files.into_iter().map(|(name, _)| name).collect())
        .unwrap_or_default()
}
