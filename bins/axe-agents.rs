//! `axe-agents`: see `axe::commands::agents`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::agents::COMMAND)
}
