//! `axe`: see `axe::commands::axe`.
fn main() -> std::process::ExitCode {
    axe::commands::axe::main()
}
