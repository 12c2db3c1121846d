//! How `axe-llm` and `axe-run` print an answer: the text, or with
//! `--json` one document.

/// The answer document of `axe-llm --json` and `axe-run --json`; `more`
/// is what each adds: `tool_calls`, a count in both, then axe-llm's
/// `calls` or axe-run's `state`.
#[derive(serde::Serialize)]
struct Answer<'a, T: serde::Serialize> {
    model: &'a str,
    content: &'a str,
    /// Tokens `null` when the server did not say; cache counts and cost
    /// left out then.
    #[serde(flatten)]
    usage: &'a axe_llm::Usage,
    stop_reason: &'a str,
    duration_ms: u128,
    #[serde(flatten)]
    more: T,
}

/// Writes `reply` as an [`Answer`], with what the calls used.
pub fn write_answer(
    out: &mut dyn std::io::Write,
    reply: &axe_llm::Reply,
    usage: &axe_llm::Usage,
    duration_ms: u128,
    more: impl serde::Serialize,
) -> axe_base::error::Result<()> {
    axe_cli::write_json(
        out,
        &Answer {
            model: &reply.model,
            content: &reply.content,
            usage,
            stop_reason: &reply.stop_reason,
            duration_ms,
            more,
        },
    )
}

/// Writes the answer's text (unless it was streamed already) exactly as
/// given. On a terminal, a newline follows an answer that lacks one, so
/// the shell's prompt does not stick to it; a pipe gets the bytes alone.
pub fn write_text(
    out: &mut dyn std::io::Write,
    content: &str,
    streamed: bool,
) -> axe_base::error::Result<()> {
    use std::io::IsTerminal;
    let output = axe_base::error::Error::Output;
    if !streamed {
        out.write_all(content.as_bytes()).map_err(output)?;
    }
    if !content.is_empty() && !content.ends_with('\n') && std::io::stdout().is_terminal() {
        out.write_all(b"\n").map_err(output)?;
    }
    Ok(())
}
