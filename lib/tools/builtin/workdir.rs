//! Which directory the workdir tools may be given without being told.
//! The current directory is only a default, and often the wrong one: a
//! systemd service starts in `/`, a shell in the home. Given either, the
//! file tools would read and write everything there (keys in `~/.ssh`,
//! another agent's memory) and bubblewrap would bind it writable. So a
//! current directory that is `/`, the home, or one that holds the home or
//! axe's config, data or cache directory is refused; named (`--workdir`,
//! the agent file's `workdir`), it is what the user asked for.

use crate::error::ToolError;
use std::path::{Path, PathBuf};

use super::BUILTIN;
use axe_base::dirs::Dirs;

/// Whether the current directory `dir` may be the workdir of `tools`:
/// why not, in one line saying how to name it, when it may not; `dirs`
/// are axe's own, which it must not hold.
pub fn unnamed(dirs: &Dirs, dir: &Path, tools: &[String]) -> Result<(), ToolError> {
    let in_workdir = |name: &String| BUILTIN.iter().any(|t| t.workdir && t.name == name);
    if !tools.iter().any(in_workdir) {
        return Ok(());
    }
    let Some(why) = too_wide(dirs, &real(dir)) else {
        return Ok(());
    };
    let dir = dir.display();
    Err(format!(
        "refusing the current directory {dir} as the workdir of tools: it {why}; \
         name it to use it (--workdir {dir}, or workdir in the agent file)"
    )
    .into())
}

/// Whether the workdir `dir` is the whole filesystem.
pub fn whole_filesystem(dir: &Path) -> bool {
    real(dir) == Path::new("/")
}

/// What `dir` (a real path) holds that a workdir must not, unless named.
fn too_wide(dirs: &Dirs, dir: &Path) -> Option<String> {
    if dir == Path::new("/") {
        return Some("is the whole filesystem".into());
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let kept = [
        (home, "the home directory"),
        (dirs.config().ok(), "axe's config directory"),
        (dirs.data().ok(), "axe's data directory"),
        (dirs.cache().ok(), "axe's cache directory"),
    ];
    kept.into_iter()
        .filter_map(|(path, name)| Some((real(&path?), name)))
        // A relative `HOME` or `XDG_*` names nothing to compare with.
        .filter(|(path, _)| path.is_absolute())
        .find(|(path, _)| path.starts_with(dir))
        .map(|(path, name)| match path == dir {
            true => format!("is {name}"),
            false => format!("holds {name} {}", path.display()),
        })
}

/// `path` with its symlinks resolved, as far as it exists: a directory
/// not made yet (axe's cache) is still where it will be.
fn real(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut at = path;
    loop {
        if let Ok(found) = std::fs::canonicalize(at) {
            return rest.iter().rev().fold(found, |p, name| p.join(name));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                at = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_outside_the_workdir_take_any() {
        let web = vec!["url_fetch".to_owned(), "web_search".to_owned()];
        let dirs = Dirs::from_env();
        assert!(unnamed(&dirs, Path::new("/"), &web).is_ok());
        assert!(unnamed(&dirs, Path::new("/"), &[]).is_ok());
        let files = vec!["read_file".to_owned()];
        assert!(unnamed(&dirs, Path::new("/"), &files).is_err());
    }

    /// Each caller's own directories are what a workdir may not hold:
    /// two in one process (two servers, two runs) do not see each other's.
    #[test]
    fn the_directories_kept_out_are_the_callers() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        std::fs::create_dir_all(a.join("data")).unwrap();
        std::fs::create_dir_all(b.join("data")).unwrap();
        let files = vec!["read_file".to_owned()];
        let of = |root: &Path| Dirs::given(Some(&root.join("config")), Some(&root.join("data")));
        let (dirs_a, dirs_b) = (of(&a).unwrap(), of(&b).unwrap());
        let err = unnamed(&dirs_a, &a, &files).unwrap_err().to_string();
        assert!(err.contains("holds axe's config directory"), "{err}");
        assert!(unnamed(&dirs_b, &a, &files).is_ok());
        assert!(unnamed(&dirs_a, &b, &files).is_ok());
    }

    #[test]
    fn a_missing_tail_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let real_dir = std::fs::canonicalize(dir.path()).unwrap();
        assert_eq!(real(&dir.path().join("a/b")), real_dir.join("a/b"));
        assert!(whole_filesystem(Path::new("/.")));
        assert!(!whole_filesystem(dir.path()));
    }
}
