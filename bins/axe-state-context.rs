//! `axe-state-context`: see `axe::commands::state::context`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::state::context::COMMAND)
}
