//! `axe-state-show`: see `axe::commands::state::show`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::state::show::COMMAND)
}
