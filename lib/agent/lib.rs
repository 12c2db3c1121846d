//! An agent as axe reads it before running it: its file, config.toml, the
//! context files its globs name and the system prompt made of them.
//!
//! Agent files: `<name>.toml` in the agents directories, loaded,
//! validated, listed and scaffolded exactly as the Go `axe` did, so
//! existing files keep working. Where a file is looked for is
//! [`locate`](mod@locate) (`--agents-dir`, then `./axe/agents` under the
//! current directory, then `<config>/agents`); what it holds is
//! [`parse`](mod@parse) (the struct and its sections) and
//! [`validate`](mod@validate); reading and listing the files is
//! [`load`](mod@load); the template `agents init` writes is
//! [`scaffold`](mod@scaffold), its strings quoted by [`quote`](mod@quote).
//!
//! Unknown keys are ignored (Go's TOML decoder ignored them too), so agent
//! files written for newer Go releases still load; each is warned of once
//! for a command, with the known name nearest to it
//! ([`axe_base::unknown`]), to the reporter of its [`Agents`].
//!
//! config.toml is [`config`] (providers, `[log]`, `[pricing]`...), and
//! [`init`] writes the config directory's skeleton; an agent's context
//! globs are [`glob`], the files they find [`files`], and the system
//! prompt made of those and the agent's skill [`prompt`].

pub mod config;
pub mod files;
pub mod glob;
pub mod init;
pub mod load;
pub mod locate;
pub mod parse;
pub mod prompt;
pub mod quote;
pub mod scaffold;
pub mod validate;

pub use load::{Broken, Found, Loaded, list_in};
pub use locate::{Agents, Source, check_name};
use parse::one_line_toml_error;
pub use parse::{
    AgentConfig, ArtifactsConfig, BudgetConfig, McpServer, ParamsConfig, RetryConfig,
    SandboxConfig, SubAgentsConfig, parse,
};
pub use quote::toml_string;
#[cfg(test)]
pub use scaffold::scaffold_uncommented;
pub use scaffold::{Enable, Fill, PLACEHOLDER_MODEL, scaffold, scaffold_with};
pub use validate::validate;
