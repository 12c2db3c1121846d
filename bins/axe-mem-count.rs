//! `axe-mem-count`: see `axe::commands::log::count`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::log::count::COMMAND)
}
