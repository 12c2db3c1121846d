//! Signal lines: what a model writes in its answer to change its state,
//! `AXE_MEMORY: TYPE text` (or agentium's `AGENTIUM_MEMORY:`, so its
//! prompts work unchanged).

/// The signal types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Kind {
    KeyFact,
    Decision,
    StepDone,
    StepPending,
    FileModified,
    Error,
}

const KINDS: [(&str, Kind); 6] = [
    ("KEY_FACT", Kind::KeyFact),
    ("DECISION", Kind::Decision),
    ("STEP_DONE", Kind::StepDone),
    ("STEP_PENDING", Kind::StepPending),
    ("FILE_MODIFIED", Kind::FileModified),
    ("ERROR", Kind::Error),
];

const PREFIXES: [&str; 2] = ["AXE_MEMORY:", "AGENTIUM_MEMORY:"];

/// One signal.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Signal {
    pub kind: Kind,
    pub text: String,
}

/// A signal line that could not be used, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Rejected {
    /// 1-based.
    pub line: usize,
    pub text: String,
    pub reason: String,
}

/// A text read for signals.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    pub signals: Vec<Signal>,
    pub rejected: Vec<Rejected>,
    /// The text without its signal lines (good or bad).
    pub rest: String,
}

/// The signals of `text`, the lines that looked like one but were not,
/// and the text without them.
pub fn parse(text: &str) -> Parsed {
    let mut parsed = Parsed::default();
    for (number, line) in text.split_inclusive('\n').enumerate() {
        let trimmed = line.trim();
        let Some(body) = PREFIXES.iter().find_map(|p| trimmed.strip_prefix(p)) else {
            parsed.rest.push_str(line);
            continue;
        };
        let body = body.trim();
        let (name, rest) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
        let reject = |reason: String| Rejected {
            line: number + 1,
            text: trimmed.to_owned(),
            reason,
        };
        match KINDS.iter().find(|(n, _)| *n == name) {
            None if name.is_empty() => parsed.rejected.push(reject("no signal type".into())),
            None => parsed.rejected.push(reject(format!(
                "unknown signal type {name} (known: {})",
                KINDS.map(|(n, _)| n).join(", ")
            ))),
            Some(_) if rest.trim().is_empty() => {
                parsed.rejected.push(reject(format!("{name} has no text")))
            }
            Some((_, kind)) => parsed.signals.push(Signal {
                kind: *kind,
                text: rest.trim().to_owned(),
            }),
        }
    }
    parsed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_rejections_and_the_rest() {
        let p = parse(
            "Done.\nAXE_MEMORY: KEY_FACT Project uses pytest\n  AGENTIUM_MEMORY: STEP_DONE  Wrote tests \n\
             AXE_MEMORY: GUESS maybe\nAXE_MEMORY: DECISION\nAXE_MEMORY:\nbye",
        );
        assert_eq!(
            p.signals,
            [
                Signal {
                    kind: Kind::KeyFact,
                    text: "Project uses pytest".into()
                },
                Signal {
                    kind: Kind::StepDone,
                    text: "Wrote tests".into()
                },
            ]
        );
        let reasons: Vec<(usize, &str)> = p
            .rejected
            .iter()
            .map(|r| (r.line, r.reason.as_str()))
            .collect();
        assert_eq!(reasons[0].0, 4);
        assert!(reasons[0].1.starts_with("unknown signal type GUESS"));
        assert_eq!(reasons[1], (5, "DECISION has no text"));
        assert_eq!(reasons[2], (6, "no signal type"));
        assert_eq!(p.rest, "Done.\nbye");
    }
}
