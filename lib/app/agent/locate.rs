//! Where agent files are: the agents directories in the order they are
//! searched (`--agents-dir`, `./axe/agents`, `<config>/agents`), the file
//! a name stands for, and the nearest name when it stands for none.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Serialize;

use axe_base::dirs;
use axe_base::error::{Error, Result};

/// Rejects names that could reach outside the agents or memory directory.
/// The Go `axe` took names as given; `../x` would have read
/// `<config>/x.toml` and written `<data>/x.md`.
pub fn check_name(name: &str) -> Result<()> {
    if name.trim().is_empty() {
        return Err(Error::InvalidAgentName(
            "agent name must not be empty".to_owned(),
        ));
    }
    if name == "." || name == ".." || name.contains(['/', '\\', '\0']) {
        return Err(Error::InvalidAgentName(format!(
            "agent name \"{name}\" must not contain path separators or be \".\" or \"..\""
        )));
    }
    Ok(())
}

/// Where an agent file was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// The directory given with `--agents-dir`.
    AgentsDir,
    /// `./axe/agents` under the current directory.
    Local,
    /// `<config>/agents`.
    Config,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::AgentsDir => "agents-dir",
            Source::Local => "local",
            Source::Config => "config",
        }
    }
}

static GIVEN_DIR: OnceLock<PathBuf> = OnceLock::new();

/// Makes `dir` (`--agents-dir`) the first agents directory this process
/// searches; a relative one is taken from the current directory. The first
/// call wins.
pub fn use_agents_dir(dir: &Path) {
    let dir = match std::env::current_dir() {
        Ok(cwd) if dir.is_relative() => cwd.join(dir),
        _ => dir.to_owned(),
    };
    let _ = GIVEN_DIR.set(dir);
}

/// The agents directories in the order they are searched: `--agents-dir`
/// when given, `./axe/agents`, `<config>/agents`; one that is the same path
/// as an earlier one is left out.
pub fn search_dirs() -> Result<Vec<(Source, PathBuf)>> {
    let mut found: Vec<(Source, PathBuf)> = Vec::new();
    if let Some(dir) = GIVEN_DIR.get() {
        found.push((Source::AgentsDir, dir.clone()));
    }
    // `./axe` that is no directory (a built `axe` binary) is no local
    // agents directory; `./axe/agents` that is not one (a FIFO, a file) is
    // reported as `<config>/agents` would be.
    if let Ok(cwd) = std::env::current_dir()
        && cwd.join("axe").is_dir()
    {
        found.push((Source::Local, cwd.join("axe").join("agents")));
    }
    found.push((Source::Config, dirs::agents_dir()?));
    let mut out: Vec<(Source, PathBuf)> = Vec::new();
    for (source, dir) in found {
        if !out.iter().any(|(_, d)| same_dir(d, &dir)) {
            out.push((source, dir));
        }
    }
    Ok(out)
}

fn same_dir(a: &Path, b: &Path) -> bool {
    a == b || matches!((fs::canonicalize(a), fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
}

/// The file for agent `name` and the directory it came from: the first
/// directory of [`search_dirs`] that has `<name>.toml` (or cannot say it
/// has not: an agents "directory" that is a FIFO or a file is reported
/// when the agent is read, as for `<config>/agents`). When none has
/// it, the file a new agent would get: in `--agents-dir` when given, else
/// in `./axe/agents` when that directory exists, else in `<config>/agents`.
pub fn locate(name: &str) -> Result<(Source, PathBuf)> {
    check_name(name)?;
    let file = format!("{name}.toml");
    let dirs = search_dirs()?;
    for (source, dir) in &dirs {
        let path = dir.join(&file);
        match fs::metadata(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            _ => return Ok((*source, path)),
        }
    }
    let home = dirs
        .iter()
        .find(|(source, dir)| match source {
            Source::AgentsDir | Source::Config => true,
            Source::Local => dir.is_dir(),
        })
        .map_or_else(|| (Source::Config, PathBuf::new()), Clone::clone);
    Ok((home.0, home.1.join(file)))
}

/// The file an agent name stands for (see [`locate`]); the name is
/// checked first.
pub fn file_path(name: &str) -> Result<PathBuf> {
    Ok(locate(name)?.1)
}

/// The error for an agent file that does not exist, naming the agent
/// whose name is nearest, when one is near enough to be a typo.
pub fn not_found(name: &str) -> Error {
    Error::AgentNotFound {
        name: name.to_owned(),
        near: near_name(name),
    }
}

/// The agent whose name is nearest to `typed`, when one is near enough to
/// be a typo; any `.toml` file counts, loadable or not.
pub fn near_name(typed: &str) -> Option<String> {
    let names: Vec<String> = search_dirs()
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(_, dir)| fs::read_dir(dir).ok())
        .flatten()
        .filter_map(|e| {
            let file = e.ok()?.file_name().into_string().ok()?;
            file.strip_suffix(".toml").map(str::to_owned)
        })
        .collect();
    axe_base::suggest::near(typed, names.iter().map(String::as_str)).map(str::to_owned)
}

/// The names of the `.toml` files in `dir` that are agent names, sorted;
/// a missing directory has none.
pub(super) fn stems_in(dir: &Path) -> Result<Vec<String>> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(Error::Config(format!(
                "open {}: {}",
                dir.display(),
                axe_base::error::describe_io(&e)
            )));
        }
    };
    let mut stems: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| !t.is_dir()))
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            Some(name.strip_suffix(".toml")?.to_owned())
        })
        .filter(|stem| check_name(stem).is_ok())
        .collect();
    stems.sort();
    Ok(stems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_escape_are_rejected() {
        for bad in ["", " ", ".", "..", "../x", "a/b", "a\\b", "a\0b"] {
            assert!(check_name(bad).is_err(), "{bad:?} accepted");
        }
        for good in ["reviewer", "pr-reviewer", "a.b", "..hidden", "v1..2"] {
            check_name(good).unwrap();
        }
    }
}
