//! Where axe keeps its files: the XDG config and data directories.
//!
//! The rules are the Go `axe`'s, which differ slightly from the XDG spec:
//! a set, non-empty `XDG_*_HOME` is used as is (even when relative), and the
//! data directory falls back to `$HOME/.local/share` on every platform.
//! Nothing here creates a directory.
//!
//! A server started by an MCP client may not see the user's environment
//! (Codex and the MCP Inspector drop `XDG_*`), so `axe-mcp` can name both
//! directories on its command line, which a client passes on unchanged.
//! A command resolves them once into a [`Dirs`] and hands it down to
//! everything that reads or writes there: no global is set, so two
//! [`Dirs`] in one process (two servers, a test) each keep their own.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use etcetera::HomeDirError;

use crate::error::{Error, Result};

/// axe's own directories for one command: those named on its command
/// line, else the environment's. Each is looked up when asked for, so a
/// command that never needs one does not fail for want of `$HOME`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dirs {
    config: Option<PathBuf>,
    data: Option<PathBuf>,
}

impl Dirs {
    /// The environment's directories (`XDG_*`, `$HOME`).
    pub fn from_env() -> Dirs {
        Dirs::default()
    }

    /// `config` and `data` (each axe's own directory, as [`Dirs::config`]
    /// and [`Dirs::data`] would give it) over the environment's. A
    /// relative path is refused: each client starts its server in a
    /// directory of its own choosing, so one would name a different place
    /// for each, which is the split this exists to prevent.
    pub fn given(config: Option<&Path>, data: Option<&Path>) -> Result<Dirs> {
        for (dir, flag) in [(config, "--config-dir"), (data, "--data-dir")] {
            let Some(dir) = dir else { continue };
            if !dir.is_absolute() {
                return Err(DirsError::Relative {
                    flag,
                    dir: dir.to_path_buf(),
                }
                .into());
            }
        }
        Ok(Dirs {
            config: config.map(Path::to_path_buf),
            data: data.map(Path::to_path_buf),
        })
    }

    /// `--config-dir`'s directory when given, else `$XDG_CONFIG_HOME/axe`,
    /// else the platform's config dir + `/axe` (`$HOME/.config/axe` on
    /// Linux).
    pub fn config(&self) -> Result<PathBuf> {
        match &self.config {
            Some(dir) => Ok(dir.clone()),
            None => config_dir_from(&|k| std::env::var_os(k)),
        }
    }

    /// `--data-dir`'s directory when given, else `$XDG_DATA_HOME/axe`,
    /// else `$HOME/.local/share/axe`.
    pub fn data(&self) -> Result<PathBuf> {
        match &self.data {
            Some(dir) => Ok(dir.clone()),
            None => data_dir_from(&|k| std::env::var_os(k), &etcetera::home_dir),
        }
    }

    /// `<config>/agents`, where agent files live when no other agents
    /// directory is given.
    pub fn agents(&self) -> Result<PathBuf> {
        Ok(self.config()?.join("agents"))
    }

    /// What a run may leave behind and anyone may remove: [`cache_dir`].
    pub fn cache(&self) -> Result<PathBuf> {
        cache_dir()
    }
}

/// `$XDG_CACHE_HOME/axe`, else `$HOME/.cache/axe`: what a run may leave
/// behind and anyone may remove (a run's artifacts).
pub fn cache_dir() -> Result<PathBuf> {
    if let Some(dir) = non_empty(std::env::var_os("XDG_CACHE_HOME")) {
        return Ok(PathBuf::from(dir).join("axe"));
    }
    let home = etcetera::home_dir().map_err(|e| DirsError::NoHome("cache", e))?;
    Ok(home.join(".cache").join("axe"))
}

/// [`config_dir`] with the environment passed in, so it can be tested
/// without touching the process environment.
pub fn config_dir_from(env: &dyn Fn(&str) -> Option<OsString>) -> Result<PathBuf> {
    if let Some(dir) = non_empty(env("XDG_CONFIG_HOME")) {
        return Ok(PathBuf::from(dir).join("axe"));
    }
    let home = etcetera::home_dir().map_err(|e| DirsError::NoHome("config", e))?;
    Ok(platform_config_dir(home).join("axe"))
}

/// Go's `os.UserConfigDir` without `XDG_CONFIG_HOME`.
fn platform_config_dir(home: PathBuf) -> PathBuf {
    if cfg!(target_os = "macos") {
        home.join("Library").join("Application Support")
    } else if cfg!(windows) {
        home.join("AppData").join("Roaming")
    } else {
        home.join(".config")
    }
}

