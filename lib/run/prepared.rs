//! An agent ready to talk: its files, skill and memory resolved into the
//! system prompt of its first request.

use std::fmt;
use std::path::PathBuf;

use super::conversation;
use super::recall::{self, Recall};
use super::session::Session;
use axe_agent::AgentConfig;
use axe_agent::files::{self, ContextFile};
use axe_agent::prompt;
use axe_base::dirs::Dirs;
use axe_base::error::Error;
use axe_llm::Provider;
use axe_memory::Wait;
use axe_memory::notes::Workspace;
use axe_tool_settings::builtin::RUN_COMMAND;
use axe_tools::builtin::{Sandbox, sandbox};

/// An agent ready to talk: everything its first request needs.
pub struct Prepared {
    /// The name it was called by (the file stem), which names its log.
    pub name: String,
    pub cfg: AgentConfig,
    /// axe's directories, where its memory is.
    pub dirs: Dirs,
    /// How long its memory files' locks are waited for: the run's.
    pub wait: Wait,
    pub provider: Provider,
    pub model: String,
    pub workdir: PathBuf,
    pub skill: String,
    pub files: Vec<ContextFile>,
    /// The context files' patterns, files and bounds that left something
    /// out, a line each with why.
    pub files_left_out: Vec<String>,
    /// The context files sent with U+FFFD for bytes that were not UTF-8.
    pub files_converted: Vec<String>,
    /// Persona, skill, files, the notes directive, then the run log's
    /// entries.
    pub system: String,
    /// The bytes of `system` before the run log's entries: the same from
    /// run to run while the agent and its files are.
    pub system_stable: usize,
    /// Present when memory is enabled.
    pub recall: Option<Recall>,
    /// The notes workspace, when `[notes]` is enabled.
    pub notes: Option<Workspace>,
    /// The structured state's file, when `[state]` is enabled.
    pub state: Option<PathBuf>,
    /// What is sent: the agent's `params.temperature` unless 0 (Go's
    /// "unset"), or a `--temperature` given for this run, 0 included.
    pub temperature: Option<f64>,
    /// The hosts `url_fetch` may reach: its own `allowed_hosts`, or for a
    /// sub-agent without any, its parent's.
    pub allowed_hosts: Vec<String>,
    /// How `run_command` runs, when the agent has it.
    pub sandbox: Option<Sandbox>,
    /// The notes its prompt showed whole, which its notes tools count as
    /// seen from the start: none for a run, MEMORY.md and the topics it
    /// names for a consolidation.
    pub notes_seen: axe_tools::NotesSeen,
}

/// What a run is given beside its agent file: `axe-run`'s flags, or what
/// a sub-agent takes from its caller. Applied once, by [`Overrides::apply`]
/// to the agent's settings and by [`Prepared::new`] to what it resolves,
/// so a prepared agent is never patched afterwards.
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    pub model: Option<String>,
    pub skill: Option<String>,
    pub system_prompt: Option<String>,
    /// Sent as given, 0 included (the file's 0 means unset, as Go's).
    pub temperature: Option<f64>,
    pub max_tokens: Option<u64>,
    pub budget_tokens: Option<u64>,
    pub workdir: Option<PathBuf>,
    /// The hosts `url_fetch` may reach when the agent names none: a
    /// sub-agent's caller's.
    pub allowed_hosts: Vec<String>,
    /// The run-log entries (by their time) a continued conversation
    /// carries already, left out of the prompt so no turn is sent twice.
    pub forget: Vec<String>,
}

impl Overrides {
    /// The settings of `cfg` these override.
    pub fn apply(&self, cfg: &mut AgentConfig) {
        let set = |to: &mut String, from: &Option<String>| {
            if let Some(v) = from {
                v.clone_into(to);
            }
        };
        set(&mut cfg.model, &self.model);
        set(&mut cfg.skill, &self.skill);
        set(&mut cfg.system_prompt, &self.system_prompt);
        if let Some(t) = self.temperature {
            cfg.params.temperature = t;
        }
        if let Some(n) = self.max_tokens {
            cfg.params.max_tokens = i64::try_from(n).unwrap_or(i64::MAX);
        }
        if let Some(n) = self.budget_tokens {
            cfg.budget.max_tokens = axe_base::count::Count::new(n);
        }
        if cfg.allowed_hosts.is_empty() {
            cfg.allowed_hosts.clone_from(&self.allowed_hosts);
        }
    }
}

/// Which step of [`Prepared::new`] failed, for the sub-agent's message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Workdir,
    Files,
    Skill,
    Notes,
    State,
    Sandbox,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Step::Workdir => "choose the workdir",
            Step::Files => "resolve files",
            Step::Skill => "load skill",
            Step::Notes => "resolve notes workspace",
            Step::State => "resolve state file",
            Step::Sandbox => "set up the sandbox",
        })
    }
}

