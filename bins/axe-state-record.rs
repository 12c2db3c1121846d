//! `axe-state-record`: see `axe::commands::state::record`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::state::record::COMMAND)
}
