//! The template `agents init` writes, and the options that fill it in.

use super::quote::{toml_string, toml_text};

/// What `agents init` turns on in a new agent.
#[derive(Debug, Clone, Copy, Default)]
pub struct Enable {
    /// The run log, with the template's limits: the last 10 entries in
    /// the prompt rather than the whole log, and a warning on every run
    /// from 100 entries on (runs never trim).
    pub memory: bool,
    pub notes: bool,
    pub state: bool,
}

/// What `agents init` fills into the template besides the name.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fill<'a> {
    pub model: Option<&'a str>,
    /// The persona, written as `system_prompt`.
    pub system_prompt: Option<&'a str>,
    /// The skill path, written as given.
    pub skill: Option<&'a str>,
    pub enable: Enable,
}

/// The model line of the template, which [`axe_llm::parse_model`]
/// recognises, so an agent nobody filled in fails with a message that
/// says so.
pub use axe_llm::PLACEHOLDER_MODEL;

/// The template filled in by `agents init --model M --system TEXT --skill
/// PATH --memory --notes --state`: those lines set, and the tables asked
/// for on; the rest as [`scaffold`] has it.
pub fn scaffold_with(name: &str, fill: Fill) -> String {
    let (model, enable) = (fill.model, fill.enable);
    let mut text = scaffold(name);
    if let Some(model) = model {
        text = text.replace(
            &format!("model = \"{PLACEHOLDER_MODEL}\""),
            &format!("model = {}", toml_string(model)),
        );
    }
    if enable.memory {
        text = text.replace(
            "# [memory]\n# enabled = false\n# path = \"\"\n# last_n = 10\n# max_entries = 100\n",
            "[memory]\nenabled = true\n# path = \"\"\nlast_n = 10\nmax_entries = 100\n",
        );
    }
    if enable.notes {
        text = text.replace(
            "# [notes]\n# enabled = false\n",
            "[notes]\nenabled = true\n",
        );
    }
    if enable.state {
        text = text.replace(
            "# [state]\n# enabled = false\n",
            "[state]\nenabled = true\n",
        );
    }
    // The user's text goes in last, so no replacement above can match
    // inside it; every quote in it is escaped, so the skill's line, which
    // holds quotes, cannot match inside the persona either.
    if let Some(system) = fill.system_prompt {
        text = text.replacen(
            "\n# system_prompt = \"\"\n",
            &format!("\nsystem_prompt = {}\n", toml_text(system)),
            1,
        );
    }
    if let Some(skill) = fill.skill {
        text = text.replacen(
            "\n# skill = \"\"\n",
            &format!("\nskill = {}\n", toml_string(skill)),
            1,
        );
    }
    text
}

/// The template `agents init` writes: every field, the optional ones
/// commented out, in the Go `axe`'s words; every top-level key before the
/// first table, so that uncommented it stays top-level.
pub fn scaffold(name: &str) -> String {
    format!(
        r#"name = {}
description = ""

# Full provider/model per models.dev
model = "{PLACEHOLDER_MODEL}"

# Agent persona (optional)
# system_prompt = ""

# Default skill (optional, can be overridden with --skill flag)
# skill = ""

# Context files - glob patterns resolved from workdir or cwd (optional)
# files = []

# Working directory (optional). With file or command tools, the current
# directory is refused when it is /, the home or holds axe's own
# directories: name such a directory here (or with --workdir) to use it.
# workdir = ""

# Sub-agents this agent can invoke (optional)
# sub_agents = []

# Seconds for the whole run, sub-agents included (default 120; --timeout wins)
# timeout = 120

# Print the answer as it arrives, as --stream does
# stream = false

# Built-in tools the model may call (optional): list_directory, read_file,
# write_file, edit_file, run_command, url_fetch, web_search
# tools = []
# allowed_hosts = []      # url_fetch: [] = any public host

# [sub_agents_config]
# max_depth = 3
# parallel = true
# timeout = 120
# max_parallel = 8        # tool calls at once in the whole run (0 = 8)

# [artifacts]
# enabled = false
# dir = ""                # default: a directory for each run, removed after it
# default_write = false

# run_command runs inside bubblewrap where it works
# [sandbox]
# require = false         # refuse to run commands without it
# network = false

# Call again after a rate limit, an overload, a 5xx or a dropped connection
# [retry]
# max_retries = 3
# backoff = "exponential"   # or "linear", "fixed"
# initial_delay_ms = 500
# max_delay_ms = 30000

# Most tokens (input + output, every turn and sub-agent) a run may use;
# past it the run stops with exit 4 (also --budget-tokens)
# [budget]
# max_tokens = 100000

# MCP servers whose tools the model may call (optional); ${{VAR}} is read
# from the environment. stdio servers are started for the run.
# [[mcp_servers]]
# name = "my-tools"
# url = "https://my-mcp-server.example.com/sse"
# transport = "sse"              # or "streamable-http"
# headers = {{ Authorization = "Bearer ${{MY_TOKEN}}" }}
#
# [[mcp_servers]]
# name = "files"
# transport = "stdio"
# command = "npx"
# args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
# env = {{}}
# required = false               # default true: the run fails without it

# The run log of tasks and answers: the last last_n entries go into the
# prompt; from max_entries on, every run warns. Runs never trim it: axe mem
# trim AGENT keeps the last last_n (free), axe gc AGENT has a model review
# it first.
# [memory]
# enabled = false
# path = ""
# last_n = 10
# max_entries = 100
# redact = true          # credentials out of all memory (default: config.toml's, else on)

# [params]
# temperature = 0.3
# max_tokens = 4096
# response_format = "json_object"   # "text", or {{ type = "json_schema", schema = {{ ... }} }}
# cache = true                      # prompt caching; false turns it off

# Notes: world facts, MEMORY.md and daily logs, read and written by the
# model through tools (recall, remember, reflect, learn_fact, search_notes)
# [notes]
# enabled = false
# workspace = ""          # default: <data>/axe/notes; relative: from this directory
# recall_days = 3
# recall_chars = 24000
# max_memory_chars = 10000
# max_topic_chars = 10000

# Structured state: task progress, decisions, errors and key facts, fed by
# "AXE_MEMORY: TYPE text" lines the model writes (see axe-state-ingest)
# [state]
# enabled = false
# path = ""               # default: <data>/axe/state/<agent>.json
# max_entries = 100
# context_budget = 3000

# One character budget over every kind above: the run log's entries,
# MEMORY.md, world facts, daily logs and the state go into the prompt as
# one block, most wanted first (see axe-context)
# [context]
# budget = 8000
# order = ["state", "memory", "log", "world", "daily"]
"#,
        toml_string(name)
    )
}

