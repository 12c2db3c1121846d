//! `axe-mem-append`: see `axe::commands::mem::append`. A whole program, not a
//! launcher of `axe` (`axe_launch`): the memory writes scripts and hooks
//! make on every event start without a second exec.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::mem::append::COMMAND)
}
