//! `axe-notes-reflect`: see `axe::commands::notes::reflect`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::notes::reflect::COMMAND)
}
