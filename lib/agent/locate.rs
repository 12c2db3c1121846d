//! Where agent files are: the agents directories in the order they are
//! searched (`--agents-dir`, `./axe/agents`, `<config>/agents`), the file
//! a name stands for, and the nearest name when it stands for none.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use axe_base::dirs::Dirs;
use axe_base::error::{Error, Result};
use axe_base::report::{Report, Stderr};
use axe_base::unknown::Warned;

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

/// Where one command finds agent files, built once from its flags and
/// handed down: `--agents-dir` when given, and axe's directories (whose
/// `<config>/agents` is searched last). It also says the unknown keys of
/// the files it loads, each file once for the command, to its reporter.
#[derive(Clone)]
pub struct Agents {
    given: Option<PathBuf>,
    dirs: Dirs,
    report: Arc<dyn Report>,
    warned: Arc<Warned>,
}

impl std::fmt::Debug for Agents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agents")
            .field("given", &self.given)
            .field("dirs", &self.dirs)
            .finish_non_exhaustive()
    }
}

impl Agents {
    /// The agents of `dirs`, `given` (`--agents-dir`) searched first; a
    /// relative one is taken from the current directory now. Warnings go
    /// to stderr.
    pub fn new(dirs: Dirs, given: Option<&Path>) -> Agents {
        let given = given.map(|dir| match std::env::current_dir() {
            Ok(cwd) if dir.is_relative() => cwd.join(dir),
            _ => dir.to_owned(),
        });
        Agents {
            given,
            dirs,
            report: Arc::new(Stderr),
            warned: Arc::default(),
        }
    }

    /// These agents, their warnings going to `report` instead.
    pub fn reporting_to(mut self, report: Arc<dyn Report>) -> Agents {
        self.report = report;
        self
    }

    /// axe's directories these agents are found by.
    pub fn dirs(&self) -> &Dirs {
        &self.dirs
    }

    /// Where the warnings of loading go, and the lines of whatever runs
    /// these agents.
    pub fn report(&self) -> &dyn Report {
        &*self.report
    }

    /// [`Agents::report`], to keep.
    pub fn reporter(&self) -> Arc<dyn Report> {
        Arc::clone(&self.report)
    }

    /// Warns of `unknown` in `file` (an agent file, config.toml), the
    /// first time for these agents.
    pub fn warn(&self, file: &Path, unknown: &[axe_base::unknown::Unknown]) {
        self.warned.warn(&*self.report, file, unknown);
    }

    /// The agents directories in the order they are searched:
    /// `--agents-dir` when given, `./axe/agents`, `<config>/agents`; one
    /// that is the same path as an earlier one is left out.
    pub fn search_dirs(&self) -> Result<Vec<(Source, PathBuf)>> {
        search_dirs(self.given.as_deref(), &self.dirs)
    }

    /// The file for agent `name` and the directory it came from: the
    /// first directory of [`Agents::search_dirs`] that has `<name>.toml`
    /// (or cannot say it has not: an agents "directory" that is a FIFO or
    /// a file is reported when the agent is read, as for
    /// `<config>/agents`). When none has it, the file a new agent would
    /// get: in `--agents-dir` when given, else in `./axe/agents` when that
    /// directory exists, else in `<config>/agents`.
    pub fn locate(&self, name: &str) -> Result<(Source, PathBuf)> {
        locate(&self.search_dirs()?, name)
    }

    /// Every path whose change could change what [`Agents::load_if_any`]
    /// and config.toml give for `name`, for a cache of what was loaded
    /// ([`axe_base::fresh::Sources`]): `./axe` (whether it is a directory
    /// decides if `./axe/agents` is searched), each directory searched (a
    /// file created, removed or renamed there changes it), `<name>.toml`
    /// where there is one (an edit in place changes only the file), and
    /// config.toml. The fewer, the cheaper each check: a server checks
    /// them at every request.
    pub fn sources(&self, name: &str) -> Result<Vec<PathBuf>> {
        let dirs: Vec<PathBuf> = self.search_dirs()?.into_iter().map(|(_, d)| d).collect();
        let mut paths: Vec<PathBuf> = std::env::current_dir()
            .map(|cwd| cwd.join("axe"))
            .into_iter()
            .collect();
        let file = format!("{name}.toml");
        paths.extend(dirs.iter().map(|d| d.join(&file)).filter(|f| f.exists()));
        paths.extend(dirs);
        paths.push(self.dirs.config()?.join("config.toml"));
        Ok(paths)
    }

