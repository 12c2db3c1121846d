//! `axe-notes-recall`: see `axe::commands::notes_recall`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::notes_recall::COMMAND)
}