/// [`data_dir`] with the environment and home lookup passed in.
pub fn data_dir_from(
    env: &dyn Fn(&str) -> Option<OsString>,
    home: &dyn Fn() -> Result<PathBuf, HomeDirError>,
) -> Result<PathBuf> {
    if let Some(dir) = non_empty(env("XDG_DATA_HOME")) {
        return Ok(PathBuf::from(dir).join("axe"));
    }
    let home = home().map_err(|e| DirsError::NoHome("data", e))?;
    Ok(home.join(".local").join("share").join("axe"))
}

fn non_empty(v: Option<OsString>) -> Option<OsString> {
    v.filter(|v| !v.is_empty())
}

/// Why axe's directories are not known. Reported as a config error
/// (exit 2), Go's lines.
#[derive(Debug, thiserror::Error)]
pub enum DirsError {
    /// No `$HOME` to put the named directory (`config`, `data`, `cache`)
    /// under.
    #[error("unable to determine {0} directory: {1}")]
    NoHome(&'static str, #[source] HomeDirError),
    /// `--config-dir` or `--data-dir` given a relative path.
    #[error(
        "{flag} must be an absolute path, not {:?}: an MCP client starts its server \
         in a directory of its own",
        .dir.display().to_string()
    )]
    Relative { flag: &'static str, dir: PathBuf },
}

impl From<DirsError> for Error {
    fn from(e: DirsError) -> Error {
        Error::caused(Error::Config(e.to_string()), e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_with(key: &'static str, val: &'static str) -> impl Fn(&str) -> Option<OsString> {
        move |k| (k == key).then(|| OsString::from(val))
    }

    fn home() -> Result<PathBuf, HomeDirError> {
        Ok(PathBuf::from("/home/u"))
    }

    #[test]
    fn data_dir_xdg_data_home_set() {
        let dir = tempfile::tempdir().unwrap();
        let val: &'static str = dir.path().to_str().unwrap().to_owned().leak();
        let got = data_dir_from(&env_with("XDG_DATA_HOME", val), &home).unwrap();
        assert_eq!(got, dir.path().join("axe"));
    }

    #[test]
    fn data_dir_xdg_data_home_empty() {
        let got = data_dir_from(&env_with("XDG_DATA_HOME", ""), &home).unwrap();
        assert_eq!(got, PathBuf::from("/home/u/.local/share/axe"));
    }

    #[test]
    fn data_dir_xdg_data_home_unset() {
        let got = data_dir_from(&|_| None, &home).unwrap();
        assert_eq!(got, PathBuf::from("/home/u/.local/share/axe"));
    }

    #[test]
    fn data_dir_does_not_create_directory() {
        let dir = tempfile::tempdir().unwrap();
        let val: &'static str = dir.path().to_str().unwrap().to_owned().leak();
        let got = data_dir_from(&env_with("XDG_DATA_HOME", val), &home).unwrap();
        assert!(!got.exists());
    }

    #[test]
    fn config_dir_xdg_config_home_set() {
        let got = config_dir_from(&env_with("XDG_CONFIG_HOME", "/cfg")).unwrap();
        assert_eq!(got, PathBuf::from("/cfg/axe"));
    }

    #[test]
    fn two_dirs_in_one_process_keep_their_own() {
        let a = Dirs::given(Some(Path::new("/ca")), Some(Path::new("/a"))).unwrap();
        let b = Dirs::given(Some(Path::new("/cb")), Some(Path::new("/b"))).unwrap();
        assert_eq!(a.data().unwrap(), PathBuf::from("/a"));
        assert_eq!(b.data().unwrap(), PathBuf::from("/b"));
        assert_eq!(a.agents().unwrap(), PathBuf::from("/ca/agents"));
        assert_eq!(b.agents().unwrap(), PathBuf::from("/cb/agents"));
    }

    #[test]
    fn a_relative_dir_is_refused() {
        let err = Dirs::given(None, Some(Path::new("rel"))).unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert!(
            err.to_string()
                .starts_with("--data-dir must be an absolute path")
        );
    }

    /// No home: the config error names the directory and keeps
    /// etcetera's error as its cause.
    #[test]
    fn no_home_is_a_config_error_with_its_cause() {
        use std::error::Error as _;
        let e = data_dir_from(&|_| None, &|| Err(HomeDirError)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unable to determine data directory: could not locate home directory"
        );
        assert_eq!(e.exit_code(), 2);
        let typed = e.source().unwrap();
        assert!(matches!(
            typed.downcast_ref::<DirsError>(),
            Some(DirsError::NoHome("data", _))
        ));
        assert!(typed.source().unwrap().is::<HomeDirError>());
    }
}
