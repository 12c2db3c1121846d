//! `axe-mem-load`: see `axe::commands::log::load`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::log::load::COMMAND)
}
