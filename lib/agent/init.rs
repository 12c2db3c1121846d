//! What `axe-config init` and `axe-agents init` write: the config
//! directory's skeleton and new agent files, never replacing a file that is
//! already there.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::{Agents, Fill, scaffold_with};
use axe_base::dirs::Dirs;
use axe_base::error::{Error, Result, describe_io};

/// The commented `config.toml` that `config init` writes (mode 0600: it is
/// where API keys go).
pub const CONFIG_TOML: &str = r#"# axe global configuration: API keys and base URLs of the LLM providers.
# Uncomment the section of the provider you use. Agents name their model
# as provider/model: anthropic/claude-sonnet-4-20250514, openai/gpt-4o,
# ollama/llama3.
#
# Environment variables win over this file:
#   API key:  <PROVIDER>_API_KEY        (e.g. ANTHROPIC_API_KEY)
#   Base URL: AXE_<PROVIDER>_BASE_URL   (e.g. AXE_OPENAI_BASE_URL)
# api_key_cmd runs a shell command and uses its output as the key, so the
# key can stay in a password manager.

# The model axe-llm uses without -m, and axe-agents init writes into a new
# agent without --model.
# default_model = "anthropic/claude-sonnet-4-20250514"

# Anthropic's hosted API.
# [providers.anthropic]
# api_key = "sk-ant-..."
# api_key_cmd = "pass show anthropic"

# OpenAI's hosted API, or an OpenAI-compatible server of your own
# (llama.cpp's llama-server, vLLM, LM Studio): set base_url, with or
# without /v1. A server of your own needs no key unless it asks for one.
# [providers.openai]
# api_key = "sk-..."
# base_url = "http://localhost:8080/v1"

# Ollama on this machine or another; no key.
# [providers.ollama]
# base_url = "http://localhost:11434"

# OpenRouter: openrouter/<its own model name>, e.g.
# openrouter/anthropic/claude-sonnet-4 (key also from OPENROUTER_API_KEY).
# [providers.openrouter]
# api_key = "sk-or-..."

# Google Gemini: google/gemini-2.5-flash (key also from GEMINI_API_KEY).
# [providers.google]
# api_key = "..."

# OpenAI-compatible gateways: requesty/<model> (key also from
# REQUESTY_API_KEY), atlascloud/<model> (ATLASCLOUD_API_KEY), edenai/<model>
# (EDENAI_API_KEY).
# [providers.requesty]
# api_key = "..."
# [providers.atlascloud]
# api_key = "..."
# [providers.edenai]
# api_key = "..."

# What memory keeps (run logs, notes, state) has credentials replaced by
# markers such as [redacted: github token]; false keeps them, for every
# agent whose file does not say otherwise.
# [memory]
# redact = true

# Search by meaning too (notes: axe-notes-search, search_notes): a local
# sentence-transformers folder such as all-MiniLM-L6-v2, relative to this
# directory; AXE_EMBEDDINGS wins over it. See docs/guide/meaning.md.
# [search]
# embeddings = "models/all-MiniLM-L6-v2"

# The ledger (axe-log): one line per model call under <data>/axe/ledger/.
# text keeps each call's prompt and answer, redacted (default: no text);
# past max_bytes a month's file goes on in YYYY-MM.2.jsonl. conversations
# = false keeps a run's turn only when it asks (-c, --cid, axe-chat).
# [log]
# text = false
# max_bytes = 67108864
# conversations = true

# Prices for the ledger's cost, US dollars per million tokens, for
# providers that report no cost themselves (OpenRouter does); applied
# when axe-log reads the ledger, so they price past calls too.
# [pricing."anthropic/claude-sonnet-4-20250514"]
# input = 3.0
# output = 15.0
# cache_read = 0.3
# cache_write = 3.75
"#;

/// `skills/sample/SKILL.md`: a skill to copy from.
pub const SAMPLE_SKILL: &str = r###"# Sample skill

A skill is a markdown file of instructions that `axe-run` puts into the
agent's system prompt under "## Skill". Point an agent at one with
`skill = "skills/sample/SKILL.md"` (relative to the config directory) or
with `axe-run --skill PATH`.

## Purpose

Say in one or two sentences what the agent does with this skill.

## Instructions

1. Read the task and any context files before answering.
2. Work step by step; state assumptions you make.
3. Keep the answer short and concrete.

## Output format

Describe the shape of the answer: a list, a table, a patch, a verdict.
"###;

/// What `config init` did: the directory and the files it created (an
/// existing file is left alone and not listed).
pub struct ConfigInit {
    pub config_dir: PathBuf,
    pub created: Vec<PathBuf>,
}

