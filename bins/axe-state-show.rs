//! `axe-state-show`: see `axe::commands::state_show`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::state_show::COMMAND)
}
