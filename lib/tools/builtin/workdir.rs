//! Which directory the workdir tools may be given without being told.
//! The current directory is only a default, and often the wrong one: a
//! systemd service starts in `/`, a shell in the home. Given either, the
//! file tools would read and write everything there (keys in `~/.ssh`,
//! another agent's memory) and bubblewrap would bind it writable. So a
//! current directory that is `/`, the home, or one that holds the home or
//! axe's config, data or cache directory is refused; named (`--workdir`,
//! the agent file's `workdir`), it is what the user asked for.

use std::path::{Path, PathBuf};

use super::BUILTIN;

/// Whether the current directory `dir` may be the workdir of `tools`:
/// why not, in one line saying how to name it, when it may not.
pub fn unnamed(dir: &Path, tools: &[String]) -> Result<(), String> {
    let in_workdir = |name: &String| BUILTIN.iter().any(|t| t.workdir && t.name == name);
    if !tools.iter().any(in_workdir) {
        return Ok(());
    }
    let Some(why) = too_wide(&real(dir)) else {
        return Ok(());
    };
    let dir = dir.display();
    Err(format!(
        "refusing the current directory {dir} as the workdir of tools: it {why}; \
         name it to use it (--workdir {dir}, or workdir in the agent file)"
    ))
}

/// Whether the workdir `dir` is the whole filesystem.
pub fn whole_filesystem(dir: &Path) -> bool {
    real(dir) == Path::new("/")
}

/// What `dir` (a real path) holds that a workdir must not, unless named.
fn too_wide(dir: &Path) -> Option<String> {
    if dir == Path::new("/") {
        return Some("is the whole filesystem".into());
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let kept = [
        (home, "the home directory"),
        (axe_base::dirs::config_dir().ok(), "axe's config directory"),
        (axe_base::dirs::data_dir().ok(), "axe's data directory"),
        (axe_base::dirs::cache_dir().ok(), "axe's cache directory"),
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
        assert!(unnamed(Path::new("/"), &web).is_ok());
        assert!(unnamed(Path::new("/"), &[]).is_ok());
        let files = vec!["read_file".to_owned()];
        assert!(unnamed(Path::new("/"), &files).is_err());
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
