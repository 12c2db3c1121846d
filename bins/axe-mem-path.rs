//! `axe-mem-path`: see `axe::commands::log::path`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::log::path::COMMAND)
}
