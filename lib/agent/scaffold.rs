//! The template `agents init` writes, as data: its lines in order, prose
//! and settings, each setting shown or commented out. [`Fill`]'s options
//! are settings shown with a value ([`Fill::sets`]), applied to the data,
//! never to the text, so a change of wording cannot make one silently do
//! nothing; a table is shown when one of its settings is. The tests hold
//! the template to the agent's structs: every field is in it, and every
//! setting in it is a field.

use std::borrow::Cow;

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

/// A setting a fill shows: `key` of `table` (`""`: the top level), with
/// its value as TOML, or the template's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Set {
    pub table: &'static str,
    pub key: &'static str,
    pub value: Option<String>,
}

impl Fill<'_> {
    /// The settings this fill shows, the tables it turns on with their
    /// `enabled` and, for the run log, the template's limits.
    pub fn sets(&self) -> Vec<Set> {
        let set = |table, key, value| Set { table, key, value };
        let mut out = Vec::new();
        if let Some(model) = self.model {
            out.push(set("", "model", Some(toml_string(model))));
        }
        if let Some(text) = self.system_prompt {
            out.push(set("", "system_prompt", Some(toml_text(text))));
        }
        if let Some(skill) = self.skill {
            out.push(set("", "skill", Some(toml_string(skill))));
        }
        let on = || Some("true".to_owned());
        if self.enable.memory {
            out.push(set("memory", "enabled", on()));
            out.push(set("memory", "last_n", None));
            out.push(set("memory", "max_entries", None));
        }
        if self.enable.notes {
            out.push(set("notes", "enabled", on()));
        }
        if self.enable.state {
            out.push(set("state", "enabled", on()));
        }
        out
    }
}

/// The model line of the template, which [`axe_llm::parse_model`]
/// recognises, so an agent nobody filled in fails with a message that
/// says so.
pub use axe_llm::PLACEHOLDER_MODEL;