impl Prepared {
    /// Resolves the files and skill of `cfg` (whose model is already
    /// checked, and to which `given` is applied) and builds the system
    /// prompt, memory included.
    pub fn new(
        name: &str,
        cfg: AgentConfig,
        (provider, model): (Provider, String),
        workdir: PathBuf,
        session: &Session,
        given: &Overrides,
    ) -> Result<Prepared, (Step, Error)> {
        let (dirs, config_dir, wait) = (session.agents.dirs(), session.config_dir(), session.wait);
        let resolved = files::resolve(&cfg.files, &workdir).map_err(|e| (Step::Files, e))?;
        let (files, files_left_out, files_converted) =
            (resolved.files, resolved.left_out, resolved.converted);
        let skill = prompt::load_skill(&cfg.skill, config_dir).map_err(|e| (Step::Skill, e))?;
        let mut system = prompt::system(&cfg.system_prompt, &skill, &files);
        let notes = match cfg.memory.notes.enabled {
            // search_notes ranks as axe-notes-search does.
            true => Some(
                Workspace::of(dirs, &cfg.memory.notes)
                    .and_then(|ws| Ok(ws.with_meaning(axe_agent::config::embeddings(dirs)?)))
                    .map_err(|e| (Step::Notes, e))?,
            ),
            false => None,
        };
        if notes.is_some() {
            prompt::add_notes(&mut system);
        }
        // The run log's entries change with every run, so they go last,
        // after the prefix a provider may cache.
        let system_stable = system.len();
        let mut recall = cfg
            .memory
            .log
            .enabled
            .then(|| recall::load(dirs, wait, name, &cfg.memory.log));
        if let Some(r) = recall.as_mut().filter(|_| !given.forget.is_empty()) {
            (r.entries, r.loaded) = conversation::without_entries(&r.entries, &given.forget);
        }
        // With a shared budget the entries go in its block instead.
        if let Some(r) = recall
            .as_ref()
            .filter(|_| cfg.memory.context.budget.is_none())
        {
            prompt::add_memory(&mut system, &r.entries);
        }
        let state = match cfg.memory.state.enabled {
            true => Some(
                axe_memory::state::file_path(dirs, name, &cfg.memory.state.path)
                    .map_err(|e| (Step::State, e))?,
            ),
            false => None,
        };
        let temperature = given
            .temperature
            .or(Some(cfg.params.temperature).filter(|t| *t != 0.0));
        // Found only when commands may run: most agents never pay for it.
        let sandbox = match cfg.tools.iter().any(|t| t == RUN_COMMAND) {
            true => Some(
                sandbox::choose(
                    cfg.sandbox.engine,
                    cfg.sandbox.require,
                    cfg.sandbox.network,
                    &workdir,
                )
                .map_err(|e| {
                    (
                        Step::Sandbox,
                        Error::caused(Error::Config(e.to_string()), e),
                    )
                })?,
            ),
            false => None,
        };
        Ok(Prepared {
            allowed_hosts: cfg.allowed_hosts.clone(),
            sandbox,
            name: name.to_owned(),
            dirs: dirs.clone(),
            wait,
            temperature,
            cfg,
            provider,
            model,
            workdir,
            skill,
            files,
            files_left_out,
            files_converted,
            system,
            system_stable,
            recall,
            notes,
            state,
            notes_seen: axe_tools::NotesSeen::default(),
        })
    }

    /// The `max_tokens` asked for; 0 is "not set".
    pub fn max_tokens(&self) -> u64 {
        u64::try_from(self.cfg.params.max_tokens).unwrap_or(0)
    }

    /// The sampling parameters the request carries, and only those: what
    /// `--dry-run` and `-v` show on their `Params:` line.
    pub fn params_sent(&self) -> (Option<f64>, Option<u64>) {
        (
            self.temperature,
            self.provider.max_tokens_sent(self.max_tokens()),
        )
    }

    /// The `Params:` line's text: `temperature=0.3, max_tokens=4096`, the
    /// parts not sent left out, `(none)` when nothing is sent.
    pub fn params_line(&self) -> String {
        let (temperature, max_tokens) = self.params_sent();
        let parts: Vec<String> = [
            temperature.map(|t| format!("temperature={t}")),
            max_tokens.map(|n| format!("max_tokens={n}")),
        ]
        .into_iter()
        .flatten()
        .collect();
        if parts.is_empty() {
            "(none)".to_owned()
        } else {
            parts.join(", ")
        }
    }

    /// `provider/model` as given.
    pub fn model_string(&self) -> String {
        format!("{}/{}", self.provider.name(), self.model)
    }

    /// Whether several calls in one reply run at the same time.
    pub fn parallel(&self) -> bool {
        self.cfg.sub_agents_config.parallel.unwrap_or(true)
    }
}
