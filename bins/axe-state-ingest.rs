//! `axe-state-ingest`: see `axe::commands::state::ingest`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::state::ingest::COMMAND)
}
