//! What an agent file holds: [`AgentConfig`] and its sections, as serde
//! reads them (the memory kinds' sections are theirs, in `axe_memory`),
//! and [`parse`], whose errors are one line with their position.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use axe_base::count::Count;
use axe_base::error::Result;
use axe_base::toml_read::Bad;
use axe_llm::{Backoff, ResponseFormat, RetryPolicy, retry};
use axe_memory::Settings;
pub use axe_tool_settings::mcp::McpServer;

/// A parsed agent file. Counts are [`Count`]s, so that negative values
/// reach validation and get Go's message instead of a parser error.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct AgentConfig {
    pub name: String,
    pub description: String,
    pub model: String,
    pub system_prompt: String,
    pub skill: String,
    pub files: Vec<String>,
    pub workdir: String,
    pub sub_agents: Vec<String>,
    pub sub_agents_config: SubAgentsConfig,
    /// MCP servers whose tools the model is offered.
    pub mcp_servers: Vec<McpServer>,
    /// Seconds for the whole run; 0 is the default (120). `axe-run
    /// --timeout` wins when given.
    pub timeout: Count,
    /// Stream the answer as `--stream` does (either one is enough).
    pub stream: bool,
    pub retry: RetryConfig,
    pub budget: BudgetConfig,
    /// Its memory sections (`[memory]` the run log's, `[notes]`,
    /// `[state]`, `[context]`), one field a kind, taken whole: [`parse`]
    /// reads them from the same text (serde's `flatten` would read them
    /// through a buffer that loses every error's position), JSON shows
    /// them at the top, as the file has them.
    #[serde(flatten, skip_deserializing)]
    pub memory: Settings,
    pub params: ParamsConfig,
    /// Built-in tools offered to the model (`read_file`, `run_command`,
    /// ...); a name not in [`axe_tool_settings::builtin::NAMES`] is a config
    /// error.
    pub tools: Vec<String>,
    /// Hosts `url_fetch` may reach (exact, any case, any port); empty:
    /// any public host, or the parent's list for a sub-agent.
    pub allowed_hosts: Vec<String>,
    pub artifacts: ArtifactsConfig,
    pub sandbox: SandboxConfig,
}

/// `[artifacts]`: a directory for files an agent makes for its caller
/// rather than in its workdir.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct ArtifactsConfig {
    pub enabled: bool,
    /// Empty: a directory for this run under the cache directory, removed
    /// after it unless `--keep-artifacts`. Relative: from the workdir;
    /// `~` and `$VAR` expanded.
    pub dir: String,
    /// The file tools work in the artifact directory unless a call says
    /// `artifact = false`.
    pub default_write: bool,
}

/// `[sandbox]`: how `run_command` is held.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct SandboxConfig {
    /// `auto` (bubblewrap where it runs, else Landlock), `bwrap` or
    /// `landlock`.
    pub engine: axe_tool_settings::sandbox::Engine,
    /// Refuse to run commands without the engine (either, for `auto`).
    pub require: bool,
    /// Keep the network inside the sandbox.
    pub network: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct SubAgentsConfig {
    pub max_depth: Count,
    /// Absent means true; kept optional so `agents show` can tell. JSON
    /// shows the value in effect.
    #[serde(serialize_with = "in_effect")]
    pub parallel: Option<bool>,
    /// Seconds; 0 is no limit of the sub-agent's own.
    pub timeout: Count,
    /// The most tool calls (and MCP server starts) running at once in the
    /// whole run, sub-agents included; 0 is the default (8). The top-level
    /// agent's holds for its tree.
    pub max_parallel: Count,
}

/// The most `max_parallel` may be: beyond it the run's pool
/// (`run::pool`) no longer keeps a machine's threads, processes and open
/// files in bounds.
pub const MAX_PARALLEL: u64 = 64;

/// `[retry]`: calling the provider again after a rate limit, an overload,
/// a 5xx or a dropped connection. 0 delays are the defaults (500, 30000).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct RetryConfig {
    pub max_retries: Count,
    /// `exponential` (the default, with jitter), `linear` or `fixed`.
    pub backoff: String,
    pub initial_delay_ms: Count,
    pub max_delay_ms: Count,
}

