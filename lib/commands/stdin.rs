//! Standard input as the commands read it.

/// All of standard input, as text (bytes that are not UTF-8 become U+FFFD).
pub fn read_stdin() -> crate::error::Result<String> {
    let bytes = read_stdin_bytes()?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Standard input when it is piped, nothing when it is a terminal.
pub fn piped_stdin() -> crate::error::Result<String> {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() {
        return Ok(String::new());
    }
    read_stdin()
}

/// The prompt words, then standard input after a blank line: the user
/// message of `axe-run` and `axe-llm` alike, so `echo FILE | axe-llm
/// "summarize this"` sends both, as `llm` does. Either may be missing;
/// blank standard input counts as none, as it does for Go's user message.
pub fn words_then(words: Option<&str>, stdin: &str) -> String {
    match (words, stdin.trim().is_empty()) {
        (None, _) => stdin.to_owned(),
        (Some(words), true) => words.to_owned(),
        (Some(words), false) => format!("{words}\n\n{stdin}"),
    }
}

/// All of standard input as bytes, kept exactly (notes that are not UTF-8
/// survive).
pub fn read_stdin_bytes() -> crate::error::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut bytes)
        .map_err(|e| crate::error::Error::stdin(&e))?;
    Ok(bytes)
}
