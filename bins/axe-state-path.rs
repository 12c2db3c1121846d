//! `axe-state-path`: see `axe::commands::state_path`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::state_path::COMMAND)
}
