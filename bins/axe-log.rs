//! `axe-log`: see `axe::commands`; the command runs in `axe` (`axe_launch`).
fn main() -> std::process::ExitCode {
    axe_launch::main("axe-log")
}
