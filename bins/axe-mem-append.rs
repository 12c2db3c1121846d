//! `axe-mem-append`: see `axe::commands::log::append`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::log::append::COMMAND)
}
