//! `axe-mem-trim`: see `axe::commands::mem_trim`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::mem_trim::COMMAND)
}
