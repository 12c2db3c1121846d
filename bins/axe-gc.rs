//! `axe-gc`: see `axe::commands::gc`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::gc::COMMAND)
}
