//! Built-in tools: what an agent does to the world besides its memory,
//! offered when its file lists them in `tools = [...]`. Like the memory
//! tools they are rows of a table ([`BUILTIN`]) over a context of their
//! own ([`Act`]: whose workdir, which artifact directory, which hosts,
//! which sandbox, until when), so they run outside a conversation too.
//!
//! Every path a model names is walked from the directory's handle
//! ([`axe_base::beneath`]), so `..`, absolute paths, symlinks and a swap
//! mid-call stay inside; commands run in bubblewrap or under Landlock
//! where either works ([`sandbox`]); `url_fetch` connects only to addresses it checked
//! ([`fetch`]).

mod act;
pub mod artifacts;
mod command;
mod fetch;
mod files;
mod heuristic;
mod hosts;
mod html;
mod http_get;
mod landlock;
mod paths;
pub mod sandbox;
mod search;
mod seccomp;
pub mod workdir;

pub use act::Act;
pub use artifacts::{Artifact, Artifacts};
pub use command::RUN_COMMAND_NAME;
pub use sandbox::Sandbox;

/// The keys the built-in tools read from the environment: secrets, which
/// memory writes redact.
pub const KEY_VARS: [&str; 1] = [search::KEY_VAR];

/// Every environment variable the built-in tools read.
pub fn variables() -> impl Iterator<Item = &'static str> {
    KEY_VARS.into_iter().chain(search::BASE_URL_VARS)
}

use crate::{Table, Tool};

/// The built-in tools, in the order they are offered.
pub const BUILTIN: &[Tool<Act>] = &[
    files::LIST_DIRECTORY,
    files::READ_FILE,
    files::WRITE_FILE,
    files::EDIT_FILE,
    command::RUN_COMMAND,
    fetch::URL_FETCH,
    search::WEB_SEARCH,
];

/// The names an agent file's `tools` may list: the table's, in order.
pub fn names() -> impl Iterator<Item = &'static str> {
    BUILTIN.iter().map(|t| t.name)
}

/// The built-in tools `act` gives.
pub fn tools(act: Act) -> Table<Act> {
    Table::new(BUILTIN, act, |_| {})
}
