//! `axe-llm`: see `axe::commands::llm`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::llm::COMMAND)
}
