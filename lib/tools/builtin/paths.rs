//! Where a file tool's path leads: walked from the handle of the workdir
//! (or the artifact directory) by [`axe_base::beneath`], so that `..` above
//! it, an absolute path, a symlink out or a directory swapped for one
//! meanwhile never reach outside. Errors are Go's words.

use crate::error::ToolError;
use std::ffi::OsString;
use std::io;
use std::path::Path;

use super::act::Act;
use axe_base::beneath::{self, Dir};
use axe_base::dirs::Dirs;

/// The directory a call works in, and its name in messages.
pub struct Base<'a> {
    pub root: &'a Path,
    pub label: &'static str,
    /// Whether it is the artifact directory.
    pub artifact: bool,
    /// axe's own directories, kept out of ([`private`]).
    pub dirs: &'a Dirs,
}

/// The directory a call works in: the artifact directory when its
/// `artifact` argument says so (or, left out, when `default` does).
pub fn base(act: &Act, artifact: Option<bool>, default: bool) -> Result<Base<'_>, ToolError> {
    let artifact = artifact.unwrap_or(default);
    if !artifact {
        return Ok(Base {
            root: &act.workdir,
            label: "workdir",
            artifact,
            dirs: &act.dirs,
        });
    }
    match &act.artifacts {
        Some(a) => Ok(Base {
            root: &a.dir,
            label: "artifact directory",
            artifact,
            dirs: &act.dirs,
        }),
        None => Err("artifact directory not configured for this agent".into()),
    }
}

/// `rel` checked as a path a model may name: given, and relative.
fn relative(rel: &str) -> Result<&Path, ToolError> {
    if rel.is_empty() {
        return Err("path is required".into());
    }
    let path = Path::new(rel);
    if path.is_absolute() {
        return Err("absolute paths are not allowed".into());
    }
    Ok(path)
}

fn root(base: &Base) -> Result<Dir, ToolError> {
    match Dir::root(base.root, false) {
        Ok(Some(dir)) => Ok(dir),
        Ok(None) => {
            Err(format!("the {} {} does not exist", base.label, base.root.display()).into())
        }
        Err(e) => Err(ToolError::caused(
            format!(
                "open the {}: {}",
                base.label,
                axe_base::error::describe_io(&e)
            ),
            e,
        )),
    }
}

/// The directory holding the file `rel` and its name there (a symlink
/// as the file itself resolved inside); with `create`, missing
/// directories on the way are made.
pub fn file(base: &Base, rel: &str, create: bool) -> Result<(Dir, OsString), ToolError> {
    let path = relative(rel)?;
    let root = root(base)?;
    if create {
        made_in_private(base, &root, path)?;
    }
    match root.file(path, create) {
        Ok(Some(found)) => {
            gate();
            private(base, &found.0)?;
            Ok(found)
        }
        Ok(None) => Err(format!("open {rel}: no such file or directory").into()),
        Err(e) if e.kind() == io::ErrorKind::IsADirectory => {
            Err("path is a directory, not a file".into())
        }
        Err(e) => Err(failed(base, rel, e)),
    }
}

/// A pause for axe's own tests, between finding a file's directory and
/// using it, so a test can swap the path meanwhile: with
/// `AXE_TEST_TOOL_GATE` naming a FIFO, the tool waits until the test has
/// opened it and closed it again. Only builds with the `test-hooks`
/// feature (the tests' own) have it.
fn gate() {
    #[cfg(feature = "test-hooks")]
    if let Some(fifo) = std::env::var_os("AXE_TEST_TOOL_GATE") {
        let _ = std::fs::read(fifo);
    }
}

/// The directory `rel`.
pub fn dir(base: &Base, rel: &str) -> Result<Dir, ToolError> {
    let path = relative(rel)?;
    match root(base)?.dir(path, false) {
        Ok(Some(dir)) => private(base, &dir).map(|()| dir),
        Ok(None) => Err(format!("open {rel}: no such file or directory").into()),
        Err(e) => Err(failed(base, rel, e)),
    }
}

/// Refuses `dir` when it is in axe's config or data directory (keys,
/// every agent's memory) and the workdir holds that directory, as a
/// workdir that is the home does: the tools reach what the agent was
/// given, not axe's own files, as commands under bubblewrap do not. A
/// workdir inside one of them is the user's choice, and kept.
fn private(base: &Base, dir: &Dir) -> Result<(), ToolError> {
    let Some(at) = dir.real_path() else {
        return Ok(());
    };
    let root = std::fs::canonicalize(base.root).unwrap_or_else(|_| base.root.to_path_buf());
    let own = [base.dirs.config(), base.dirs.data()];
    let hidden = own
        .into_iter()
        .flatten()
        .filter_map(|d| std::fs::canonicalize(d).ok())
        .any(|d| at.starts_with(&d) && !root.starts_with(&d));
    match hidden {
        true => Err(format!(
            "path is in axe's own config or data directory, which the {} holds",
            base.label
        )
        .into()),
        false => Ok(()),
    }
}

/// Refuses a write to `path` that would make its missing directories in
/// axe's own ([`private`]): the deepest of its directories already there
/// is checked before any is made.
fn made_in_private(base: &Base, root: &Dir, path: &Path) -> Result<(), ToolError> {
    let mut parent = path.parent();
    while let Some(dir) = parent {
        if let Ok(Some(found)) = root.dir(dir, false) {
            return private(base, &found);
        }
        parent = dir.parent();
    }
    Ok(())
}

/// The message for an error reaching `rel`.
pub fn failed(base: &Base, rel: &str, err: io::Error) -> ToolError {
    let text = if beneath::is_outside(&err) {
        format!("path escapes {}", base.label)
    } else if let Some(p) = beneath::not_a_dir(&err) {
        let inside = p.strip_prefix(base.root).unwrap_or(p);
        format!("{} is not a directory", inside.display())
    } else {
        format!("{rel}: {}", axe_base::error::describe_io(&err))
    };
    ToolError::caused(text, err)
}
