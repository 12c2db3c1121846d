//! `axe-notes-recall`: see `axe::commands::notes::recall`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::notes::recall::COMMAND)
}