impl RetryConfig {
    /// The policy in effect; call only on a validated config.
    pub fn policy(&self) -> RetryPolicy {
        let ms = |n: Count, default| match n.get() {
            0 => default,
            n => std::time::Duration::from_millis(n),
        };
        RetryPolicy {
            max_retries: u32::try_from(self.max_retries.get()).unwrap_or(u32::MAX),
            backoff: Backoff::parse(&self.backoff).unwrap_or(Backoff::Exponential),
            initial_delay: ms(self.initial_delay_ms, retry::DEFAULT_INITIAL_DELAY),
            max_delay: ms(self.max_delay_ms, retry::DEFAULT_MAX_DELAY),
        }
    }
}

/// `[budget]`: the most tokens (input and output, every turn and
/// sub-agent) a run may use; 0 is no limit.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct BudgetConfig {
    pub max_tokens: Count,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct ParamsConfig {
    /// Accepts `1` as well as `1.0`: TOML users rarely think about the dot.
    #[serde(deserialize_with = "number")]
    pub temperature: f64,
    pub max_tokens: i64,
    /// `"text"`, `"json_object"` or `{type = "json_schema", schema = ...}`,
    /// as written: [`validate`](super::validate::validate) checks it,
    /// [`ParamsConfig::response_format`] reads it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_format: Option<serde_json::Value>,
    /// Prompt caching, on unless `false`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache: Option<bool>,
}

impl ParamsConfig {
    /// The response format; call only on a validated config.
    pub fn response_format(&self) -> Option<ResponseFormat> {
        let v = self.response_format.as_ref()?;
        ResponseFormat::from_value(v).ok()
    }
}

fn in_effect<S: Serializer>(parallel: &Option<bool>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_bool(parallel.unwrap_or(true))
}

fn number<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Num {
        Int(i64),
        Float(f64),
    }
    Ok(match Num::deserialize(d)? {
        Num::Int(i) => i as f64,
        Num::Float(f) => f,
    })
}

/// Parses agent TOML; the error's line is one line with its position.
pub fn parse(text: &str) -> Result<AgentConfig, BadToml> {
    read(std::path::Path::new(""), text).map(|(cfg, _)| cfg)
}

/// An agent file (`text`, at `path`) read once: its settings, and the
/// keys no setting takes (those the agent's own struct does not, nor
/// [`Settings`] at the top, and inside a section those its owner does
/// not). The memory sections are read from the same parse as
/// [`Settings`]; when both reads fail, the error first in the file is
/// the one said, as one read would have said it.
pub fn read(
    path: &std::path::Path,
    text: &str,
) -> Result<(AgentConfig, Vec<axe_base::unknown::Unknown>), BadToml> {
    let bad = |source: Bad| BadToml {
        line: one_line_toml_error(text, &source),
        source,
    };
    let document = axe_base::unknown::Document::parse(path, text).map_err(bad)?;
    let (agent, memory) = match (document.read::<AgentConfig>(), document.read::<Settings>()) {
        (Ok(agent), Ok(memory)) => (agent, memory),
        (Err(e), Ok(_)) | (Ok(_), Err(e)) => return Err(bad(e)),
        (Err(a), Err(m)) => {
            let at = |e: &Bad| e.span().map_or(0, |s| s.start);
            return Err(bad(if at(&m) < at(&a) { m } else { a }));
        }
    };
    let config = AgentConfig {
        memory: memory.value,
        ..agent.value
    };
    let unknown = unknown_keys(agent.unknown, agent.fields, memory.unknown, memory.fields);
    Ok((config, unknown))
}

