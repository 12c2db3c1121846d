//! `axe-notes-learn`: see `axe::commands::notes::learn`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::notes::learn::COMMAND)
}
