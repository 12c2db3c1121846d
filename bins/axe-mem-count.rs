//! `axe-mem-count`: see `axe::commands::mem_count`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::mem_count::COMMAND)
}
