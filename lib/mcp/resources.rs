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
//! Where a kind's URIs start and its MIME type are its row of
//! `axe_memory::kinds::KINDS`; what it lists and how it is read are its
//! arms of [`of_kind`] and [`read`]. Only the served agent's own files
//! (and the shared world) are listed or read, through the same bounded,
//! symlink-safe reads as the tools.

use serde_json::{Value, json};

use super::jsonrpc::INVALID_PARAMS;
use axe_memory::kinds::ROWS;
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

/// The resources there are now: the listed kinds', then those of any
/// kind that lists its own through its row.
pub fn list(m: &Memory) -> Vec<Value> {
    let mut all: Vec<Value> = LISTED.iter().flat_map(|&kind| of_kind(m, kind)).collect();
    for row in ROWS {
        let (Some(res), Some(served)) = (row.resources, &m.served) else {
            continue;
        };
        if served.cfg.keeps(row.section) {
            for (rest, title) in (res.list)(&m.dirs, &m.agent, &served.cfg) {
                all.push(resource(&format!("{}{rest}", row.uri), &title, row.mime));
            }
        }
    }
    all
}

/// The resources of `kind` there are now, for the five kinds of a
/// release build (`LISTED`, checked to hold each); another kind lists its
/// own through its row.
fn of_kind(m: &Memory, kind: MemoryKind) -> Vec<Value> {
    let row = kind.row();
    // The state and the run log are offered only for an agent served
    // whole, and kept by it.
    let kept = || {
        m.served
            .as_ref()
            .filter(|served| served.cfg.keeps(row.section))
    };
    let own = |name: &str, title: &str| vec![resource(name, title, row.mime)];
    match kind {
        MemoryKind::Memory => match &m.notes {
            Some(ws) if ws.memory(&m.agent).exists() => own(
                &format!("{}agents/{}/MEMORY.md", row.uri, m.agent),
                "MEMORY.md",
            ),
            _ => Vec::new(),
        },
        MemoryKind::World => m.notes.as_ref().map_or_else(Vec::new, |ws| {
            listed(ws, &ws.world())
                .into_iter()
                .map(|topic| resource(&format!("{}world/{topic}", row.uri), &topic, row.mime))
                .collect()
        }),
        MemoryKind::Daily => m.notes.as_ref().map_or_else(Vec::new, |ws| {
            let mut days = listed(ws, &ws.daily_dir(&m.agent));
            days.reverse();
            days.into_iter()
                .take(DAYS_LISTED)
                .map(|day| {
                    let uri = format!("{}agents/{}/daily/{day}", row.uri, m.agent);
                    resource(&uri, &day, row.mime)
                })
                .collect()
        }),
        MemoryKind::State => match kept() {
            Some(served)
                if state::file_path(&m.dirs, &m.agent, &served.cfg.state.path)
                    .is_ok_and(|p| p.exists()) =>
            {
                own(&format!("{}{}.json", row.uri, m.agent), "state")
            }
            _ => Vec::new(),
        },
        MemoryKind::Log => match kept() {
            Some(served)
                if log::file_path(&m.dirs, &m.agent, &served.cfg.log.path)
                    .is_ok_and(|p| p.exists()) =>
            {
                own(&format!("{}{}.md", row.uri, m.agent), "run log")
            }
            _ => Vec::new(),
        },
        // Any other kind lists its own through its row (`list`).
        #[allow(unreachable_patterns)]
        _ => Vec::new(),
    }
}

/// The templates for what a list leaves out or what may come to be.
pub fn templates(m: &Memory) -> Vec<Value> {
    if m.notes.is_none() {
        return Vec::new();
    }
    let (world, daily) = (MemoryKind::World.row(), MemoryKind::Daily.row());
    vec![
        json!({"uriTemplate": format!("{}world/{{topic}}.md", world.uri), "name": "world topic", "mimeType": world.mime}),
        json!({"uriTemplate": format!("{}agents/{}/daily/{{date}}.md", daily.uri, m.agent), "name": "daily log", "mimeType": daily.mime}),
    ]
}

/// `resources/read {uri}`.
pub fn read(m: &Memory, params: &Value) -> Result<Value, Failure> {
    let uri = params["uri"]
        .as_str()
        .ok_or((INVALID_PARAMS, "resources/read needs a uri".to_owned()))?;
    let unknown = || (INVALID_PARAMS, format!("unknown resource: {uri}"));
    let row = ROWS
        .iter()
        .find(|r| uri.starts_with(r.uri))
        .ok_or_else(unknown)?;
    let rest = &uri[row.uri.len()..];
    let failed = |e: axe_base::error::Error| (INVALID_PARAMS, format!("{uri}: {e}"));
    let kept = || {
        m.served
            .as_ref()
            .filter(|s| s.cfg.keeps(row.section))
            .ok_or_else(unknown)
    };
    // The five kinds of a release build are read here; any other kind
    // (a test build's toy) through its row.
    let bytes = match row.kind {
        MemoryKind::Memory | MemoryKind::World | MemoryKind::Daily => {
            let ws = m.notes.as_ref().ok_or_else(unknown)?;
            let own = format!("agents/{}/", m.agent);
            let allowed = rest.starts_with("world/") || rest.starts_with(&own);
            if !allowed
                || !rest.ends_with(".md")
                || rest.split('/').any(|p| p == ".." || p.is_empty())
            {
                return Err(unknown());
            }
            ws.read(&ws.root.join(rest))
                .map_err(failed)?
                .ok_or_else(unknown)?
        }
        MemoryKind::State => {
            let served = kept()?;
            if rest != format!("{}.json", m.agent) {
                return Err(unknown());
            }
            let path =
                state::file_path(&m.dirs, &m.agent, &served.cfg.state.path).map_err(failed)?;
            state::read(&path, m.wait).map_err(failed)?
        }
        MemoryKind::Log => {
            let served = kept()?;
            if rest != format!("{}.md", m.agent) {
                return Err(unknown());
            }
            let path = log::file_path(&m.dirs, &m.agent, &served.cfg.log.path).map_err(failed)?;
            log::load(&path, LOG_ENTRIES, m.wait).map_err(failed)?
        }
        #[allow(unreachable_patterns)]
        _ => {
            let served = kept()?;
            let read = row.resources.ok_or_else(unknown)?.read;
            read(&m.dirs, &m.agent, &served.cfg, rest)
                .map_err(failed)?
                .ok_or_else(unknown)?
        }
    };
    let mime = row.mime;
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
