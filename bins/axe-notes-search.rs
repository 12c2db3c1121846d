//! `axe-notes-search`: see `axe::commands::notes_search`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::notes_search::COMMAND)
}
