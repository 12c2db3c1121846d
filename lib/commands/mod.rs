//! The executables' commands, one module each, plus what they share.

pub mod agents;
pub mod axe;
pub mod config;
pub mod gc;
pub mod llm;
pub mod mem_append;
pub mod mem_count;
pub mod mem_load;
pub mod mem_path;
pub mod mem_trim;
pub mod run;
mod target;

use crate::cli::Command;

/// Every executable's command but `axe`'s, in the order `axe help` lists
/// them; for table checks and generated docs.
pub const ALL: &[&Command] = &[
    &run::COMMAND,
    &gc::COMMAND,
    &agents::COMMAND,
    &config::COMMAND,
    &llm::COMMAND,
    &mem_path::COMMAND,
    &mem_append::COMMAND,
    &mem_load::COMMAND,
    &mem_count::COMMAND,
    &mem_trim::COMMAND,
];

/// All of standard input, as text (bytes that are not UTF-8 become U+FFFD).
fn read_stdin() -> crate::Result<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .read_to_end(&mut bytes)
        .map_err(|e| crate::Error::stdin(&e))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Standard input when it is piped, nothing when it is a terminal.
fn piped_stdin() -> crate::Result<String> {
    use std::io::IsTerminal;
    if std::io::stdin().is_terminal() {
        return Ok(String::new());
    }
    read_stdin()
}

/// The answer document of `axe-llm --json` and `axe-run --json`; `more`
/// is each one's `tool_calls`.
#[derive(serde::Serialize)]
struct Answer<'a, T: serde::Serialize> {
    model: &'a str,
    content: &'a str,
    input_tokens: u64,
    output_tokens: u64,
    stop_reason: &'a str,
    duration_ms: u128,
    #[serde(flatten)]
    more: T,
}

/// Writes `reply` as an [`Answer`], with token counts `(input, output)`.
fn write_answer(
    out: &mut dyn std::io::Write,
    reply: &crate::llm::Reply,
    (input_tokens, output_tokens): (u64, u64),
    duration_ms: u128,
    more: impl serde::Serialize,
) -> crate::Result<()> {
    crate::cli::write_json(
        out,
        &Answer {
            model: &reply.model,
            content: &reply.content,
            input_tokens,
            output_tokens,
            stop_reason: &reply.stop_reason,
            duration_ms,
            more,
        },
    )
}
