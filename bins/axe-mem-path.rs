//! `axe-mem-path`: see `axe::commands::mem_path`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::mem_path::COMMAND)
}
