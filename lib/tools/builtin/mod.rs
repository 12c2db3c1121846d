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
pub use sandbox::Sandbox;

use crate::{Table, Tool};

/// The built-in tools, in the order they are offered: each row's name is
/// its own in `axe_tool_settings::builtin`, whose `NAMES` is what an agent
/// file may list (the test below holds the two in the same order).
pub const BUILTIN: &[Tool<Act>] = &[
    files::LIST_DIRECTORY,
    files::READ_FILE,
    files::WRITE_FILE,
    files::EDIT_FILE,
    command::RUN_COMMAND,
    fetch::URL_FETCH,
    search::WEB_SEARCH,
];

/// The built-in tools `act` gives.
pub fn tools(act: Act) -> Table<Act> {
    Table::new(BUILTIN, act, |_| {})
}

#[cfg(test)]
mod tests {
    /// The table offers exactly the tools an agent file may list, in the
    /// order `NAMES` has them.
    #[test]
    fn the_table_is_the_names_an_agent_file_may_list() {
        let table: Vec<&str> = super::BUILTIN.iter().map(|t| t.name).collect();
        assert_eq!(table, axe_tool_settings::builtin::NAMES);
    }
}
