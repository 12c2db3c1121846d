//! Where axe keeps its files: the XDG config and data directories.
//!
//! The rules are the Go `axe`'s, which differ slightly from the XDG spec:
//! a set, non-empty `XDG_*_HOME` is used as is (even when relative), and the
//! data directory falls back to `$HOME/.local/share` on every platform.
//! Nothing here creates a directory.
//!
//! A server started by an MCP client may not see the user's environment
//! (Codex and the MCP Inspector drop `XDG_*`), so `axe-mcp` can name both
//! directories on its command line, which a client passes on unchanged:
//! [`set_overrides`] fixes them for the rest of the process.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::error::{Error, Result};

/// The directories named on the command line, set at most once, before
/// any file is read, so every reader in the process agrees on them.
static CONFIG_OVERRIDE: OnceLock<PathBuf> = OnceLock::new();
static DATA_OVERRIDE: OnceLock<PathBuf> = OnceLock::new();

/// Makes `config` and `data` (each axe's own directory, as [`config_dir`]
/// and [`data_dir`] would give it) win over the environment from now on.
/// A relative path is refused: each client starts its server in a
/// directory of its own choosing, so one would name a different place for
/// each, which is the split this exists to prevent.
pub fn set_overrides(config: Option<&Path>, data: Option<&Path>) -> Result<()> {
    for (dir, flag, cell) in [
        (config, "--config-dir", &CONFIG_OVERRIDE),
        (data, "--data-dir", &DATA_OVERRIDE),
    ] {
        let Some(dir) = dir else { continue };
        if !dir.is_absolute() {
            return Err(Error::Config(format!(
                "{flag} must be an absolute path, not {:?}: an MCP client starts its server \
                 in a directory of its own",
                dir.display().to_string()
            )));
        }
        // Set once per process; a second call (none today) keeps the first.
        let _ = cell.set(dir.to_path_buf());
    }
    Ok(())
}

/// `--config-dir`'s directory when given, else `$XDG_CONFIG_HOME/axe`, else
/// the platform's config dir + `/axe` (`$HOME/.config/axe` on Linux).
pub fn config_dir() -> Result<PathBuf> {
    if let Some(dir) = CONFIG_OVERRIDE.get() {
        return Ok(dir.clone());
    }
    config_dir_from(&|k| std::env::var_os(k))
}

/// `--data-dir`'s directory when given, else `$XDG_DATA_HOME/axe`, else
/// `$HOME/.local/share/axe`.
pub fn data_dir() -> Result<PathBuf> {
    if let Some(dir) = DATA_OVERRIDE.get() {
        return Ok(dir.clone());
    }
    data_dir_from(&|k| std::env::var_os(k), &|| {
        etcetera::home_dir().map_err(|e| e.to_string())
    })
}

/// `$XDG_CACHE_HOME/axe`, else `$HOME/.cache/axe`: what a run may leave
/// behind and anyone may remove (a run's artifacts).
pub fn cache_dir() -> Result<PathBuf> {
    if let Some(dir) = non_empty(std::env::var_os("XDG_CACHE_HOME")) {
        return Ok(PathBuf::from(dir).join("axe"));
    }
    let home = etcetera::home_dir()
        .map_err(|e| Error::Config(format!("unable to determine cache directory: {e}")))?;
    Ok(home.join(".cache").join("axe"))
}

/// `<config>/agents`, where agent files live when no other agents
/// directory is given.
pub fn agents_dir() -> Result<PathBuf> {
    Ok(config_dir()?.join("agents"))
}

/// [`config_dir`] with the environment passed in, so it can be tested
/// without touching the process environment.
pub fn config_dir_from(env: &dyn Fn(&str) -> Option<OsString>) -> Result<PathBuf> {
    if let Some(dir) = non_empty(env("XDG_CONFIG_HOME")) {
        return Ok(PathBuf::from(dir).join("axe"));
    }
    let home = etcetera::home_dir()
        .map_err(|e| Error::Config(format!("unable to determine config directory: {e}")))?;
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
    home: &dyn Fn() -> Result<PathBuf, String>,
) -> Result<PathBuf> {
    if let Some(dir) = non_empty(env("XDG_DATA_HOME")) {
        return Ok(PathBuf::from(dir).join("axe"));
    }
    let home =
        home().map_err(|e| Error::Config(format!("unable to determine data directory: {e}")))?;
    Ok(home.join(".local").join("share").join("axe"))
}

fn non_empty(v: Option<OsString>) -> Option<OsString> {
    v.filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_with(key: &'static str, val: &'static str) -> impl Fn(&str) -> Option<OsString> {
        move |k| (k == key).then(|| OsString::from(val))
    }

    fn home() -> Result<PathBuf, String> {
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
    fn data_dir_home_error_is_wrapped() {
        let err = data_dir_from(&|_| None, &|| Err("$HOME is not defined".into())).unwrap_err();
        assert_eq!(
            err.to_string(),
            "unable to determine data directory: $HOME is not defined"
        );
        assert_eq!(err.exit_code(), 2);
    }

    #[test]
    fn config_dir_xdg_config_home_set() {
        let got = config_dir_from(&env_with("XDG_CONFIG_HOME", "/cfg")).unwrap();
        assert_eq!(got, PathBuf::from("/cfg/axe"));
    }
}
