//! `axe-notes-prune`: see `axe::commands::notes_prune`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::notes_prune::COMMAND)
}
