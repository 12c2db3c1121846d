//! `axe-mem-append`: see `axe::commands::mem_append`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::mem_append::COMMAND)
}
