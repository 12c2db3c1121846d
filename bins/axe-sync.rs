//! `axe-sync`: see `axe::commands::sync`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::sync::COMMAND)
}
