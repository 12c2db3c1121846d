//! `axe-state-record`: see `axe::commands::state_record`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::state_record::COMMAND)
}