/// The keys unknown to an agent file: `found` those its struct (whose
/// fields are `own`) passed over, `theirs` those [`Settings`] (whose
/// fields are `memory`) did.
fn unknown_keys(
    mut found: Vec<axe_base::unknown::Unknown>,
    own: &[&str],
    theirs: Vec<axe_base::unknown::Unknown>,
    memory: &[&str],
) -> Vec<axe_base::unknown::Unknown> {
    // Each finds the other's sections unknown at the top: those are not.
    found.retain(|u| !memory.contains(&u.key.as_str()));
    for u in theirs {
        if own.contains(&u.key.as_str()) {
            continue;
        }
        match found
            .iter_mut()
            .find(|f| (f.line, &f.key) == (u.line, &u.key))
        {
            // Unknown to both: the nearest name of either.
            Some(f) => {
                let all = own.iter().chain(memory).copied();
                f.did_you_mean = axe_base::suggest::near(&f.key, all).map(str::to_owned);
            }
            None => found.push(u),
        }
    }
    found.sort_by(|a, b| (a.line, &a.key).cmp(&(b.line, &b.key)));
    found
}

/// A file that is not TOML of an agent's shape: its line (the position
/// and the message, [`one_line_toml_error`]) and the reader's error.
#[derive(Debug, thiserror::Error)]
#[error("{line}")]
pub struct BadToml {
    pub line: String,
    pub source: Bad,
}

