//! `axe-notes-remember`: see `axe::commands::notes_remember`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::notes_remember::COMMAND)
}
