//! `axe-mcp`: see `axe::commands::mcp`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::mcp::COMMAND)
}
