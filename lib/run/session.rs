//! What every agent of one run shares.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::details::Detail;
use super::pool::Pool;
use axe_agent::config::{Config, Endpoints};
use axe_agent::{AgentConfig, Agents};
use axe_base::error::Result;
use axe_base::lock::Recover;
use axe_base::report::Report;
use axe_ledger::Ledger;
use axe_llm::{Endpoint, Provider, Usage};
use axe_memory::Wait;
use axe_memory::secrets::Secrets;
use axe_tools::builtin::Artifacts;

/// Deepest sub-agent nesting when `max_depth` is not 1..=5.
const DEFAULT_MAX_DEPTH: u32 = 3;

/// What every agent of one run shares: the global config, the depth limit
/// of the whole tree, what the tree has spent against its token budget,
/// how talkative to be, the artifact directory, and what the top-level
/// agent's tools were called with.
pub struct Session {
    endpoints: Endpoints,
    config_dir: PathBuf,
    /// Where the tree's agents (sub-agents too) and their memory are, and
    /// where the run's notes go.
    pub agents: Agents,
    /// How long a memory file's lock is waited for: no longer than the
    /// run ([`Wait::Until`] its deadline, set by `axe-run`).
    pub wait: Wait,
    /// The top-level agent's effective `max_depth`; it bounds the tree.
    pub max_depth: u32,
    /// The top-level agent's `[budget] max_tokens`, when not 0: it bounds
    /// the tree, whose sub-agents run in threads of their own.
    pub budget: Option<u64>,
    /// What every call of the tree used, summed as replies come.
    spent: Mutex<Usage>,
    pub verbose: bool,
    /// The run's artifact directory, every agent of the tree writing to
    /// the same one (each file recorded under its agent).
    pub artifacts: Option<Arc<Artifacts>>,
    /// The top-level agent's tool calls, for `--json`.
    pub details: Mutex<Vec<Detail>>,
    /// The threads the whole tree's tool calls and MCP server starts may
    /// use at once: the top-level agent's `max_parallel`.
    pub pool: Pool,
    /// The HTTP client of the whole tree (providers, MCP servers, web
    /// search), so each endpoint is one connection kept alive for the
    /// run, through the environment's proxy.
    pub client: axe_net::Client,
    /// The conversation the run goes on with or starts (`axe-run -c`,
    /// `--cid`), kept under the data directory: the id a record of the
    /// run's calls names.
    pub conversation: Option<String>,
    /// Where every call of the tree is recorded (`--no-log`: nowhere).
    pub ledger: Ledger,
}

impl Session {
    pub fn new(
        config: Config,
        (config_dir, agents, wait): (PathBuf, Agents, Wait),
        top: &AgentConfig,
        verbose: bool,
    ) -> Session {
        let depth = u32::try_from(top.sub_agents_config.max_depth.get())
            .ok()
            .filter(|d| (1..=5).contains(d));
        let ledger = Ledger::new(
            agents.dirs().data().ok(),
            &config.log,
            config.keys(),
            true,
            agents.reporter(),
        );
        Session {
            ledger,
            endpoints: Endpoints::new(config),
            config_dir,
            agents,
            wait,
            max_depth: depth.unwrap_or(DEFAULT_MAX_DEPTH),
            budget: Some(top.budget.max_tokens.get()).filter(|&n| n > 0),
            spent: Mutex::new(Usage::default()),
            verbose,
            artifacts: None,
            details: Mutex::new(Vec::new()),
            pool: Pool::new(top.sub_agents_config.max_parallel.as_usize()),
            client: axe_net::Client::from_env(),
            conversation: None,
        }
    }

    /// Adds a reply's usage to the tree's.
    pub fn spend(&self, usage: &Usage) {
        self.spent.lock().recover().add(usage);
    }

    /// What the tree has used so far.
    pub fn spent(&self) -> Usage {
        *self.spent.lock().recover()
    }

    /// `(used, max)` once the tree's tokens reach the budget: no further
    /// call can stay within it.
    pub fn over_budget(&self) -> Option<(u64, u64)> {
        let max = self.budget?;
        let used = self.spent().tokens();
        (used >= max).then_some((used, max))
    }

    /// `(used, max)` once the tree's tokens are past the budget: a run
    /// that ends here was not within it. Reaching it exactly is within.
    pub fn overshot(&self) -> Option<(u64, u64)> {
        let max = self.budget?;
        let used = self.spent().tokens();
        (used > max).then_some((used, max))
    }

    /// Where the run's lines go (`-v`, warnings): the reporter of its
    /// agents, stderr for `axe-run`.
    pub fn report(&self) -> &dyn Report {
        self.agents.report()
    }

    /// [`Session::report`], to keep: for a thread that outlives a borrow
    /// (an MCP server's stderr).
    pub fn reporter(&self) -> Arc<dyn Report> {
        self.agents.reporter()
    }

    pub fn config_dir(&self) -> &Path {
        &self.config_dir
    }

    /// What `agent`'s memory writes do with credentials: its `[memory]
    /// redact`, else config.toml's; the keys of the environment, the file
    /// and those this run resolved (an `api_key_cmd`'s output included).
    pub fn secrets(&self, agent: &AgentConfig) -> Secrets {
        self.policy(agent.memory.log.redact)
    }

    /// The secrets to keep off stderr (`-v`'s tool lines show what the
    /// model sent): on whatever `[memory] redact` says, since that setting
    /// is about what memory keeps.
    pub fn shown_secrets(&self) -> Secrets {
        self.policy(Some(true))
    }

    /// [`axe_agent::config::Config::secrets`] with `redact` over this run's config and keys.
    fn policy(&self, redact: Option<bool>) -> Secrets {
        let resolved = self.endpoints.resolved_keys();
        self.endpoints.config().secrets(redact, resolved)
    }

    /// Where to send `provider`'s calls, with its key; an `api_key_cmd`
    /// runs once per run.
    pub fn endpoint(&self, provider: Provider) -> Result<Endpoint> {
        self.endpoints.get(provider)
    }

    /// [`Session::endpoint`] for a call to `model`, whose missing key may
    /// be a missing base URL ([`axe_agent::config::Config::unserved`]).
    pub fn endpoint_for(&self, provider: Provider, model: &str) -> Result<Endpoint> {
        self.endpoints.get_for(provider, model)
    }
}