/// The scaffold with every commented setting and section uncommented:
/// what a user gets who turns everything on, for the tests that hold the
/// scaffold to the parser and to the structs.
#[cfg(test)]
pub fn scaffold_uncommented(name: &str) -> String {
    scaffold(name)
        .lines()
        .map(|l| match l.strip_prefix("# ") {
            Some(rest) if rest.starts_with('[') || rest.contains(" = ") => rest,
            _ => l,
        })
        .map(|l| format!("{l}\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{parse, validate};
    use axe_base::count::Count;
    use axe_llm::ResponseFormat;

    #[test]
    fn scaffold_includes_memory_fields() {
        let all = Enable {
            memory: true,
            notes: true,
            state: true,
        };
        let fill = Fill {
            model: Some("openai/q\"x"),
            enable: all,
            ..Fill::default()
        };
        let filled = parse(&scaffold_with("x", fill)).unwrap();
        assert_eq!(filled.model, "openai/q\"x");
        assert!(filled.memory.enabled && filled.notes.enabled && filled.state.enabled);
        // The template's recommendation, not the whole log forever.
        assert_eq!(
            (filled.memory.last_n, filled.memory.max_entries),
            (Count(10), Count(100))
        );
        assert_eq!(filled.memory.path, "", "the rest stays commented");
        assert!(filled.context.budget.is_none());
        let plain = parse(&scaffold_with("x", Fill::default())).unwrap();
        assert!(!plain.memory.enabled && !plain.notes.enabled && !plain.state.enabled);
        assert_eq!(plain.model, PLACEHOLDER_MODEL);
        let s = scaffold("x");
        assert!(s.contains("# last_n = 10"));
        assert!(s.contains("# max_entries = 100"));
        assert!(s.contains("# [memory]\n# enabled = false\n# path = \"\"\n"));
    }

    #[test]
    fn every_setting_the_scaffold_shows_is_valid_once_uncommented() {
        let text = scaffold_uncommented("x");
        let cfg = parse(&text).unwrap();
        validate(&cfg).unwrap();
        assert_eq!((cfg.timeout, cfg.stream), (Count(120), false));
        assert_eq!(cfg.retry.max_retries, Count(3));
        assert_eq!(cfg.budget.max_tokens, Count(100_000));
        assert_eq!(
            cfg.params.response_format(),
            Some(ResponseFormat::JsonObject)
        );
        assert_eq!(cfg.params.cache, Some(true));
    }

    #[test]
    fn scaffold_keeps_any_persona_and_skill_exactly() {
        let all = Enable {
            memory: true,
            notes: true,
            state: true,
        };
        for text in [
            "one line",
            "two\nlines",
            "\nstarts with a newline",
            "ends with a quote\"",
            "ends with a newline\n",
            "\"\"\"\nthree quotes\"\"\"\"",
            "back\\slash\\\nand \\\"",
            "tab\there\r\ncrlf\rcr\u{7f}del\u{1}",
            // The template's own lines, which must stay the user's text.
            "# [notes]\n# enabled = false\n# skill = \"\"\nmodel = \"provider/model\"",
            "unicode: h\u{e9}llo \u{2028} \u{1F600}\n",
        ] {
            let fill = Fill {
                model: Some("a/b"),
                system_prompt: Some(text),
                skill: Some(text),
                enable: all,
            };
            let scaffold = scaffold_with("x", fill);
            let cfg = parse(&scaffold).unwrap_or_else(|e| panic!("{text:?}: {e}\n{scaffold}"));
            assert_eq!(
                (cfg.system_prompt.as_str(), cfg.skill.as_str()),
                (text, text)
            );
            assert_eq!(cfg.model, "a/b");
            assert!(cfg.memory.enabled && cfg.notes.enabled && cfg.state.enabled);
        }
    }

    #[test]
    fn scaffold_parses_and_names_the_agent() {
        let cfg = parse(&scaffold("we\"ird")).unwrap();
        assert_eq!(cfg.name, "we\"ird");
        assert_eq!(cfg.model, PLACEHOLDER_MODEL);
    }
}
