//! `axe-notes-path`: see `axe::commands::notes::path`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::notes::path::COMMAND)
}
