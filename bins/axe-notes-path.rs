//! `axe-notes-path`: see `axe::commands::notes_path`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::notes_path::COMMAND)
}
