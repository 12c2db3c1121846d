//! `axe-state-context`: see `axe::commands::state::context`. A whole
//! program, not a launcher of `axe` (`axe_launch`): hooks print the state
//! block before every prompt, and its bar (5 ms on a state of 10,000
//! items, bench/RESULTS.md) has no room for a second exec of an `axe`
//! that grows with every command.
fn main() -> std::process::ExitCode {
    axe::cli::main(&axe::commands::state::context::COMMAND)
}
