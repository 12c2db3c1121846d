//! `axe-state-path`: see `axe::commands::state::path`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::state::path::COMMAND)
}
