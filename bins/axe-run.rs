//! `axe-run`: see `axe::commands::run`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::run::COMMAND)
}
