//! `axe-config`: see `axe::commands::config`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::config::COMMAND)
}
