//! `axe-state-context`: see `axe::commands::state_context`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::state_context::COMMAND)
}
