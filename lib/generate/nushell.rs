//! zsh: TODO
pub fn script() -> String { String::new() }
