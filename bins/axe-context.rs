//! `axe-context`: see `axe::commands::context`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::context::COMMAND)
}
