//! Reading agent files: one by name, validated, its unknown keys warned
//! of; or every one in the agents directories, for the listings.

use std::io;
use std::path::{Path, PathBuf};

use axe_base::error::{Error, Result};
use axe_base::read;

use super::locate::{Agents, Source, stems_in};
use super::parse::AgentConfig;
use super::validate::validate;

impl Agents {
    /// Loads and validates the agent `name`, warning of the keys it has
    /// that no setting takes (once per file for these agents).
    pub fn load(&self, name: &str) -> Result<AgentConfig> {
        self.load_if_any(name)?.ok_or_else(|| self.not_found(name))
    }

    /// [`Agents::load`], with `None` for a name that has no file: for a
    /// caller to whom that is no error (a memory served by name), which
    /// spares the search for a near name the error would carry.
    pub fn load_if_any(&self, name: &str) -> Result<Option<AgentConfig>> {
        let path = self.file_path(name)?;
        Ok(
            read_agent_file(&path, name, Some(self))?.map(|(config, unknown)| {
                self.warn(&path, &unknown);
                config
            }),
        )
    }

    /// [`Agents::load`] for a command that shows the unknown keys itself
    /// (`agents show`, `agents check`) rather than warning of them; they
    /// are still warned of when the file does not validate, since then
    /// nothing shows them.
    pub fn load_quietly(&self, name: &str) -> Result<Loaded> {
        let path = self.file_path(name)?;
        let (config, unknown) =
            read_agent_file(&path, name, Some(self))?.ok_or_else(|| self.not_found(name))?;
        Ok(Loaded {
            config,
            path,
            unknown,
        })
    }

    /// Every agent that loads, as `(file stem, config)`, in file-name
    /// order. Files that fail to load are skipped, as in Go; a missing
    /// agents directory is an empty list.
    pub fn list(&self) -> Result<Vec<(String, AgentConfig)>> {
        Ok(self
            .list_found()?
            .into_iter()
            .map(|found| (found.stem, found.config))
            .collect())
    }

    /// Every agent that loads, over all of [`Agents::search_dirs`], in
    /// file-name order: a name is taken from the first directory that has
    /// it, as [`Agents::load`] takes it, so one that shadows another hides
    /// it even when it fails to load.
    pub fn list_found(&self) -> Result<Vec<Found>> {
        Ok(self.list_all()?.0)
    }

    /// [`Agents::list_found`], and the files it leaves out because they
    /// do not load, also in file-name order, so that `agents list` can say
    /// why a file the user sees in the directory is not listed.
    pub fn list_all(&self) -> Result<(Vec<Found>, Vec<Broken>)> {
        let mut seen: Vec<String> = Vec::new();
        let (mut found, mut broken) = (Vec::new(), Vec::new());
        for (source, dir) in self.search_dirs()? {
            for stem in stems_in(&dir)? {
                if seen.contains(&stem) {
                    continue;
                }
                seen.push(stem.clone());
                let path = dir.join(format!("{stem}.toml"));
                // A listing is no place for each file's warnings.
                let error = match read_agent_file(&path, &stem, None) {
                    Ok(Some((config, _))) => {
                        found.push(Found {
                            stem,
                            config,
                            source,
                            path,
                        });
                        continue;
                    }
                    // Listed a moment ago: a dangling symlink, or removed since.
                    Ok(None) => self.not_found(&stem).to_string(),
                    Err(e) => e.to_string(),
                };
                broken.push(Broken {
                    stem,
                    source,
                    path,
                    error,
                });
            }
        }
        found.sort_by(|a, b| a.stem.cmp(&b.stem));
        broken.sort_by(|a, b| a.stem.cmp(&b.stem));
        Ok((found, broken))
    }
}

/// An agent as [`Agents::load_quietly`] gives it.
#[derive(Debug)]
pub struct Loaded {
    pub config: AgentConfig,
    pub path: PathBuf,
    /// The keys no setting takes, in the order they are written.
    pub unknown: Vec<axe_base::unknown::Unknown>,
}

/// Reads, parses and validates one agent file; `None` when it does not
/// exist. A symlink is followed (dotfiles managers link agent files in);
/// a FIFO, a device or a file over [`read::TOML_LIMIT`] is an error.
///
/// With `warn`, its unknown keys are warned of there when the file does
/// not validate: the warning may name the cause (`modle = ...` for a
/// missing `model`), and a caller that fails gets no other chance.
fn read_agent_file(
    path: &Path,
    name: &str,
    warn: Option<&Agents>,
) -> Result<Option<(AgentConfig, Vec<axe_base::unknown::Unknown>)>> {
    let parse_err = |message: String| Error::AgentParse {
        name: name.to_owned(),
        message,
    };
    let text = match read::text(path, read::TOML_LIMIT) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            let line = format!(
                "open {}: {}",
                path.display(),
                axe_base::error::describe_io(&e)
            );
            return Err(Error::caused(parse_err(line), e));
        }
    };
    let (cfg, unknown) =
        crate::parse::read(path, &text).map_err(|e| Error::caused(parse_err(e.to_string()), e))?;
    if let Err(e) = validate(&cfg) {
        if let Some(agents) = warn {
            agents.warn(path, &unknown);
        }
        return Err(e);
    }
    Ok(Some((cfg, unknown)))
}

/// An agent of [`Agents::list_found`].
#[derive(Debug, Clone)]
pub struct Found {
    pub stem: String,
    pub config: AgentConfig,
    pub source: Source,
    pub path: PathBuf,
}

/// An agent file of [`Agents::list_all`] that does not load, and why: the error
/// `axe-run` would give for it.
#[derive(Debug, Clone)]
pub struct Broken {
    pub stem: String,
    pub source: Source,
    pub path: PathBuf,
    pub error: String,
}

/// [`Agents::list`] for the agent files in `dir`.
pub fn list_in(dir: &Path) -> Result<Vec<(String, AgentConfig)>> {
    Ok(stems_in(dir)?
        .into_iter()
        .filter_map(|stem| {
            let path = dir.join(format!("{stem}.toml"));
            let (cfg, _) = read_agent_file(&path, &stem, None).ok()??;
            Some((stem, cfg))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn list_skips_what_does_not_load_and_sorts_by_file_name() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| fs::write(dir.path().join(name), text).unwrap();
        write("b.toml", "name = \"bee\"\nmodel = \"a/b\"\n");
        write(
            "a.toml",
            "name = \"zed\"\nmodel = \"a/b\"\n[memory]\nenabled = true\n",
        );
        write("broken.toml", "name = ");
        write("invalid.toml", "name = \"x\"\n");
        write("notes.txt", "name = \"n\"\nmodel = \"a/b\"\n");
        fs::create_dir(dir.path().join("dir.toml")).unwrap();
        let listed = list_in(dir.path()).unwrap();
        let names: Vec<(&str, &str)> = listed
            .iter()
            .map(|(stem, cfg)| (stem.as_str(), cfg.name.as_str()))
            .collect();
        assert_eq!(names, [("a", "zed"), ("b", "bee")]);
        assert!(listed[0].1.memory.log.enabled);
    }

    #[test]
    fn list_of_a_missing_directory_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        assert!(list_in(&dir.path().join("agents")).unwrap().is_empty());
    }
}
