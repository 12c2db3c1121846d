//! `axe-mem-trim`: see `axe::commands::log::trim`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::log::trim::COMMAND)
}
