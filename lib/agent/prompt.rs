//! The system prompt an agent is run with: persona, skill, context files
//! and memory, in the Go `axe`'s layout, byte for byte, except that a
//! section opens without a separator when nothing comes before it (Go
//! sent an agent without a persona a leading `---`).

use std::io;
use std::path::Path;

use crate::files::ContextFile;
use axe_base::error::{Error, Result, describe_io};
use axe_base::read;

/// What the model is told when nothing is piped in.
pub const DEFAULT_USER_MESSAGE: &str = "Execute the task described in your instructions.";

const SECTION: &str = "\n\n---\n\n";

/// Starts a section in `out`: after a separator, unless it is the first
/// thing there, where a separator would set it apart from nothing.
fn section(out: &mut String, heading: &str) {
    if !out.is_empty() {
        out.push_str(SECTION);
    }
    out.push_str(heading);
}

/// `persona`, then the skill and the context files as sections.
pub fn system(persona: &str, skill: &str, files: &[ContextFile]) -> String {
    let mut out = String::from(persona);
    if !skill.is_empty() {
        section(&mut out, "## Skill\n\n");
        out.push_str(skill);
    }
    if !files.is_empty() {
        section(&mut out, "## Context Files\n\n");
        for (i, f) in files.iter().enumerate() {
            if i > 0 {
                out.push_str("\n\n");
            }
            // Go's filepath.Ext: from the last dot of the last segment, so
            // `.bashrc` gives `bashrc`.
            let name = f.path.rsplit('/').next().unwrap_or_default();
            let ext = name.rfind('.').map_or("", |i| &name[i + 1..]);
            out.push_str(&format!("### {}\n```{ext}\n{}\n```", f.path, f.content));
        }
    }
    out
}

/// Adds the memory section (the Go `axe`'s heading and layout) when there
/// are entries.
pub fn add_memory(system: &mut String, entries: &str) {
    if !entries.is_empty() {
        section(system, "## Memory\n\n");
        system.push_str(entries);
    }
}

/// What an agent with `[notes]` is told about its notes tools. Without it
/// models rarely read their notes (users of Anthropic's memory tool found
/// the same), so it says when to use each.
pub const NOTES_DIRECTIVE: &str = "\
You have notes that last between runs, in a workspace shared with other agents:
- Call `recall` before you start, to read the world facts, your MEMORY.md and your recent daily logs.
- Call `remember` to write down what happened or what you found that is worth keeping; it goes to today's log.
- Call `reflect` to rewrite your MEMORY.md with what you want to keep for good. It replaces the whole file: build it from your last recall and keep what still holds.
- Call `learn_fact` to record a fact about the world under a topic, for every agent.
- Call `search_notes` to find older notes that recall does not show.";

/// Adds the notes section: [`NOTES_DIRECTIVE`].
pub fn add_notes(system: &mut String) {
    section(system, "## Notes\n\n");
    system.push_str(NOTES_DIRECTIVE);
}

/// The user message: standard input unless it is blank.
pub fn user_message(stdin: &str) -> &str {
    if stdin.trim().is_empty() {
        DEFAULT_USER_MESSAGE
    } else {
        stdin
    }
}

/// The skill file's text; `skill` is relative to the config dir unless
/// absolute, and empty means none. As in Go it may be anywhere: the
/// user's own agent file or `--skill` names it. A FIFO, a device or a
/// file over [`read::PROMPT_LIMIT`] is an error.
pub fn load_skill(skill: &str, config_dir: &Path) -> Result<String> {
    if skill.is_empty() {
        return Ok(String::new());
    }
    let path = config_dir.join(skill);
    match read::lossy_text(&path, read::PROMPT_LIMIT) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(Error::caused(
            Error::Config(format!("skill not found: {}", path.display())),
            e,
        )),
        Err(e) => Err(Error::caused(
            Error::Config(format!(
                "failed to read skill: read {}: {}",
                path.display(),
                describe_io(&e)
            )),
            e,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, content: &str) -> ContextFile {
        ContextFile {
            path: path.into(),
            content: content.into(),
        }
    }

    #[test]
    fn layout_matches_go() {
        assert_eq!(system("", "", &[]), "");
        assert_eq!(system("P", "", &[]), "P");
        assert_eq!(system("P", "S", &[]), "P\n\n---\n\n## Skill\n\nS");
        assert_eq!(
            system(
                "",
                "",
                &[
                    file("a.rs", "fn a() {}"),
                    file("Makefile", "all:"),
                    file("d/.env", "X=1")
                ]
            ),
            "## Context Files\n\n### a.rs\n```rs\nfn a() {}\n```\n\n### Makefile\n```\nall:\n```\n\n### d/.env\n```env\nX=1\n```"
        );
        let mut s = system("P", "", &[]);
        add_memory(&mut s, "");
        assert_eq!(s, "P");
        add_memory(&mut s, "## t\nx\n\n");
        assert_eq!(s, "P\n\n---\n\n## Memory\n\n## t\nx\n\n");
        // Nothing before it: no separator.
        let mut s = system("", "S", &[]);
        assert_eq!(s, "## Skill\n\nS");
        let mut bare = String::new();
        add_memory(&mut bare, "## t\nx\n\n");
        assert_eq!(bare, "## Memory\n\n## t\nx\n\n");
        add_notes(&mut s);
        assert!(s.starts_with("## Skill\n\nS\n\n---\n\n## Notes\n\n"));
    }

    #[test]
    fn blank_stdin_gets_the_default_message() {
        assert_eq!(user_message(" \n\t"), DEFAULT_USER_MESSAGE);
        assert_eq!(user_message("x\n"), "x\n");
    }
}
