//! `axe-notes-learn`: see `axe::commands::notes_learn`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::notes_learn::COMMAND)
}