/// A tool's error is one line: the reader's message (a parse error's may
/// run over lines) at its line and column in `text`.
pub(crate) fn one_line_toml_error(text: &str, err: &Bad) -> String {
    let mut message = err.message().trim().replace('\n', " ");
    // The toml crate says only "duplicate key"; its span is the second
    // key as written, so name it (Go's message named the key too).
    if message == "duplicate key"
        && let Some(key) = err.span().and_then(|span| text.get(span))
    {
        let bare = ['"', '\'']
            .iter()
            .find_map(|q| key.strip_prefix(*q)?.strip_suffix(*q))
            .unwrap_or(key);
        message = format!("duplicate key \"{bare}\"");
    }
    match err.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            format!("line {line}, column {column}: {message}")
        }
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scaffold_uncommented;
    use axe_memory::settings::LogConfig;

    #[test]
    fn load_memory_config_all_fields() {
        let cfg = parse(
            "name = \"a\"\nmodel = \"x/y\"\n[memory]\nenabled = true\npath = \"/tmp/mem.md\"\nlast_n = 5\nmax_entries = 50\n",
        )
        .unwrap();
        assert_eq!(
            cfg.memory.log,
            LogConfig {
                enabled: true,
                path: "/tmp/mem.md".into(),
                last_n: Count(5),
                max_entries: Count(50),
                redact: None,
            }
        );
    }

    #[test]
    fn load_memory_config_defaults() {
        let cfg = parse("name = \"a\"\nmodel = \"x/y\"\n").unwrap();
        assert_eq!(cfg.memory.log, LogConfig::default());
        assert!(!cfg.memory.log.enabled);
        assert_eq!(cfg.memory.log.path, "");
        assert_eq!(
            (cfg.memory.log.last_n, cfg.memory.log.max_entries),
            (Count(0), Count(0))
        );
    }

    #[test]
    fn parse_errors_are_one_line_with_position() {
        let err = parse("name = \"a\"\nmodel = 5\n").unwrap_err();
        let line = err.to_string();
        assert!(!line.contains('\n'), "{line}");
        assert!(line.starts_with("line 2, column 9: "), "{line}");
        // The reader's error is kept beneath it: the message, and the
        // value's place in the text.
        let cause = std::error::Error::source(&err).unwrap();
        let bad = cause.downcast_ref::<axe_base::toml_read::Bad>().unwrap();
        assert_eq!(
            bad.message(),
            "invalid type: integer `5`, expected a string"
        );
        assert_eq!(bad.span(), Some(19..20));
    }

    #[test]
    fn the_memory_sections_errors_keep_their_position_and_the_first_wins() {
        // Read as `Settings` from the same text: the position is the
        // value's, as one read of the whole file gave it.
        let err = parse("name = \"a\"\n[notes]\nrecall_days = \"x\"\n").unwrap_err();
        assert!(err.to_string().starts_with("line 3, column 15: "), "{err}");
        // An error of each: the one first in the file is said.
        let both = "name = \"a\"\n[state]\nmax_entries = \"x\"\n[params]\nmax_tokens = \"y\"\n";
        assert!(parse(both).unwrap_err().to_string().starts_with("line 3, "));
        let both = "model = 5\n[state]\nmax_entries = \"x\"\n";
        assert!(parse(both).unwrap_err().to_string().starts_with("line 1, "));
    }

    #[test]
    fn unknown_keys_of_the_memory_sections_are_named_as_before() {
        let s = |x: &str| Some(x.to_owned());
        assert_eq!(
            keys::<AgentConfig>(
                "name = \"a\"\n[memroy]\nenabled = true\n[notes]\nrecal_days = 2\n[modle]\n"
            ),
            [
                (2, "memroy".into(), s("memory")),
                (5, "notes.recal_days".into(), s("notes.recall_days")),
                (6, "modle".into(), s("model")),
            ]
        );
    }

    #[test]
    fn duplicate_keys_are_named() {
        for (text, expected) in [
            (
                "name = \"a\"\nmodel = \"m/x\"\nmodel = \"m/y\"\n",
                "line 3, column 1: duplicate key \"model\"",
            ),
            (
                "name = \"a\"\n[memory]\nenabled = true\n  'enabled' = false\n",
                "line 4, column 3: duplicate key \"enabled\"",
            ),
            (
                "name = \"a\"\n[memory]\nenabled = true\n[memory]\n",
                "line 4, column 2: duplicate key \"memory\"",
            ),
        ] {
            assert_eq!(parse(text).unwrap_err().to_string(), expected, "{text}");
        }
    }

    #[test]
    fn unknown_keys_are_ignored_and_integer_temperature_accepted() {
        let cfg =
            parse("name = \"a\"\nmodel = \"m/x\"\ntools = [\"x\"]\n[params]\ntemperature = 1\n")
                .unwrap();
        assert_eq!(cfg.params.temperature, 1.0);
    }

    fn keys<T: serde::de::DeserializeOwned + 'static>(
        text: &str,
    ) -> Vec<(usize, String, Option<String>)> {
        let path = std::path::Path::new("f.toml");
        // An agent's keys are its own struct's and its memory's.
        match std::any::TypeId::of::<T>() == std::any::TypeId::of::<AgentConfig>() {
            true => read(path, text).map(|(_, u)| u).unwrap_or_default(),
            false => axe_base::unknown::find::<T>(path, text),
        }
        .into_iter()
        .map(|u| (u.line, u.key, u.did_you_mean))
        .collect()
    }

    #[test]
    fn unknown_keys_are_named_from_the_structs() {
        let text = "name = \"a\"\nmodel = \"m/x\"\nparams.temprature = 1\n\
                    [sub_agents_config]\nmax_dept = 2\n[context]\nbudget = 5\n\
                    [[mcp_servers]]\nname = \"s\"\nheaders = { Any = \"v\" }\n\
                    [[mcp_servers]]\nnmae = \"t\"\n['odd key']\n";
        let s = |x: &str| Some(x.to_owned());
        assert_eq!(
            keys::<AgentConfig>(text),
            [
                (3, "params.temprature".into(), s("params.temperature")),
                (
                    5,
                    "sub_agents_config.max_dept".into(),
                    s("sub_agents_config.max_depth")
                ),
                (12, "mcp_servers[1].nmae".into(), s("mcp_servers[1].name")),
                (13, "\"odd key\"".into(), None),
            ]
        );
        assert_eq!(
            keys::<crate::config::Config>(
                "[providers.openai]\napi_kye = \"k\"\n[memory]\nredact = true\n"
            ),
            [(
                2,
                "providers.openai.api_kye".into(),
                s("providers.openai.api_key")
            )]
        );
        assert!(keys::<AgentConfig>("name = ").is_empty());
        // Every field the scaffold shows is one the struct takes.
        let all = scaffold_uncommented("x");
        assert_eq!(keys::<AgentConfig>(&all), []);
    }
}