    /// The file an agent name stands for (see [`Agents::locate`]); the
    /// name is checked first.
    pub fn file_path(&self, name: &str) -> Result<PathBuf> {
        Ok(self.locate(name)?.1)
    }

    /// The error for an agent file that does not exist, naming the agent
    /// whose name is nearest, when one is near enough to be a typo.
    pub fn not_found(&self, name: &str) -> Error {
        Error::AgentNotFound {
            name: name.to_owned(),
            near: self.near_name(name),
        }
    }

    /// The agent whose name is nearest to `typed`, when one is near
    /// enough to be a typo; any `.toml` file counts, loadable or not.
    pub fn near_name(&self, typed: &str) -> Option<String> {
        let names: Vec<String> = self
            .search_dirs()
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
}

fn search_dirs(given: Option<&Path>, dirs: &Dirs) -> Result<Vec<(Source, PathBuf)>> {
    let mut found: Vec<(Source, PathBuf)> = Vec::new();
    if let Some(dir) = given {
        found.push((Source::AgentsDir, dir.to_owned()));
    }
    // `./axe` that is no directory (a built `axe` binary) is no local
    // agents directory; `./axe/agents` that is not one (a FIFO, a file) is
    // reported as `<config>/agents` would be.
    if let Ok(cwd) = std::env::current_dir()
        && cwd.join("axe").is_dir()
    {
        found.push((Source::Local, cwd.join("axe").join("agents")));
    }
    found.push((Source::Config, dirs.agents()?));
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

fn locate(dirs: &[(Source, PathBuf)], name: &str) -> Result<(Source, PathBuf)> {
    check_name(name)?;
    let file = format!("{name}.toml");
    for (source, dir) in dirs {
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

/// The names of the `.toml` files in `dir` that are agent names, sorted;
/// a missing directory has none.
pub(super) fn stems_in(dir: &Path) -> Result<Vec<String>> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(Error::caused(
                Error::Config(format!(
                    "open {}: {}",
                    dir.display(),
                    axe_base::error::describe_io(&e)
                )),
                e,
            ));
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

    /// Two commands in one process (`axe NAME` runs them in process; a
    /// test) each find agents where they were told to.
    #[test]
    fn two_agents_dirs_in_one_process_keep_their_own() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        for (dir, model) in [(&a, "p/from-a"), (&b, "p/from-b")] {
            fs::create_dir_all(dir).unwrap();
            let text = format!("name = \"x\"\nmodel = \"{model}\"\n");
            fs::write(dir.join("x.toml"), text).unwrap();
        }
        let dirs = Dirs::given(Some(&tmp.path().join("config")), None).unwrap();
        let in_a = Agents::new(dirs.clone(), Some(&a));
        let in_b = Agents::new(dirs.clone(), Some(&b));
        assert_eq!(in_a.file_path("x").unwrap(), a.join("x.toml"));
        assert_eq!(in_b.file_path("x").unwrap(), b.join("x.toml"));
        assert_eq!(in_a.load("x").unwrap().model, "p/from-a");
        assert_eq!(in_b.load("x").unwrap().model, "p/from-b");
        let neither = Agents::new(dirs, None);
        assert!(matches!(
            neither.load("x"),
            Err(Error::AgentNotFound { .. })
        ));
    }

    /// Each command warns of a file's unknown keys once, to its own
    /// reporter; nothing goes to stderr.
    #[test]
    fn unknown_keys_are_told_to_the_agents_reporter_once() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("x.toml");
        fs::write(&file, "name = \"x\"\nmodel = \"p/m\"\nmodle = 1\n").unwrap();
        let dirs = Dirs::given(Some(&tmp.path().join("config")), None).unwrap();
        let report = Arc::new(axe_base::report::Collected::default());
        let one = Agents::new(dirs.clone(), Some(tmp.path())).reporting_to(report.clone());
        let two = Agents::new(dirs, Some(tmp.path())).reporting_to(report.clone());
        one.load("x").unwrap();
        one.load("x").unwrap();
        two.load("x").unwrap();
        let line = format!(
            "Warning: {}:3: unknown key modle, ignored (did you mean model?)",
            file.display()
        );
        assert_eq!(report.lines(), [line.clone(), line]);
    }
}
