//! The built-in tools as an agent file names them (`tools = [...]`), and
//! the environment variables they read. The tools themselves are the rows
//! of `axe_tools::builtin::BUILTIN`, which take their names from here (a
//! test there holds the table to [`NAMES`], in order).

pub const LIST_DIRECTORY: &str = "list_directory";
pub const READ_FILE: &str = "read_file";
pub const WRITE_FILE: &str = "write_file";
pub const EDIT_FILE: &str = "edit_file";
/// An agent that lists it needs a sandbox.
pub const RUN_COMMAND: &str = "run_command";
pub const URL_FETCH: &str = "url_fetch";
pub const WEB_SEARCH: &str = "web_search";

/// The names an agent file's `tools` may list, in the order the tools are
/// offered.
pub const NAMES: [&str; 7] = [
    LIST_DIRECTORY,
    READ_FILE,
    WRITE_FILE,
    EDIT_FILE,
    RUN_COMMAND,
    URL_FETCH,
    WEB_SEARCH,
];

/// Tavily's key, `web_search`'s: a secret, which memory writes redact.
pub const WEB_SEARCH_KEY_VAR: &str = "TAVILY_API_KEY";

/// Where `web_search`'s searches go instead of Tavily (tests, a proxy of
/// one's own).
pub const WEB_SEARCH_BASE_URL_VARS: [&str; 2] = ["AXE_WEB_SEARCH_BASE_URL", "AXE_TAVILY_BASE_URL"];

/// The keys the built-in tools read from the environment: secrets, which
/// memory writes redact.
pub const KEY_VARS: [&str; 1] = [WEB_SEARCH_KEY_VAR];

/// Every environment variable the built-in tools read.
pub fn variables() -> impl Iterator<Item = &'static str> {
    KEY_VARS.into_iter().chain(WEB_SEARCH_BASE_URL_VARS)
}
