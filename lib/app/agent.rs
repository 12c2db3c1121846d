//! Agent files: `<name>.toml` in the agents directories, loaded, validated,
//! listed and scaffolded exactly as the Go `axe` did, so existing files keep
//! working. The directories are searched in order: `--agents-dir`, then
//! `./axe/agents` under the current directory, then `<config>/agents`.
//!
//! Unknown keys are ignored (Go's TOML decoder ignored them too), so agent
//! files written for newer Go releases still load; each is warned of once
//! on stderr, with the known name nearest to it ([`axe_base::unknown`]).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use axe_base::count::Count;
use axe_base::dirs;
use axe_base::error::{Error, Result};
use axe_base::read;
use axe_llm::{Backoff, ResponseFormat, RetryPolicy, retry};
use axe_memory::Settings;
use axe_memory::settings::{ContextConfig, LogConfig, NotesConfig, StateConfig};
pub use axe_tools::mcp::config::McpServer;

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
    pub memory: LogConfig,
    pub params: ParamsConfig,
    pub notes: NotesConfig,
    pub state: StateConfig,
    pub context: ContextConfig,
    /// Built-in tools offered to the model (`read_file`, `run_command`,
    /// ...); a name not in [`axe_tools::builtin::BUILTIN`] is a config error.
    pub tools: Vec<String>,
    /// Hosts `url_fetch` may reach (exact, any case, any port); empty:
    /// any public host, or the parent's list for a sub-agent.
    pub allowed_hosts: Vec<String>,
    pub artifacts: ArtifactsConfig,
    pub sandbox: SandboxConfig,
}

