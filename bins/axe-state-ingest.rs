//! `axe-state-ingest`: see `axe::commands::state_ingest`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::state_ingest::COMMAND)
}
