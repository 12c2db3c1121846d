//! The built-in tools' names: what an agent file's `tools` may list. A
//! leaf, so that checking an agent file needs none of the tools.

pub const LIST_DIRECTORY: &str = "list_directory";
pub const READ_FILE: &str = "read_file";
pub const WRITE_FILE: &str = "write_file";
pub const EDIT_FILE: &str = "edit_file";
pub const RUN_COMMAND: &str = "run_command";
pub const URL_FETCH: &str = "url_fetch";
pub const WEB_SEARCH: &str = "web_search";

/// Every built-in tool, in the order they are offered.
pub const ALL: [&str; 7] = [
    LIST_DIRECTORY,
    READ_FILE,
    WRITE_FILE,
    EDIT_FILE,
    RUN_COMMAND,
    URL_FETCH,
    WEB_SEARCH,
];

/// The tools that work in the workdir: what a workdir the user did not
/// name is checked for ([`super::workdir`]).
pub const IN_WORKDIR: [&str; 5] = [
    LIST_DIRECTORY,
    READ_FILE,
    WRITE_FILE,
    EDIT_FILE,
    RUN_COMMAND,
];
