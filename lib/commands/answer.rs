//! The answer document of `axe-llm --json` and `axe-run --json`.

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
pub fn write_answer(
    out: &mut dyn std::io::Write,
    reply: &crate::llm::Reply,
    (input_tokens, output_tokens): (u64, u64),
    duration_ms: u128,
    more: impl serde::Serialize,
) -> crate::error::Result<()> {
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
