//! `axe-notes-reflect`: see `axe::commands::notes_reflect`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::notes_reflect::COMMAND)
}
