//! Where a run's artifacts go: `--artifact-dir`, else the agent's
//! `[artifacts] dir` (`~` and `$VAR` expanded, relative to its workdir),
//! else with `[artifacts] enabled` a directory for this run alone under
//! `<cache>/artifacts/`, removed when the run ends unless kept.

use std::path::{Path, PathBuf};

use axe_agent::ArtifactsConfig;
use axe_base::error::{Error, Result};
use axe_tools::builtin::Artifacts;

/// The run's artifact directory, made if missing; `None` when the run
/// has none.
pub fn open(
    cfg: &ArtifactsConfig,
    flag: Option<&Path>,
    workdir: &Path,
) -> Result<Option<Artifacts>> {
    let (dir, temporary) = match flag {
        Some(dir) => (dir.to_owned(), false),
        None if !cfg.enabled => return Ok(None),
        None if !cfg.dir.is_empty() => (workdir.join(expand(&cfg.dir)), false),
        None => {
            let stamp = time::OffsetDateTime::now_utc().unix_timestamp_nanos();
            let name = format!("{stamp}-{}", std::process::id());
            (
                axe_base::dirs::cache_dir()?.join("artifacts").join(name),
                true,
            )
        }
    };
    axe_base::beneath::create_dirs(&dir).map_err(|e| {
        Error::caused(
            Error::Config(format!(
                "create artifact directory {}: {}",
                dir.display(),
                axe_base::error::describe_io(&e)
            )),
            e,
        )
    })?;
    Ok(Some(Artifacts::new(dir, temporary)))
}

/// `dir` with a leading `~` as the home directory and `$VAR` or `${VAR}`
/// as the variable's value (empty when unset), as Go's `os.ExpandEnv`.
fn expand(dir: &str) -> PathBuf {
    let home = || std::env::var("HOME").unwrap_or_default();
    let dir = match dir.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("{}{rest}", home()),
        _ => dir.to_owned(),
    };
    let mut out = String::new();
    let mut rest = dir.as_str();
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        rest = &rest[at + 1..];
        let (name, after) = match rest.strip_prefix('{') {
            Some(braced) => match braced.find('}') {
                Some(end) => (&braced[..end], &braced[end + 1..]),
                None => (braced, ""),
            },
            None => {
                let end = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                (&rest[..end], &rest[end..])
            }
        };
        out.push_str(&std::env::var(name).unwrap_or_default());
        rest = after;
    }
    out.push_str(rest);
    PathBuf::from(out)
}