impl AgentConfig {
    /// Its memory sections, as the memory kinds and their tools read them.
    pub fn memory_settings(&self) -> Settings {
        Settings {
            memory: self.memory.clone(),
            notes: self.notes.clone(),
            state: self.state.clone(),
            context: self.context.clone(),
        }
    }
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
    /// Refuse to run commands without bubblewrap.
    pub require: bool,
    /// Keep the network inside bubblewrap.
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
    /// as written: [`validate`] checks it, [`ParamsConfig::response_format`]
    /// reads it.
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

/// Checks a parsed agent in the Go order; the first failure wins.
pub fn validate(cfg: &AgentConfig) -> Result<()> {
    let fail = |m: &str| Err(Error::AgentInvalid(m.to_owned()));
    if cfg.name.trim().is_empty() {
        return fail("agent config missing required field: name");
    }
    if cfg.model.trim().is_empty() {
        return fail("agent config missing required field: model");
    }
    let sub = &cfg.sub_agents_config;
    if sub.max_depth.is_negative() {
        return fail("sub_agents_config.max_depth must be non-negative");
    }
    if sub.max_depth.get() > 5 {
        return fail("sub_agents_config.max_depth cannot exceed 5");
    }
    if sub.timeout.is_negative() {
        return fail("sub_agents_config.timeout must be non-negative");
    }
    if sub.timeout.get() > axe_base::timeout::MAX_SECONDS {
        return Err(Error::AgentInvalid(format!(
            "sub_agents_config.timeout cannot exceed {}",
            axe_base::timeout::MAX_SECONDS
        )));
    }
    if sub.max_parallel.is_negative() {
        return fail("sub_agents_config.max_parallel must be non-negative");
    }
    if sub.max_parallel.get() > crate::run::pool::MAX_PARALLEL {
        return Err(Error::AgentInvalid(format!(
            "sub_agents_config.max_parallel cannot exceed {}",
            crate::run::pool::MAX_PARALLEL
        )));
    }
    if cfg.timeout.is_negative() {
        return fail("timeout must be non-negative");
    }
    if cfg.timeout.get() > axe_base::timeout::MAX_SECONDS {
        return Err(Error::AgentInvalid(format!(
            "timeout cannot exceed {}",
            axe_base::timeout::MAX_SECONDS
        )));
    }
    axe_tools::mcp::config::validate(&cfg.mcp_servers).map_err(Error::AgentInvalid)?;
    let r = &cfg.retry;
    for (field, value) in [
        ("retry.max_retries", r.max_retries),
        ("retry.initial_delay_ms", r.initial_delay_ms),
        ("retry.max_delay_ms", r.max_delay_ms),
    ] {
        if value.is_negative() {
            return Err(Error::AgentInvalid(format!("{field} must be non-negative")));
        }
    }
    if Backoff::parse(&r.backoff).is_none() {
        return Err(Error::AgentInvalid(format!(
            "retry.backoff must be one of {} (not {:?})",
            Backoff::NAMES.join(", "),
            r.backoff
        )));
    }
    let policy = r.policy();
    if policy.max_delay < policy.initial_delay {
        return fail("retry.max_delay_ms must be at least retry.initial_delay_ms");
    }
    if !cfg.params.temperature.is_finite() {
        return fail("params.temperature must be a finite number");
    }
    if let Some(Err(e)) = cfg
        .params
        .response_format
        .as_ref()
        .map(ResponseFormat::from_value)
    {
        return Err(Error::AgentInvalid(format!("params.response_format: {e}")));
    }
    if cfg.budget.max_tokens.is_negative() {
        return fail("budget.max_tokens must be non-negative");
    }
    if cfg.memory.last_n.is_negative() {
        return fail("memory.last_n must be non-negative");
    }
    if cfg.memory.max_entries.is_negative() {
        return fail("memory.max_entries must be non-negative");
    }
    let (notes, state) = (&cfg.notes, &cfg.state);
    for (field, value) in [
        ("notes.recall_days", notes.recall_days),
        ("notes.recall_chars", notes.recall_chars),
        ("notes.max_memory_chars", notes.max_memory_chars),
        ("notes.max_topic_chars", notes.max_topic_chars),
        ("state.max_entries", state.max_entries),
        ("state.context_budget", state.context_budget),
        ("context.budget", cfg.context.budget.unwrap_or_default()),
    ] {
        if value.is_negative() {
            return Err(Error::AgentInvalid(format!("{field} must be non-negative")));
        }
    }
    if let Some(name) = cfg
        .tools
        .iter()
        .find(|t| !axe_tools::builtin::names().any(|n| n == t.as_str()))
    {
        return Err(Error::AgentInvalid(format!(
            "unknown tool {name:?} in tools config"
        )));
    }
    let artifacts = &cfg.artifacts;
    if !artifacts.dir.is_empty() && !artifacts.enabled {
        return fail("artifacts.dir requires artifacts.enabled = true");
    }
    if std::path::Path::new(&artifacts.dir)
        .components()
        .any(|c| c == std::path::Component::ParentDir)
    {
        return fail("artifacts.dir must not contain \"..\"");
    }
    let order = &cfg.context.order;
    if let Some((i, kind)) = order
        .iter()
        .enumerate()
        .find(|(i, k)| order[..*i].contains(k))
    {
        return Err(Error::AgentInvalid(format!(
            "context.order lists \"{}\" twice (at {} and {})",
            kind.name(),
            order.iter().position(|k| k == kind).unwrap_or(0) + 1,
            i + 1
        )));
    }
    Ok(())
}

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

static GIVEN_DIR: OnceLock<PathBuf> = OnceLock::new();

/// Makes `dir` (`--agents-dir`) the first agents directory this process
/// searches; a relative one is taken from the current directory. The first
/// call wins.
pub fn use_agents_dir(dir: &Path) {
    let dir = match std::env::current_dir() {
        Ok(cwd) if dir.is_relative() => cwd.join(dir),
        _ => dir.to_owned(),
    };
    let _ = GIVEN_DIR.set(dir);
}

/// The agents directories in the order they are searched: `--agents-dir`
/// when given, `./axe/agents`, `<config>/agents`; one that is the same path
/// as an earlier one is left out.
pub fn search_dirs() -> Result<Vec<(Source, PathBuf)>> {
    let mut found: Vec<(Source, PathBuf)> = Vec::new();
    if let Some(dir) = GIVEN_DIR.get() {
        found.push((Source::AgentsDir, dir.clone()));
    }
    // `./axe` that is no directory (a built `axe` binary) is no local
    // agents directory; `./axe/agents` that is not one (a FIFO, a file) is
    // reported as `<config>/agents` would be.
    if let Ok(cwd) = std::env::current_dir()
        && cwd.join("axe").is_dir()
    {
        found.push((Source::Local, cwd.join("axe").join("agents")));
    }
    found.push((Source::Config, dirs::agents_dir()?));
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

/// The file for agent `name` and the directory it came from: the first
/// directory of [`search_dirs`] that has `<name>.toml` (or cannot say it
/// has not: an agents "directory" that is a FIFO or a file is reported
/// when the agent is read, as for `<config>/agents`). When none has
/// it, the file a new agent would get: in `--agents-dir` when given, else
/// in `./axe/agents` when that directory exists, else in `<config>/agents`.
pub fn locate(name: &str) -> Result<(Source, PathBuf)> {
    check_name(name)?;
    let file = format!("{name}.toml");
    let dirs = search_dirs()?;
    for (source, dir) in &dirs {
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

/// The file an agent name stands for (see [`locate`]); the name is
/// checked first.
pub fn file_path(name: &str) -> Result<PathBuf> {
    Ok(locate(name)?.1)
}

/// Loads and validates the agent `name`, warning of the keys it has that
/// no setting takes (once per file in a process).
pub fn load(name: &str) -> Result<AgentConfig> {
    let path = file_path(name)?;
    let (config, unknown) =
        read_agent_file(&path, name, Warn::Yes)?.ok_or_else(|| not_found(name))?;
    axe_base::unknown::warn(&path, &unknown);
    Ok(config)
}

/// An agent as [`load_quietly`] gives it.
#[derive(Debug)]
pub struct Loaded {
    pub config: AgentConfig,
    pub path: PathBuf,
    /// The keys no setting takes, in the order they are written.
    pub unknown: Vec<axe_base::unknown::Unknown>,
}

/// [`load`] for a command that shows the unknown keys itself (`agents
/// show`, `agents check`) rather than warning of them; they are still
/// warned of when the file does not validate, since then nothing shows
/// them.
pub fn load_quietly(name: &str) -> Result<Loaded> {
    let path = file_path(name)?;
    let (config, unknown) =
        read_agent_file(&path, name, Warn::Yes)?.ok_or_else(|| not_found(name))?;
    Ok(Loaded {
        config,
        path,
        unknown,
    })
}

/// Whether [`read_agent_file`] warns of unknown keys when the file does
/// not validate: the warning may name the cause (`modle = ...` for a
/// missing `model`), and a caller that fails gets no other chance.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Warn {
    Yes,
    No,
}

/// The error for an agent file that does not exist, naming the agent
/// whose name is nearest, when one is near enough to be a typo.
pub fn not_found(name: &str) -> Error {
    Error::AgentNotFound {
        name: name.to_owned(),
        near: near_name(name),
    }
}

/// The agent whose name is nearest to `typed`, when one is near enough to
/// be a typo; any `.toml` file counts, loadable or not.
pub fn near_name(typed: &str) -> Option<String> {
    let names: Vec<String> = search_dirs()
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

/// Reads, parses and validates one agent file; `None` when it does not
/// exist. A symlink is followed (dotfiles managers link agent files in);
/// a FIFO, a device or a file over [`read::TOML_LIMIT`] is an error.
fn read_agent_file(
    path: &Path,
    name: &str,
    warn: Warn,
) -> Result<Option<(AgentConfig, Vec<axe_base::unknown::Unknown>)>> {
    let parse_err = |message: String| Error::AgentParse {
        name: name.to_owned(),
        message,
    };
    let text = match read::text(path, read::TOML_LIMIT) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(parse_err(format!(
                "open {}: {}",
                path.display(),
                axe_base::error::describe_io(&e)
            )));
        }
    };
    let cfg = parse(&text).map_err(parse_err)?;
    let unknown = axe_base::unknown::find::<AgentConfig>(path, &text);
    if let Err(e) = validate(&cfg) {
        if warn == Warn::Yes {
            axe_base::unknown::warn(path, &unknown);
        }
        return Err(e);
    }
    Ok(Some((cfg, unknown)))
}

/// Parses agent TOML; the error is one line with its position.
pub fn parse(text: &str) -> Result<AgentConfig, String> {
    toml::from_str(text).map_err(|e| one_line_toml_error(text, &e))
}

/// The toml crate's errors are multi-line with a source excerpt; a tool's
/// error is one line, so keep the position and the message.
pub(crate) fn one_line_toml_error(text: &str, err: &toml::de::Error) -> String {
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

/// Every agent that loads, as `(file stem, config)`, in file-name order.
/// Files that fail to load are skipped, as in Go; a missing agents
/// directory is an empty list.
pub fn list() -> Result<Vec<(String, AgentConfig)>> {
    Ok(list_found()?
        .into_iter()
        .map(|found| (found.stem, found.config))
        .collect())
}

/// An agent of [`list_found`].
#[derive(Debug, Clone)]
pub struct Found {
    pub stem: String,
    pub config: AgentConfig,
    pub source: Source,
    pub path: PathBuf,
}

/// An agent file of [`list_all`] that does not load, and why: the error
/// `axe-run` would give for it.
#[derive(Debug, Clone)]
pub struct Broken {
    pub stem: String,
    pub source: Source,
    pub path: PathBuf,
    pub error: String,
}

/// Every agent that loads, over all of [`search_dirs`], in file-name order:
/// a name is taken from the first directory that has it, as [`load`] takes
/// it, so one that shadows another hides it even when it fails to load.
pub fn list_found() -> Result<Vec<Found>> {
    Ok(list_all()?.0)
}

/// [`list_found`], and the files it leaves out because they do not load,
/// also in file-name order, so that `agents list` can say why a file the
/// user sees in the directory is not listed.
pub fn list_all() -> Result<(Vec<Found>, Vec<Broken>)> {
    let mut seen: Vec<String> = Vec::new();
    let (mut found, mut broken) = (Vec::new(), Vec::new());
    for (source, dir) in search_dirs()? {
        for stem in stems_in(&dir)? {
            if seen.contains(&stem) {
                continue;
            }
            seen.push(stem.clone());
            let path = dir.join(format!("{stem}.toml"));
            // A listing is no place for each file's warnings.
            let error = match read_agent_file(&path, &stem, Warn::No) {
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
                Ok(None) => not_found(&stem).to_string(),
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

/// [`list`] for the agent files in `dir`.
pub fn list_in(dir: &Path) -> Result<Vec<(String, AgentConfig)>> {
    Ok(stems_in(dir)?
        .into_iter()
        .filter_map(|stem| {
            let path = dir.join(format!("{stem}.toml"));
            let (cfg, _) = read_agent_file(&path, &stem, Warn::No).ok()??;
            Some((stem, cfg))
        })
        .collect())
}

/// The names of the `.toml` files in `dir` that are agent names, sorted;
/// a missing directory has none.
fn stems_in(dir: &Path) -> Result<Vec<String>> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(Error::Config(format!(
                "open {}: {}",
                dir.display(),
                axe_base::error::describe_io(&e)
            )));
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

/// What `agents init` turns on in a new agent.
#[derive(Debug, Clone, Copy, Default)]
pub struct Enable {
    /// The run log, with the template's limits: the last 10 entries in
    /// the prompt rather than the whole log, and a warning on every run
    /// from 100 entries on (runs never trim).
    pub memory: bool,
    pub notes: bool,
    pub state: bool,
}

/// What `agents init` fills into the template besides the name.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fill<'a> {
    pub model: Option<&'a str>,
    /// The persona, written as `system_prompt`.
    pub system_prompt: Option<&'a str>,
    /// The skill path, written as given.
    pub skill: Option<&'a str>,
    pub enable: Enable,
}

/// The model line of the template, which [`axe_llm::parse_model`]
/// recognises, so an agent nobody filled in fails with a message that
/// says so.
pub use axe_llm::PLACEHOLDER_MODEL;

/// The template filled in by `agents init --model M --system TEXT --skill
/// PATH --memory --notes --state`: those lines set, and the tables asked
/// for on; the rest as [`scaffold`] has it.
pub fn scaffold_with(name: &str, fill: Fill) -> String {
    let (model, enable) = (fill.model, fill.enable);
    let mut text = scaffold(name);
    if let Some(model) = model {
        text = text.replace(
            &format!("model = \"{PLACEHOLDER_MODEL}\""),
            &format!("model = {}", toml_string(model)),
        );
    }
    if enable.memory {
        text = text.replace(
            "# [memory]\n# enabled = false\n# path = \"\"\n# last_n = 10\n# max_entries = 100\n",
            "[memory]\nenabled = true\n# path = \"\"\nlast_n = 10\nmax_entries = 100\n",
        );
    }
    if enable.notes {
        text = text.replace(
            "# [notes]\n# enabled = false\n",
            "[notes]\nenabled = true\n",
        );
    }
    if enable.state {
        text = text.replace(
            "# [state]\n# enabled = false\n",
            "[state]\nenabled = true\n",
        );
    }
    // The user's text goes in last, so no replacement above can match
    // inside it; every quote in it is escaped, so the skill's line, which
    // holds quotes, cannot match inside the persona either.
    if let Some(system) = fill.system_prompt {
        text = text.replacen(
            "\n# system_prompt = \"\"\n",
            &format!("\nsystem_prompt = {}\n", toml_text(system)),
            1,
        );
    }
    if let Some(skill) = fill.skill {
        text = text.replacen(
            "\n# skill = \"\"\n",
            &format!("\nskill = {}\n", toml_string(skill)),
            1,
        );
    }
    text
}

/// The template `agents init` writes: every field, the optional ones
/// commented out, in the Go `axe`'s words; every top-level key before the
/// first table, so that uncommented it stays top-level.
pub fn scaffold(name: &str) -> String {
    format!(
        r#"name = {}
description = ""

# Full provider/model per models.dev
model = "{PLACEHOLDER_MODEL}"

# Agent persona (optional)
# system_prompt = ""

# Default skill (optional, can be overridden with --skill flag)
# skill = ""

# Context files - glob patterns resolved from workdir or cwd (optional)
# files = []

# Working directory (optional). With file or command tools, the current
# directory is refused when it is /, the home or holds axe's own
# directories: name such a directory here (or with --workdir) to use it.
# workdir = ""

# Sub-agents this agent can invoke (optional)
# sub_agents = []

# Seconds for the whole run, sub-agents included (default 120; --timeout wins)
# timeout = 120

# Print the answer as it arrives, as --stream does
# stream = false

# Built-in tools the model may call (optional): list_directory, read_file,
# write_file, edit_file, run_command, url_fetch, web_search
# tools = []
# allowed_hosts = []      # url_fetch: [] = any public host

# [sub_agents_config]
# max_depth = 3
# parallel = true
# timeout = 120
# max_parallel = 8        # tool calls at once in the whole run (0 = 8)

# [artifacts]
# enabled = false
# dir = ""                # default: a directory for each run, removed after it
# default_write = false

# run_command runs inside bubblewrap where it works
# [sandbox]
# require = false         # refuse to run commands without it
# network = false

# Call again after a rate limit, an overload, a 5xx or a dropped connection
# [retry]
# max_retries = 3
# backoff = "exponential"   # or "linear", "fixed"
# initial_delay_ms = 500
# max_delay_ms = 30000

# Most tokens (input + output, every turn and sub-agent) a run may use;
# past it the run stops with exit 4 (also --budget-tokens)
# [budget]
# max_tokens = 100000

# MCP servers whose tools the model may call (optional); ${{VAR}} is read
# from the environment. stdio servers are started for the run.
# [[mcp_servers]]
# name = "my-tools"
# url = "https://my-mcp-server.example.com/sse"
# transport = "sse"              # or "streamable-http"
# headers = {{ Authorization = "Bearer ${{MY_TOKEN}}" }}
#
# [[mcp_servers]]
# name = "files"
# transport = "stdio"
# command = "npx"
# args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
# env = {{}}
# required = false               # default true: the run fails without it

# The run log of tasks and answers: the last last_n entries go into the
# prompt; from max_entries on, every run warns. Runs never trim it: axe mem
# trim AGENT keeps the last last_n (free), axe gc AGENT has a model review
# it first.
# [memory]
# enabled = false
# path = ""
# last_n = 10
# max_entries = 100
# redact = true          # credentials out of all memory (default: config.toml's, else on)

# [params]
# temperature = 0.3
# max_tokens = 4096
# response_format = "json_object"   # "text", or {{ type = "json_schema", schema = {{ ... }} }}
# cache = true                      # prompt caching; false turns it off

# Notes: world facts, MEMORY.md and daily logs, read and written by the
# model through tools (recall, remember, reflect, learn_fact, search_notes)
# [notes]
# enabled = false
# workspace = ""          # default: <data>/axe/notes; relative: from this directory
# recall_days = 3
# recall_chars = 24000
# max_memory_chars = 10000
# max_topic_chars = 10000

# Structured state: task progress, decisions, errors and key facts, fed by
# "AXE_MEMORY: TYPE text" lines the model writes (see axe-state-ingest)
# [state]
# enabled = false
# path = ""               # default: <data>/axe/state/<agent>.json
# max_entries = 100
# context_budget = 3000

# One character budget over every kind above: the run log's entries,
# MEMORY.md, world facts, daily logs and the state go into the prompt as
# one block, most wanted first (see axe-context)
# [context]
# budget = 8000
# order = ["state", "memory", "log", "world", "daily"]
"#,
        toml_string(name)
    )
}

/// A TOML basic string. Go pasted the name between quotes unescaped; a
/// name with a quote then made a file that did not parse.
pub fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        push_escaped(&mut out, c);
    }
    out.push('"');
    out
}

/// `s` as a TOML string that reads back exactly: a multi-line basic
/// string when it has line breaks, so a persona in the file reads as it
/// was typed, else [`toml_string`]. TOML drops the newline right after
/// the opening `"""`, not the text's own first newline. Newlines and tabs
/// stay as they are; a CR is escaped, since a parser may read CRLF as LF.
fn toml_text(s: &str) -> String {
    if !s.contains('\n') {
        return toml_string(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    out.push_str("\"\"\"\n");
    for c in s.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            c => push_escaped(&mut out, c),
        }
    }
    out.push_str("\"\"\"");
    out
}

/// `c` as it goes inside a TOML basic string: every quote escaped (so no
/// `"""` can end a multi-line one), backslashes and control characters
/// too.
fn push_escaped(out: &mut String, c: char) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
        c => out.push(c),
    }
}

/// The scaffold with every commented setting and section uncommented:
/// what a user gets who turns everything on, for the tests that hold the
/// scaffold to the parser and to the structs.
#[cfg(test)]
pub fn scaffold_uncommented(name: &str) -> String {
    scaffold(name)
        .lines()
        .map(|l| match l.strip_prefix("# ") {
            Some(rest) if rest.starts_with('[') || rest.contains(" = ") => rest,
            _ => l,
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid() -> AgentConfig {
        AgentConfig {
            name: "a".into(),
            model: "anthropic/claude".into(),
            ..Default::default()
        }
    }

    fn invalid_message(cfg: &AgentConfig) -> String {
        validate(cfg).unwrap_err().to_string()
    }

    #[test]
    fn load_memory_config_all_fields() {
        let cfg = parse(
            "name = \"a\"\nmodel = \"x/y\"\n[memory]\nenabled = true\npath = \"/tmp/mem.md\"\nlast_n = 5\nmax_entries = 50\n",
        )
        .unwrap();
        assert_eq!(
            cfg.memory,
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
        assert_eq!(cfg.memory, LogConfig::default());
        assert!(!cfg.memory.enabled);
        assert_eq!(cfg.memory.path, "");
        assert_eq!(
            (cfg.memory.last_n, cfg.memory.max_entries),
            (Count(0), Count(0))
        );
    }

    #[test]
    fn validate_memory_last_n_negative() {
        let mut cfg = valid();
        cfg.memory.last_n = Count(-1);
        assert_eq!(invalid_message(&cfg), "memory.last_n must be non-negative");
    }

    #[test]
    fn validate_memory_max_entries_negative() {
        let mut cfg = valid();
        cfg.memory.max_entries = Count(-1);
        assert_eq!(
            invalid_message(&cfg),
            "memory.max_entries must be non-negative"
        );
    }

    #[test]
    fn validate_memory_zero_values_are_fine() {
        let cfg = valid();
        assert_eq!(
            (cfg.memory.last_n, cfg.memory.max_entries),
            (Count(0), Count(0))
        );
        validate(&cfg).unwrap();
    }

    #[test]
    fn retry_policy_fills_in_go_defaults() {
        let mut cfg = valid();
        assert_eq!(cfg.retry.policy(), RetryPolicy::default());
        cfg.retry = RetryConfig {
            max_retries: Count(3),
            backoff: "linear".into(),
            initial_delay_ms: Count(0),
            max_delay_ms: Count(2000),
        };
        validate(&cfg).unwrap();
        assert_eq!(
            cfg.retry.policy(),
            RetryPolicy {
                max_retries: 3,
                backoff: Backoff::Linear,
                initial_delay: std::time::Duration::from_millis(500),
                max_delay: std::time::Duration::from_millis(2000),
            }
        );
        // Only the initial delay given, above the default maximum.
        cfg.retry.max_delay_ms = Count(0);
        cfg.retry.initial_delay_ms = Count(40_000);
        assert_eq!(
            invalid_message(&cfg),
            "retry.max_delay_ms must be at least retry.initial_delay_ms"
        );
    }

    #[test]
    fn validate_order_first_failure_wins() {
        let mut cfg = AgentConfig::default();
        cfg.memory.last_n = Count(-1);
        assert_eq!(
            invalid_message(&cfg),
            "agent config missing required field: name"
        );
        cfg.name = "  ".into();
        assert_eq!(
            invalid_message(&cfg),
            "agent config missing required field: name"
        );
        cfg.name = "a".into();
        assert_eq!(
            invalid_message(&cfg),
            "agent config missing required field: model"
        );
        cfg.model = "m/x".into();
        cfg.sub_agents_config.max_depth = Count(-1);
        assert_eq!(
            invalid_message(&cfg),
            "sub_agents_config.max_depth must be non-negative"
        );
        cfg.sub_agents_config.max_depth = Count(6);
        assert_eq!(
            invalid_message(&cfg),
            "sub_agents_config.max_depth cannot exceed 5"
        );
        cfg.sub_agents_config.max_depth = Count(5);
        cfg.sub_agents_config.timeout = Count(-1);
        assert_eq!(
            invalid_message(&cfg),
            "sub_agents_config.timeout must be non-negative"
        );
        cfg.sub_agents_config.timeout = Count(0);
        cfg.sub_agents_config.max_parallel = Count(-1);
        assert_eq!(
            invalid_message(&cfg),
            "sub_agents_config.max_parallel must be non-negative"
        );
        cfg.sub_agents_config.max_parallel = Count(65);
        assert_eq!(
            invalid_message(&cfg),
            "sub_agents_config.max_parallel cannot exceed 64"
        );
        cfg.sub_agents_config.max_parallel = Count(64);
        cfg.timeout = Count(-1);
        assert_eq!(invalid_message(&cfg), "timeout must be non-negative");
        cfg.timeout = Count(86_401);
        assert_eq!(invalid_message(&cfg), "timeout cannot exceed 86400");
        cfg.timeout = Count(0);
        assert_eq!(invalid_message(&cfg), "memory.last_n must be non-negative");
    }

    #[test]
    fn scaffold_includes_memory_fields() {
        let all = Enable {
            memory: true,
            notes: true,
            state: true,
        };
        let fill = Fill {
            model: Some("openai/q\"x"),
            enable: all,
            ..Fill::default()
        };
        let filled = parse(&scaffold_with("x", fill)).unwrap();
        assert_eq!(filled.model, "openai/q\"x");
        assert!(filled.memory.enabled && filled.notes.enabled && filled.state.enabled);
        // The template's recommendation, not the whole log forever.
        assert_eq!(
            (filled.memory.last_n, filled.memory.max_entries),
            (Count(10), Count(100))
        );
        assert_eq!(filled.memory.path, "", "the rest stays commented");
        assert!(filled.context.budget.is_none());
        let plain = parse(&scaffold_with("x", Fill::default())).unwrap();
        assert!(!plain.memory.enabled && !plain.notes.enabled && !plain.state.enabled);
        assert_eq!(plain.model, PLACEHOLDER_MODEL);
        let s = scaffold("x");
        assert!(s.contains("# last_n = 10"));
        assert!(s.contains("# max_entries = 100"));
        assert!(s.contains("# [memory]\n# enabled = false\n# path = \"\"\n"));
    }

    #[test]
    fn every_setting_the_scaffold_shows_is_valid_once_uncommented() {
        let text = scaffold_uncommented("x");
        let cfg = parse(&text).unwrap();
        validate(&cfg).unwrap();
        assert_eq!((cfg.timeout, cfg.stream), (Count(120), false));
        assert_eq!(cfg.retry.max_retries, Count(3));
        assert_eq!(cfg.budget.max_tokens, Count(100_000));
        assert_eq!(
            cfg.params.response_format(),
            Some(ResponseFormat::JsonObject)
        );
        assert_eq!(cfg.params.cache, Some(true));
    }

    #[test]
    fn scaffold_keeps_any_persona_and_skill_exactly() {
        let all = Enable {
            memory: true,
            notes: true,
            state: true,
        };
        for text in [
            "one line",
            "two\nlines",
            "\nstarts with a newline",
            "ends with a quote\"",
            "ends with a newline\n",
            "\"\"\"\nthree quotes\"\"\"\"",
            "back\\slash\\\nand \\\"",
            "tab\there\r\ncrlf\rcr\u{7f}del\u{1}",
            // The template's own lines, which must stay the user's text.
            "# [notes]\n# enabled = false\n# skill = \"\"\nmodel = \"provider/model\"",
            "unicode: h\u{e9}llo \u{2028} \u{1F600}\n",
        ] {
            let fill = Fill {
                model: Some("a/b"),
                system_prompt: Some(text),
                skill: Some(text),
                enable: all,
            };
            let scaffold = scaffold_with("x", fill);
            let cfg = parse(&scaffold).unwrap_or_else(|e| panic!("{text:?}: {e}\n{scaffold}"));
            assert_eq!(
                (cfg.system_prompt.as_str(), cfg.skill.as_str()),
                (text, text)
            );
            assert_eq!(cfg.model, "a/b");
            assert!(cfg.memory.enabled && cfg.notes.enabled && cfg.state.enabled);
        }
    }

    #[test]
    fn scaffold_parses_and_names_the_agent() {
        let cfg = parse(&scaffold("we\"ird")).unwrap();
        assert_eq!(cfg.name, "we\"ird");
        assert_eq!(cfg.model, PLACEHOLDER_MODEL);
    }

    #[test]
    fn names_that_escape_are_rejected() {
        for bad in ["", " ", ".", "..", "../x", "a/b", "a\\b", "a\0b"] {
            assert!(check_name(bad).is_err(), "{bad:?} accepted");
        }
        for good in ["reviewer", "pr-reviewer", "a.b", "..hidden", "v1..2"] {
            check_name(good).unwrap();
        }
    }

    #[test]
    fn parse_errors_are_one_line_with_position() {
        let err = parse("name = \"a\"\nmodel = 5\n").unwrap_err();
        assert!(!err.contains('\n'), "{err}");
        assert!(err.starts_with("line 2, column 9: "), "{err}");
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
            assert_eq!(parse(text).unwrap_err(), expected, "{text}");
        }
    }

    #[test]
    fn unknown_keys_are_ignored_and_integer_temperature_accepted() {
        let cfg =
            parse("name = \"a\"\nmodel = \"m/x\"\ntools = [\"x\"]\n[params]\ntemperature = 1\n")
                .unwrap();
        assert_eq!(cfg.params.temperature, 1.0);
    }

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
        assert!(listed[0].1.memory.enabled);
    }

    #[test]
    fn list_of_a_missing_directory_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        assert!(list_in(&dir.path().join("agents")).unwrap().is_empty());
    }

    #[test]
    fn trim_target_prefers_last_n() {
        let m = |last_n, max_entries| LogConfig {
            last_n: Count(last_n),
            max_entries: Count(max_entries),
            ..Default::default()
        };
        assert_eq!(m(5, 100).trim_target(), Some(5));
        assert_eq!(m(5, 0).trim_target(), Some(5));
        assert_eq!(m(0, 100).trim_target(), Some(100));
        assert_eq!(m(0, 0).trim_target(), None);
        assert_eq!(m(10, 5).trim_target(), Some(10));
    }

    fn keys<T: serde::de::DeserializeOwned>(text: &str) -> Vec<(usize, String, Option<String>)> {
        axe_base::unknown::find::<T>(std::path::Path::new("f.toml"), text)
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