/// Creates `agents/`, `skills/sample/SKILL.md` and `config.toml` under the
/// config directory, keeping whatever already exists.
pub fn config(dirs: &Dirs) -> Result<ConfigInit> {
    let config_dir = dirs.config()?;
    let mut created = Vec::new();
    let agents = config_dir.join("agents");
    mkdir(&agents, "agents")?;
    let sample = config_dir.join("skills").join("sample");
    mkdir(&sample, "skills/sample")?;
    let files = [
        (sample.join("SKILL.md"), SAMPLE_SKILL, 0o644, "SKILL.md"),
        (
            config_dir.join("config.toml"),
            CONFIG_TOML,
            0o600,
            "config.toml",
        ),
    ];
    for (path, text, mode, what) in files {
        match write_new(&path, text, mode) {
            Ok(()) => created.push(path),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(write_failed(what, &path, e)),
        }
    }
    Ok(ConfigInit {
        config_dir,
        created,
    })
}

/// Writes the scaffold of a new agent `name`, filled in with `fill`, and
/// returns its path; an existing file is an error and stays as it was. The
/// exclusive create is the only check, so a file made a moment ago by
/// someone else counts too.
pub fn agent(agents: &Agents, name: &str, fill: Fill) -> Result<PathBuf> {
    let path = agents.file_path(name)?;
    if let Some(dir) = path.parent() {
        mkdir(dir, "agents")?;
    }
    match write_new(&path, &scaffold_with(name, fill), 0o644) {
        Ok(()) => Ok(path),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(Error::caused(
            Error::Config(format!("agent config already exists: {}", path.display())),
            e,
        )),
        Err(e) => Err(write_failed("agent config", &path, e)),
    }
}

fn mkdir(dir: &Path, what: &str) -> Result<()> {
    fs::create_dir_all(dir).map_err(|e| {
        Error::caused(
            Error::Config(format!(
                "failed to create {what} directory: mkdir {}: {}",
                dir.display(),
                describe_io(&e)
            )),
            e,
        )
    })
}

fn write_failed(what: &str, path: &Path, e: io::Error) -> Error {
    Error::caused(
        Error::Config(format!(
            "failed to write {what}: open {}: {}",
            path.display(),
            describe_io(&e)
        )),
        e,
    )
}

/// Creates `path` with `text`; fails with `AlreadyExists` instead of
/// replacing a file, even one created a moment ago by someone else. A write
/// that fails half way removes the file, so nothing half-written stays.
fn write_new(path: &Path, text: &str, mode: u32) -> io::Result<()> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, mode);
    #[cfg(not(unix))]
    let _ = mode;
    let mut file = options.open(path)?;
    let written = file
        .write_all(text.as_bytes())
        .and_then(|()| file.sync_all());
    if let Err(e) = written {
        drop(file);
        let _ = fs::remove_file(path);
        return Err(e);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_template_is_valid_toml_with_nothing_set() {
        let cfg = crate::config::parse(CONFIG_TOML).unwrap();
        assert!(cfg.providers.is_empty());
        assert_eq!(cfg.default_model().unwrap(), None);
        // Uncommented, it is a model the toolkit takes.
        let set = CONFIG_TOML.replace("# default_model", "default_model");
        let cfg = crate::config::parse(&set).unwrap();
        assert!(cfg.default_model().unwrap().is_some());
    }

    #[test]
    fn write_new_never_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        write_new(&path, "one", 0o600).unwrap();
        let e = write_new(&path, "two", 0o600).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read_to_string(&path).unwrap(), "one");
    }

    #[test]
    fn config_template_shows_every_setting_and_provider() {
        use crate::config::Config;
        use axe_base::unknown::{fields_at, find};
        // Every setting uncommented, as a user who fills all in has it.
        let shown: String = CONFIG_TOML
            .lines()
            .map(|l| match l.strip_prefix("# ") {
                Some(rest) if rest.starts_with('[') || rest.contains(" = ") => rest,
                _ => l,
            })
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(find::<Config>(Path::new("config.toml"), &shown), []);
        let table: toml::Table = toml::from_str(&shown).unwrap();
        let keys = |t: &toml::Value| -> Vec<String> {
            t.as_table()
                .map_or_else(Vec::new, |t| t.keys().cloned().collect())
        };
        for &key in fields_at::<Config>(&[]).unwrap() {
            assert!(table.contains_key(key), "{key} is not in the template");
        }
        for &key in fields_at::<Config>(&["memory"]).unwrap() {
            assert!(
                keys(&table["memory"]).iter().any(|k| k == key),
                "memory.{key}"
            );
        }
        let providers = &table["providers"];
        for name in axe_llm::names() {
            assert!(
                keys(providers).iter().any(|k| k == name),
                "[providers.{name}]"
            );
        }
        let shown_keys: Vec<String> = keys(providers)
            .iter()
            .flat_map(|p| keys(&providers[p.as_str()]))
            .collect();
        for &key in fields_at::<Config>(&["providers", "openai"]).unwrap() {
            assert!(shown_keys.iter().any(|k| k == key), "providers.*.{key}");
        }
    }
}