/// A line of the template.
#[derive(Debug, Clone, Copy)]
enum Line {
    /// `# text`, or `#` alone for none.
    Say(&'static str),
    Blank,
    /// A table's header as written (`[memory]`, `[[mcp_servers]]`): the
    /// settings after it, up to the next, are its.
    Table(&'static str),
    Setting(Setting),
}

/// `key = value` and what is written after it (a note, with the spaces
/// that line it up); `shown` ones are not commented out.
#[derive(Debug, Clone, Copy)]
struct Setting {
    key: &'static str,
    value: &'static str,
    note: &'static str,
    shown: bool,
}

const fn say(text: &'static str) -> Line {
    Line::Say(text)
}

const fn table(header: &'static str) -> Line {
    Line::Table(header)
}

/// A setting commented out.
const fn set(key: &'static str, value: &'static str) -> Line {
    noted(key, value, "")
}

const fn noted(key: &'static str, value: &'static str, note: &'static str) -> Line {
    Line::Setting(Setting {
        key,
        value,
        note,
        shown: false,
    })
}

/// A setting every agent has. Its value here is the one a new agent
/// gets, except the name's and the model's, which are computed.
const fn shown(key: &'static str, value: &'static str) -> Line {
    Line::Setting(Setting {
        key,
        value,
        note: "",
        shown: true,
    })
}

use Line::Blank;

/// The template, in the Go `axe`'s words: every field, the optional ones
/// commented out; every top-level key before the first table, so that
/// uncommented it stays top-level.
const TEMPLATE: &[Line] = &[
    shown("name", ""),
    shown("description", "\"\""),
    Blank,
    say("Full provider/model per models.dev"),
    shown("model", ""),
    Blank,
    say("Agent persona (optional)"),
    set("system_prompt", "\"\""),
    Blank,
    say("Default skill (optional, can be overridden with --skill flag)"),
    set("skill", "\"\""),
    Blank,
    say("Context files - glob patterns resolved from workdir or cwd (optional)"),
    set("files", "[]"),
    Blank,
    say("Working directory (optional). With file or command tools, the current"),
    say("directory is refused when it is /, the home or holds axe's own"),
    say("directories: name such a directory here (or with --workdir) to use it."),
    set("workdir", "\"\""),
    Blank,
    say("Sub-agents this agent can invoke (optional)"),
    set("sub_agents", "[]"),
    Blank,
    say("Seconds for the whole run, sub-agents included (default 120; --timeout wins)"),
    set("timeout", "120"),
    Blank,
    say("Print the answer as it arrives, as --stream does"),
    set("stream", "false"),
    Blank,
    say("Built-in tools the model may call (optional): list_directory, read_file,"),
    say("write_file, edit_file, run_command, url_fetch, web_search"),
    set("tools", "[]"),
    noted(
        "allowed_hosts",
        "[]",
        "      # url_fetch: [] = any public host",
    ),
    Blank,
    table("[sub_agents_config]"),
    set("max_depth", "3"),
    set("parallel", "true"),
    set("timeout", "120"),
    noted(
        "max_parallel",
        "8",
        "        # tool calls at once in the whole run (0 = 8)",
    ),
    Blank,
    table("[artifacts]"),
    set("enabled", "false"),
    noted(
        "dir",
        "\"\"",
        "                # default: a directory for each run, removed after it",
    ),
    set("default_write", "false"),
    Blank,
    say("run_command runs inside bubblewrap, else Landlock, where either works"),
    table("[sandbox]"),
    noted(
        "engine",
        "\"auto\"",
        "         # or \"bwrap\", \"landlock\"",
    ),
    noted(
        "require",
        "false",
        "         # refuse to run commands without it",
    ),
    set("network", "false"),
    Blank,
    say("Call again after a rate limit, an overload, a 5xx or a dropped connection"),
    table("[retry]"),
    set("max_retries", "3"),
    noted(
        "backoff",
        "\"exponential\"",
        "   # or \"linear\", \"fixed\"",
    ),
    set("initial_delay_ms", "500"),
    set("max_delay_ms", "30000"),
    Blank,
    say("Most tokens (input + output, every turn and sub-agent) a run may use;"),
    say("past it the run stops with exit 4 (also --budget-tokens)"),
    table("[budget]"),
    set("max_tokens", "100000"),
    Blank,
    say("MCP servers whose tools the model may call (optional); ${VAR} is read"),
    say("from the environment. stdio servers are started for the run."),
    table("[[mcp_servers]]"),
    set("name", "\"my-tools\""),
    set("url", "\"https://my-mcp-server.example.com/sse\""),
    noted(
        "transport",
        "\"sse\"",
        "              # or \"streamable-http\"",
    ),
    set("headers", "{ Authorization = \"Bearer ${MY_TOKEN}\" }"),
    say(""),
    table("[[mcp_servers]]"),
    set("name", "\"files\""),
    set("transport", "\"stdio\""),
    set("command", "\"npx\""),
    set(
        "args",
        "[\"-y\", \"@modelcontextprotocol/server-filesystem\", \".\"]",
    ),
    set("env", "{}"),
    noted(
        "required",
        "false",
        "               # default true: the run fails without it",
    ),
    Blank,
    say("The run log of tasks and answers: the last last_n entries go into the"),
    say("prompt; from max_entries on, every run warns. Runs never trim it: axe mem"),
    say("trim AGENT keeps the last last_n (free), axe gc AGENT has a model review"),
    say("it first."),
    table("[memory]"),
    set("enabled", "false"),
    set("path", "\"\""),
    set("last_n", "10"),
    set("max_entries", "100"),
    noted(
        "redact",
        "true",
        "          # credentials out of all memory (default: config.toml's, else on)",
    ),
    Blank,
    table("[params]"),
    set("temperature", "0.3"),
    set("max_tokens", "4096"),
    noted(
        "response_format",
        "\"json_object\"",
        "   # \"text\", or { type = \"json_schema\", schema = { ... } }",
    ),
    noted(
        "cache",
        "true",
        "                      # prompt caching; false turns it off",
    ),
    Blank,
    say("Notes: world facts, MEMORY.md and daily logs, read and written by the"),
    say("model through tools (recall, remember, reflect, learn_fact, search_notes)"),
    table("[notes]"),
    set("enabled", "false"),
    noted(
        "workspace",
        "\"\"",
        "          # default: <data>/axe/notes; relative: from this directory",
    ),
    set("recall_days", "3"),
    set("recall_chars", "24000"),
    set("max_memory_chars", "10000"),
    set("max_topic_chars", "10000"),
    noted(
        "consolidate_every",
        "\"\"",
        "  # \"24h\": after a run, fold new daily entries into MEMORY.md when due",
    ),
    set("consolidate_min_entries", "5"),
    Blank,
    say("Structured state: task progress, decisions, errors and key facts, fed by"),
    say("\"AXE_MEMORY: TYPE text\" lines the model writes (see axe-state-ingest)"),
    table("[state]"),
    set("enabled", "false"),
    noted(
        "path",
        "\"\"",
        "               # default: <data>/axe/state/<agent>.json",
    ),
    set("max_entries", "100"),
    set("context_budget", "3000"),
    Blank,
    say("One character budget over every kind above: the run log's entries,"),
    say("MEMORY.md, world facts, daily logs and the state go into the prompt as"),
    say("one block, most wanted first (see axe-context)"),
    table("[context]"),
    set("budget", "8000"),
    set(
        "order",
        "[\"state\", \"memory\", \"log\", \"world\", \"daily\"]",
    ),
];

/// Which settings a rendering shows.
enum Showing<'a> {
    /// Those the template shows, and those the fill sets.
    Filled(&'a [Set]),
    /// Every one, with the template's values.
    #[cfg(test)]
    All,
}

/// The lines of the template, each with the table it is in (`""`: the
/// top level; `memory` for `[memory]`).
fn lines() -> impl Iterator<Item = (Line, &'static str)> {
    TEMPLATE.iter().scan("", |at, &line| {
        if let Line::Table(header) = line {
            *at = header.trim_matches(['[', ']']);
        }
        Some((line, *at))
    })
}

/// The template for agent `name`, as `showing` has it.
fn render(name: &str, showing: Showing) -> String {
    // Each line with the value it shows: `None` for one commented out.
    let lines: Vec<(Line, Option<Cow<str>>)> = lines()
        .map(|(line, at)| {
            let Line::Setting(s) = line else {
                return (line, None);
            };
            let value = match (at, s.key) {
                ("", "name") => Cow::Owned(toml_string(name)),
                ("", "model") => Cow::Owned(toml_string(PLACEHOLDER_MODEL)),
                _ => Cow::Borrowed(s.value),
            };
            let shown = match &showing {
                #[cfg(test)]
                Showing::All => Some(value),
                Showing::Filled(sets) => {
                    match sets.iter().find(|x| (x.table, x.key) == (at, s.key)) {
                        Some(Set { value: Some(v), .. }) => Some(Cow::Borrowed(v.as_str())),
                        Some(Set { value: None, .. }) => Some(value),
                        None => s.shown.then_some(value),
                    }
                }
            };
            (line, shown)
        })
        .collect();
    let mut out = String::new();
    for (i, (line, value)) in lines.iter().enumerate() {
        match line {
            Line::Blank => out.push('\n'),
            Line::Say("") => out.push_str("#\n"),
            Line::Say(text) => {
                out.push_str("# ");
                out.push_str(text);
                out.push('\n');
            }
            Line::Table(header) => {
                // Shown when one of its settings is.
                let shown = lines[i + 1..]
                    .iter()
                    .take_while(|(l, _)| !matches!(l, Line::Table(_)))
                    .any(|(_, v)| v.is_some());
                if !shown {
                    out.push_str("# ");
                }
                out.push_str(header);
                out.push('\n');
            }
            Line::Setting(s) => {
                let value = match value {
                    Some(v) => v,
                    None => {
                        out.push_str("# ");
                        s.value
                    }
                };
                out.push_str(s.key);
                out.push_str(" = ");
                out.push_str(value);
                out.push_str(s.note);
                out.push('\n');
            }
        }
    }
    // A kind whose section the template does not lay out adds its own.
    for kind in axe_memory::kinds::KINDS {
        if !kind.template.is_empty() {
            out.push('\n');
            out.push_str(kind.template);
        }
    }
    out
}

/// The template filled in by `agents init --model M --system TEXT --skill
/// PATH --memory --notes --state`: those settings shown with their
/// values, and the tables asked for on; the rest as [`scaffold`] has it.
pub fn scaffold_with(name: &str, fill: Fill) -> String {
    render(name, Showing::Filled(&fill.sets()))
}

/// The template `agents init` writes.
pub fn scaffold(name: &str) -> String {
    render(name, Showing::Filled(&[]))
}

/// The scaffold with every setting and table shown: what a user gets who
/// turns everything on, for the tests that hold the scaffold to the
/// parser and to the structs.
#[cfg(test)]
pub fn scaffold_uncommented(name: &str) -> String {
    render(name, Showing::All)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse, validate};
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
        assert!(
            filled.memory.log.enabled && filled.memory.notes.enabled && filled.memory.state.enabled
        );
        // The template's recommendation, not the whole log forever.
        assert_eq!(
            (filled.memory.log.last_n, filled.memory.log.max_entries),
            (Count(10), Count(100))
        );
        assert_eq!(filled.memory.log.path, "", "the rest stays commented");
        assert!(filled.memory.context.budget.is_none());
        let plain = parse(&scaffold_with("x", Fill::default())).unwrap();
        assert!(
            !plain.memory.log.enabled && !plain.memory.notes.enabled && !plain.memory.state.enabled
        );
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
            assert!(cfg.memory.log.enabled && cfg.memory.notes.enabled && cfg.memory.state.enabled);
        }
    }

    #[test]
    fn scaffold_parses_and_names_the_agent() {
        let cfg = parse(&scaffold("we\"ird")).unwrap();
        assert_eq!(cfg.name, "we\"ird");
        assert_eq!(cfg.model, PLACEHOLDER_MODEL);
    }

    /// The settings of the template, as `(table, key)`.
    fn settings() -> Vec<(&'static str, &'static str)> {
        lines()
            .filter_map(|(line, at)| match line {
                Line::Setting(s) => Some((at, s.key)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn every_setting_a_fill_sets_is_in_the_template_once() {
        let all = Fill {
            model: Some("a/b"),
            system_prompt: Some("p"),
            skill: Some("s"),
            enable: Enable {
                memory: true,
                notes: true,
                state: true,
            },
        };
        let settings = settings();
        for set in all.sets() {
            let found = settings.iter().filter(|&&s| s == (set.table, set.key));
            assert_eq!(found.count(), 1, "{set:?}");
        }
    }

    #[test]
    fn every_field_of_an_agent_is_in_the_template() {
        use crate::AgentConfig;
        use axe_base::unknown::fields_at;
        use axe_memory::Settings;
        let settings = settings();
        let has = |table: &str, key: &str| settings.contains(&(table, key));
        // A kind whose template is its own text: its section is there.
        let own = |key: &str| {
            axe_memory::kinds::KINDS
                .iter()
                .find(|k| k.section == key && !k.template.is_empty())
        };
        fn fields<T: serde::de::DeserializeOwned>()
        -> Vec<(&'static str, Option<&'static [&'static str]>)> {
            fields_at::<T>(&[])
                .unwrap()
                .iter()
                .map(|&key| (key, fields_at::<T>(&[key])))
                .collect()
        }
        let mut all = fields::<AgentConfig>();
        all.extend(fields::<Settings>());
        for (key, table) in all {
            match table {
                Some(_) if own(key).is_some() => {
                    let text = scaffold("x");
                    assert!(
                        text.contains(&format!("# [{key}]\n")),
                        "[{key}] is not in the template"
                    );
                }
                Some(table) => {
                    for inner in table {
                        assert!(has(key, inner), "{key}.{inner} is not in the template");
                    }
                }
                // Examples of servers, not every field of one.
                None if key == "mcp_servers" => {
                    assert!(settings.iter().any(|(t, _)| *t == key), "{key}");
                }
                None => assert!(has("", key), "{key} is not in the template"),
            }
        }
    }

    #[test]
    fn the_template_shows_the_kinds_and_tools_there_are() {
        let cfg = parse(&scaffold_uncommented("x")).unwrap();
        assert_eq!(cfg.memory.context.order, axe_memory::MemoryKind::ORDER);
        let said: String = TEMPLATE
            .iter()
            .filter_map(|l| match l {
                Line::Say(text) => Some(*text),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join(" ");
        for tool in axe_tool_settings::builtin::NAMES {
            assert!(said.contains(tool), "the template does not name {tool}");
        }
    }
}
