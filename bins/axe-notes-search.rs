//! `axe-notes-search`: see `axe::commands::notes::search`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::notes::search::COMMAND)
}
