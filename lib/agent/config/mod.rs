//! The global `config.toml`: per-provider API keys and base URLs, and the
//! `default_model` of `axe-llm` and `axe-agents init`.
//!
//! Resolution is the Go `axe`'s: an API key comes from the provider's
//! environment variable, then `api_key` in the file, and (new here) then
//! the output of `api_key_cmd`, for password managers; a base URL comes from
//! `AXE_<PROVIDER>_BASE_URL`, then `base_url`, then the provider's default.
//! A missing file is an empty config. Keys no setting takes are warned
//! of, once per process ([`axe_base::unknown`]).
//!
//! The file and its sections are here; where a provider's calls go is
//! `endpoint`, its key `key`, and the credentials memory redacts with
//! the variables axe reads `secrets`.

mod endpoint;
mod key;
mod secrets;

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::Agents;
use axe_base::dirs::Dirs;
use axe_base::error::{Error, Result};
use axe_base::read;
use axe_llm::Provider;

pub use endpoint::{BaseUrl, Endpoints, without_userinfo};
pub use key::KeyCommand;
pub use secrets::{secrets, variables};

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Config {
    /// The model `axe-llm` uses without `-m` and `axe-agents init` writes
    /// without `--model`; empty: none. Read through [`Config::default_model`].
    pub default_model: String,
    pub providers: BTreeMap<String, ProviderConfig>,
    pub memory: MemoryConfig,
    /// `[log]`: what the ledger keeps (`axe_ledger`).
    pub log: axe_ledger::settings::LogConfig,
    /// `[pricing."provider/model"]`: the ledger's prices for providers
    /// that report no cost.
    pub pricing: BTreeMap<String, axe_ledger::settings::Price>,
    /// `[search]`: how notes are searched.
    pub search: SearchConfig,
    /// The file it was read from, for messages; empty for a parsed text.
    #[serde(skip)]
    path: PathBuf,
    /// Whether that file exists.
    #[serde(skip)]
    found: bool,
}

/// `[memory]` of config.toml: what holds for every agent's memory unless
/// its agent file says otherwise.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct MemoryConfig {
    /// Whether credentials are redacted from what memory keeps; unset: on.
    pub redact: Option<bool>,
}

/// `[search]` of config.toml.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct SearchConfig {
    /// A sentence-transformers folder (all-MiniLM-L6-v2, bge-small-en-v1.5):
    /// notes are searched by meaning too. Relative to the config directory.
    pub embeddings: String,
}

/// The embedding model notes are searched with, if any: `AXE_EMBEDDINGS`
/// when set (empty: none, whatever the file says), else `[search]
/// embeddings` of config.toml (relative to the config directory).
pub fn embeddings(dirs: &Dirs) -> Result<Option<PathBuf>> {
    if let Some(dir) = std::env::var_os("AXE_EMBEDDINGS") {
        return Ok((!dir.is_empty()).then(|| PathBuf::from(dir)));
    }
    let (config, _) = load_quietly(dirs)?;
    let dir = config.search.embeddings.trim();
    if dir.is_empty() {
        return Ok(None);
    }
    Ok(Some(dirs.config()?.join(dir)))
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct ProviderConfig {
    pub api_key: String,
    pub base_url: String,
    /// A shell command whose standard output is the key.
    pub api_key_cmd: String,
}

/// Reads `<config>/config.toml` of `agents`' directories; a missing file
/// is an empty config. A FIFO, a device or a file over
/// [`read::TOML_LIMIT`] is an error. The keys no setting takes are warned
/// of, as the agent files' are, once for `agents`.
pub fn load(agents: &Agents) -> Result<Config> {
    let (config, unknown) = load_quietly(agents.dirs())?;
    agents.warn(&config.path, &unknown);
    Ok(config)
}

/// [`load`] with the keys no setting takes given back rather than warned
/// of, for `agents check` to show.
pub fn load_quietly(dirs: &Dirs) -> Result<(Config, Vec<axe_base::unknown::Unknown>)> {
    let path = dirs.config()?.join("config.toml");
    let text = match read::text(&path, read::TOML_LIMIT) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let missing = Config {
                path,
                ..Config::default()
            };
            return Ok((missing, Vec::new()));
        }
        Err(e) => {
            return Err(Error::caused(
                Error::Config(format!(
                    "failed to read config file {}: {}",
                    path.display(),
                    axe_base::error::describe_io(&e)
                )),
                e,
            ));
        }
    };
    let (mut config, unknown) = from_text(&path, &text)?;
    config.path = path;
    config.found = true;
    Ok((config, unknown))
}

pub fn parse(text: &str) -> Result<Config> {
    from_text(Path::new(""), text).map(|(config, _)| config)
}

/// config.toml (`text`, at `path`) read once: its settings, and the keys
/// no setting takes.
fn from_text(path: &Path, text: &str) -> Result<(Config, Vec<axe_base::unknown::Unknown>)> {
    let document = axe_base::unknown::Document::parse(path, text);
    let read = document.and_then(|d| d.read::<Config>());
    read.map(|read| (read.value, read.unknown)).map_err(|e| {
        Error::caused(
            Error::Config(format!(
                "failed to parse config.toml: {}",
                crate::one_line_toml_error(text, &e)
            )),
            e,
        )
    })
}

impl Config {
    /// `default_model`, checked, or `None` when it is not set. A model
    /// string that does not parse is this file's error (exit 2), named as
    /// such: the command line did not give it.
    pub fn default_model(&self) -> Result<Option<&str>> {
        let model = self.default_model.trim();
        if model.is_empty() {
            return Ok(None);
        }
        axe_llm::parse_model(model).map_err(|e| {
            Error::caused(
                Error::Config(format!("default_model in config.toml: {e}")),
                e,
            )
        })?;
        Ok(Some(model))
    }

    fn section(&self, provider: Provider) -> ProviderConfig {
        self.providers
            .get(provider.name())
            .cloned()
            .unwrap_or_default()
    }

    /// The keys written in the file (`api_key`; an `api_key_cmd` is not
    /// run for this).
    pub fn file_keys(&self) -> impl Iterator<Item = &str> {
        self.providers.values().map(|p| p.api_key.trim())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn env(
        pairs: &'static [(&'static str, &'static str)],
    ) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn bad_toml_is_a_config_error() {
        let err = parse("[providers.openai\n").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("failed to parse config.toml: line 1")
        );
        assert_eq!(err.exit_code(), 2);
    }

    /// A config.toml that is no TOML is a config error (exit 2) with the
    /// line it always had, and keeps the toml crate's error beneath it.
    #[test]
    fn a_bad_config_keeps_the_toml_error() {
        use std::error::Error as _;
        let e = parse("[providers\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("failed to parse config.toml: line 1"),
            "{e}"
        );
        assert_eq!(e.exit_code(), 2);
        assert!(e.source().unwrap().is::<axe_base::toml_read::Bad>());
    }
}
