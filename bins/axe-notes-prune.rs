//! `axe-notes-prune`: see `axe::commands::notes::prune`.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::notes::prune::COMMAND)
}
