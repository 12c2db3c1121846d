//! `axe-notes-remember`: see `axe::commands::notes::remember`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::notes::remember::COMMAND)
}
