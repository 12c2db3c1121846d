//! `axe-mem-load`: see `axe::commands::mem_load`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::mem_load::COMMAND)
}
