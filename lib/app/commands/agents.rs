//! `axe-agents list|show|init|edit`: the agent files, as the Go
//! `axe agents` showed and made them (`mcp-login` is in mcp_login.rs).

use std::io::Write;

use serde::Serialize;

use super::args::{AGENT, AGENT_REQUIRED, AGENTS_DIR, required_agent};
use axe_agent::AgentConfig;
use axe_base::dirs::Dirs;
use axe_base::error::{Error, Result};
use axe_base::unknown::Unknown;
use axe_cli::{Arg, Command, Complete, Flag, Item, Matches, Rule, Run};
use axe_memory::kinds::{KINDS, Kind};
use axe_memory::log;
use axe_tool_settings::sandbox::Engine;

const NEW_AGENT: Arg = Arg {
    name: "AGENT",
    noun: "agent name",
    help: "The new agent's name",
    complete: Complete::Nothing,
    many: false,
};

pub const COMMAND: Command = Command {
    name: "axe-agents",
    about: "Manage agent configurations",
    usage: &["<COMMAND> [OPTIONS]"],
    args: &[],
    flags: &[],
    rules: &[],
    description: "\
Agent files are <name>.toml in the agents directories, looked up in order:
--agents-dir DIR when given, then ./axe/agents under the current directory,
then <config>/agents; the first that has the file wins. The file name
without .toml is the name that axe-run and the memory commands take.
`axe-config path` prints <config>.",
    run: Run::Subcommands(&[LIST, SHOW, CHECK, INIT, EDIT, super::mcp_login::MCP_LOGIN]),
};

const LIST: Command = Command {
    name: "axe-agents list",
    about: "List all agent configurations",
    usage: &["[OPTIONS]"],
    args: &[],
    flags: &[AGENTS_DIR, LIST_JSON],
    rules: &[],
    description: "\
Prints `agent - description` (or just the agent) for each agent file that
loads, sorted: the agent is the file name without .toml, the name axe-run
takes. A file whose name field says something else has it after the agent,
as in `copy (name = \"bad\")`. An agent from --agents-dir or ./axe/agents
has `[agents-dir]` or `[local]` at the end; one that another directory's
file of the same name hides is not listed.

A file that fails to load is not listed and gets one line on stderr,
`Warning: not listed: PATH: ERROR`, with the error axe-run would give;
the exit code is still 0. --json says where each agent comes from in
source (agents-dir, local or config) and lists the files that fail to
load in broken.",
    run: Run::Action(list),
};

const LIST_JSON: Flag = Flag::switch(
    "json",
    "Print {agents: [{agent, name, description, model, path, source}], broken: [{agent, path, source, error}]} as JSON",
);

const SHOW: Command = Command {
    name: "axe-agents show",
    about: "Show agent configuration details",
    usage: &["[OPTIONS] <AGENT>"],
    args: &[AGENT],
    flags: &[AGENTS_DIR, SHOW_JSON],
    rules: &[AGENT_REQUIRED],
    description: "\
Prints one labelled line per field that is set, in the Go axe's layout
(labels padded to 16 columns; longer labels such as `Memory MaxEntries:`
run into their value exactly as Go printed them). With --json every field
is printed, unset ones with their defaults, plus the agent file's path and
the memory log's path. Keys the file has that no setting takes (a typo, or
a newer Go axe's) end the text as `Unknown:` lines, and are in --json's
unknown: [{file, line, key, section, did_you_mean}].",
    run: Run::Action(show),
};

const SHOW_JSON: Flag = Flag::switch(
    "json",
    "Print the whole configuration, defaults included, as JSON",
);

const CHECK: Command = Command {
    name: "axe-agents check",
    about: "Check an agent file and config.toml for keys axe does not know",
    usage: &["[OPTIONS] <AGENT>"],
    args: &[AGENT],
    flags: &[AGENTS_DIR, CHECK_JSON],
    rules: &[AGENT_REQUIRED],
    description: "\
Loads the agent as axe-run does (an error is the same error), then prints
`<file>:<line>: unknown key K, ignored (did you mean ...?)` for each key of
its file and of config.toml that no setting takes, or `ok` when there is
none. Unknown keys are not errors: every command that reads the file warns
of them on stderr and goes on, as a file written for a newer Go axe must
still load.",
    run: Run::Action(check),
};

const CHECK_JSON: Flag = Flag::switch(
    "json",
    "Print {agent, path, unknown: [{file, line, key, section, did_you_mean}]} as JSON",
);

const INIT: Command = Command {
    name: "axe-agents init",
    about: "Create a new agent configuration file",
    usage: &["[OPTIONS] <AGENT>"],
    args: &[NEW_AGENT],
    flags: &[
        AGENTS_DIR,
        INIT_MODEL,
        INIT_SYSTEM,
        INIT_SKILL,
        INIT_MEMORY,
        INIT_NOTES,
        INIT_STATE,
        INIT_JSON,
    ],
    rules: &[Rule::Required(Item::Arg(&NEW_AGENT))],
    description: "\
Writes a commented template to <AGENT>.toml in --agents-dir when given, else
in ./axe/agents when that directory exists, else in <config>/agents
(creating the directory), and prints its path. An existing file is never replaced.
--model (or default_model in config.toml) fills in the model, --system the
persona and --skill the skill; --memory, --notes and --state turn those
kinds of memory on, so a new agent can run without an editor.

--system's text is written so that it reads back exactly, line breaks,
quotes and all. --skill's path is written as given; a relative one is read
from <config> at run time, so init warns when no file is there.

--memory keeps the template's limits: the last 10 entries go into the
prompt, and from 100 entries on every run warns that the log is full.
Runs never trim it: `axe mem trim AGENT` keeps the last 10 without a model
call; `axe gc AGENT` has the model review the log first, a paid call.",
    run: Run::Action(init),
};

const INIT_MODEL: Flag = Flag::with_value(
    "model",
    "PROVIDER/MODEL",
    "Write this model [default: default_model in config.toml, else a placeholder]",
)
.short('m')
.completes(Complete::Model);

const INIT_SYSTEM: Flag = Flag::with_value(
    "system",
    "TEXT",
    "Write this persona as system_prompt (empty: none)",
);

const INIT_SKILL: Flag = Flag::with_value(
    "skill",
    "PATH",
    "Write this skill path as given (relative: from <config>; empty: none)",
)
.completes(Complete::File);

const INIT_MEMORY: Flag = Flag::switch(
    "memory",
    "Turn the run log on: [memory] enabled, last_n = 10, max_entries = 100 (runs warn from 100 entries on)",
);

const INIT_NOTES: Flag = Flag::switch("notes", "Turn notes memory on ([notes] enabled = true)");

const INIT_STATE: Flag = Flag::switch("state", "Turn structured state on ([state] enabled = true)");

const INIT_JSON: Flag = Flag::switch("json", "Print {agent, path} as JSON");

const EDIT: Command = Command {
    name: "axe-agents edit",
    about: "Edit an agent configuration file",
    usage: &["<AGENT>"],
    args: &[AGENT],
    flags: &[AGENTS_DIR],
    rules: &[AGENT_REQUIRED],
    description: "\
Runs `$EDITOR <path>` on the agent's file, with the terminal passed
through; without $EDITOR, $VISUAL, else the system's `editor`, else `vi`.
The variable may hold arguments (`code --wait`); it is split on
whitespace. The editor's failure is this command's failure.",
    run: Run::Action(edit),
};

/// A file `agents list` leaves out, in its JSON.
#[derive(Serialize)]
struct Unlisted<'a> {
    agent: &'a str,
    path: String,
    source: axe_agent::Source,
    error: &'a str,
}

#[derive(Serialize)]
struct Listed<'a> {
    agent: &'a str,
    name: &'a str,
    description: &'a str,
    model: &'a str,
    path: String,
    source: axe_agent::Source,
}

fn list(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let agents = super::args::agents(m)?;
    // By file name, which is what the user types: Go listed and sorted
    // by the `name` field, so copies of one file all showed its name.
    let (found, broken) = agents.list_all()?;
    for file in &broken {
        axe_base::stderr::note(format_args!(
            "Warning: not listed: {}: {}",
            file.path.display(),
            file.error
        ));
    }
    if m.flag(&LIST_JSON) {
        let listed: Vec<Listed> = found
            .iter()
            .map(|found| Listed {
                agent: &found.stem,
                name: &found.config.name,
                description: &found.config.description,
                model: &found.config.model,
                path: found.path.to_string_lossy().into_owned(),
                source: found.source,
            })
            .collect();
        let broken: Vec<Unlisted> = broken
            .iter()
            .map(|file| Unlisted {
                agent: &file.stem,
                path: file.path.to_string_lossy().into_owned(),
                source: file.source,
                error: &file.error,
            })
            .collect();
        #[derive(Serialize)]
        struct List<'a> {
            agents: Vec<Listed<'a>>,
            broken: Vec<Unlisted<'a>>,
        }
        return axe_cli::write_json(
            out,
            &List {
                agents: listed,
                broken,
            },
        );
    }
    for found in &found {
        let cfg = &found.config;
        let mut line = found.stem.clone();
        if cfg.name != found.stem {
            line.push_str(&format!(" (name = {})", axe_agent::toml_string(&cfg.name)));
        }
        if !cfg.description.is_empty() {
            line.push_str(&format!(" - {}", cfg.description));
        }
        // The config directory's agents print as in Go.
        if found.source != axe_agent::Source::Config {
            line.push_str(&format!(" [{}]", found.source.name()));
        }
        writeln!(out, "{line}").map_err(Error::Output)?;
    }
    Ok(())
}

#[derive(Serialize)]
struct Shown<'a> {
    agent: &'a str,
    path: String,
    memory_path: String,
    #[serde(flatten)]
    config: &'a AgentConfig,
    unknown: &'a [Unknown],
}

fn show(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let agents = super::args::agents(m)?;
    let name = required_agent(m)?;
    // The unknown keys are shown here, not warned of.
    let loaded = agents.load_quietly(name)?;
    let cfg = &loaded.config;
    if m.flag(&SHOW_JSON) {
        let shown = Shown {
            agent: name,
            path: loaded.path.to_string_lossy().into_owned(),
            memory_path: axe_memory::log::file_path(agents.dirs(), name, &cfg.memory.log.path)?
                .to_string_lossy()
                .into_owned(),
            config: cfg,
            unknown: &loaded.unknown,
        };
        return axe_cli::write_json(out, &shown);
    }
    let mut text = show_text(agents.dirs(), cfg);
    for u in &loaded.unknown {
        let key = match u.section {
            true => format!("[{}]", u.key),
            false => u.key.clone(),
        };
        text.push_str(&format!("{:<16}{key} at line {}", "Unknown:", u.line));
        if let Some(near) = &u.did_you_mean {
            match u.section {
                true => text.push_str(&format!(" (did you mean [{near}]?)")),
                false => text.push_str(&format!(" (did you mean {near}?)")),
            }
        }
        text.push('\n');
    }
    out.write_all(text.as_bytes()).map_err(Error::Output)?;
    Ok(())
}

fn check(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let agents = super::args::agents(m)?;
    let name = required_agent(m)?;
    let loaded = agents.load_quietly(name)?;
    let (_, in_config) = axe_agent::config::load_quietly(agents.dirs())?;
    let unknown: Vec<&Unknown> = loaded.unknown.iter().chain(&in_config).collect();
    if m.flag(&CHECK_JSON) {
        return axe_cli::write_json(
            out,
            &serde_json::json!({
                "agent": name,
                "path": loaded.path.to_string_lossy(),
                "unknown": unknown,
            }),
        );
    }
    let mut text = String::new();
    for u in &unknown {
        text.push_str(&u.located());
        text.push('\n');
    }
    if unknown.is_empty() {
        text.push_str("ok\n");
    }
    out.write_all(text.as_bytes()).map_err(Error::Output)?;
    Ok(())
}

/// One line of `agents show`: its label, whether it is shown, its value.
type Line = (&'static str, bool, String);

/// Go's `agents show` layout: `%-16s` labels, only the fields that are set.
fn show_text(dirs: &Dirs, cfg: &AgentConfig) -> String {
    // The run log's lines where Go has them, before the parameters; every
    // other kind's after them, in the kinds' order.
    let (log, others): (Vec<&Kind>, Vec<&Kind>) =
        KINDS.iter().copied().partition(|k| *k == &log::KIND);
    [
        agent_lines(cfg),
        sub_agent_lines(cfg),
        run_lines(cfg),
        kinds_lines(dirs, cfg, &log),
        params_lines(&cfg.params),
        kinds_lines(dirs, cfg, &others),
        context_lines(cfg),
    ]
    .iter()
    .flatten()
    .filter(|(_, set, _)| *set)
    .map(|(label, _, value)| format!("{label:<16}{value}\n"))
    .collect()
}

/// What the agent is and what it may touch.
fn agent_lines(cfg: &AgentConfig) -> Vec<Line> {
    vec![
        ("Name:", true, cfg.name.clone()),
        (
            "Description:",
            !cfg.description.is_empty(),
            cfg.description.clone(),
        ),
        ("Model:", true, cfg.model.clone()),
        (
            "System Prompt:",
            !cfg.system_prompt.is_empty(),
            cfg.system_prompt.clone(),
        ),
        ("Skill:", !cfg.skill.is_empty(), cfg.skill.clone()),
        ("Files:", !cfg.files.is_empty(), cfg.files.join(", ")),
        ("Workdir:", !cfg.workdir.is_empty(), cfg.workdir.clone()),
        ("Tools:", !cfg.tools.is_empty(), cfg.tools.join(", ")),
        (
            "Allowed Hosts:",
            !cfg.allowed_hosts.is_empty(),
            cfg.allowed_hosts.join(", "),
        ),
        (
            "Artifacts:",
            cfg.artifacts.enabled,
            match cfg.artifacts.dir.is_empty() {
                true => "a directory for each run".into(),
                false => cfg.artifacts.dir.clone(),
            },
        ),
        (
            "Sandbox:",
            cfg.sandbox.require || cfg.sandbox.network || cfg.sandbox.engine != Engine::Auto,
            format!(
                "{}require = {}, network = {}",
                match cfg.sandbox.engine {
                    Engine::Auto => "",
                    Engine::Bwrap => "engine = bwrap, ",
                    Engine::Landlock => "engine = landlock, ",
                },
                cfg.sandbox.require,
                cfg.sandbox.network
            ),
        ),
    ]
}

/// Its sub-agents, their bounds, and its MCP servers.
fn sub_agent_lines(cfg: &AgentConfig) -> Vec<Line> {
    let sub = &cfg.sub_agents_config;
    let subs = !cfg.sub_agents.is_empty();
    vec![
        ("Sub-Agents:", subs, cfg.sub_agents.join(", ")),
        (
            "Max Depth:",
            subs && sub.max_depth.get() != 0,
            sub.max_depth.to_string(),
        ),
        (
            "Parallel:",
            subs && sub.parallel.is_some(),
            sub.parallel.unwrap_or(true).to_string(),
        ),
        (
            "Sub-Agent Timeout:",
            subs && sub.timeout.get() != 0,
            sub.timeout.to_string(),
        ),
        // Not only sub-agents: it bounds any reply's tool calls.
        (
            "Max Parallel:",
            sub.max_parallel.get() != 0,
            sub.max_parallel.to_string(),
        ),
        (
            "MCP Servers:",
            !cfg.mcp_servers.is_empty(),
            cfg.mcp_servers
                .iter()
                .map(|m| format!("{} ({})", m.name, m.transport))
                .collect::<Vec<_>>()
                .join(", "),
        ),
    ]
}

/// A run's bounds: its time, its stream, its retries, its token budget.
fn run_lines(cfg: &AgentConfig) -> Vec<Line> {
    vec![
        (
            "Timeout:",
            cfg.timeout.get() != 0,
            format!("{}s", cfg.timeout),
        ),
        ("Stream:", cfg.stream, "true".into()),
        (
            "Retry:",
            cfg.retry.max_retries.get() != 0,
            retry_line(&cfg.retry),
        ),
        (
            "Budget:",
            cfg.budget.max_tokens.get() != 0,
            format!("{} tokens", cfg.budget.max_tokens),
        ),
    ]
}

/// Each of `kinds`' lines, as its folder shows its section.
fn kinds_lines(dirs: &Dirs, cfg: &AgentConfig, kinds: &[&Kind]) -> Vec<Line> {
    kinds
        .iter()
        .flat_map(|k| (k.show)(dirs, &cfg.memory))
        .collect()
}

/// `[params]`, what the model is asked with.
fn params_lines(params: &axe_agent::ParamsConfig) -> Vec<Line> {
    vec![
        (
            "Temperature:",
            params.temperature != 0.0,
            go_float(params.temperature),
        ),
        (
            "Max Tokens:",
            params.max_tokens != 0,
            params.max_tokens.to_string(),
        ),
        (
            "Answer Format:",
            params.response_format.is_some(),
            params
                .response_format
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default(),
        ),
        (
            "Cache:",
            params.cache.is_some(),
            params.cache.unwrap_or(true).to_string(),
        ),
    ]
}

/// `[context]`, the one budget over every kind.
fn context_lines(cfg: &AgentConfig) -> Vec<Line> {
    vec![
        (
            "Context Budget:",
            cfg.memory.context.budget.is_some(),
            cfg.memory.context.budget.unwrap_or_default().to_string(),
        ),
        (
            "Context Order:",
            cfg.memory.context.budget.is_some(),
            cfg.memory
                .context
                .order()
                .iter()
                .map(|k| k.name())
                .collect::<Vec<_>>()
                .join(", "),
        ),
    ]
}

/// `[retry]` on one line: `3 (exponential, 500ms to 30000ms)`, the
/// delays in effect.
fn retry_line(retry: &axe_agent::RetryConfig) -> String {
    let p = retry.policy();
    format!(
        "{} ({}, {}ms to {}ms)",
        p.max_retries,
        p.backoff.name(),
        p.initial_delay.as_millis(),
        p.max_delay.as_millis()
    )
}

/// A float as Go's `%g` prints it: the shortest digits that read back the
/// same, in exponent form (`1e-05`, `1e+06`) below 1e-4 or from 1e6 on.
/// A count as `agents show` prints it: `10`, or `0 (what 0 means)`.
fn go_float(f: f64) -> String {
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..6).contains(&exp) {
        format!("{f}")
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    }
}

fn init(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let agents = super::args::agents(m)?;
    let name = required_agent(m)?;
    // Every flag is read before config.toml is, as cobra parsed flags
    // first: a malformed one is the error even when the config is broken.
    // Blank is "not given", as `-p ""` is for axe-run.
    let system_prompt = m.string(&INIT_SYSTEM)?.filter(|s| !s.is_empty());
    let skill = m.string(&INIT_SKILL)?.filter(|s| !s.is_empty());
    let config;
    let model = match m.string(&INIT_MODEL)? {
        Some(model) => {
            // A typo is caught now, not at the first run.
            axe_llm::parse_model(model)?;
            Some(model)
        }
        None => {
            config = axe_agent::config::load(&agents)?;
            config.default_model()?
        }
    };
    let fill = axe_agent::Fill {
        model,
        system_prompt,
        skill,
        enable: axe_agent::Enable {
            memory: m.flag(&INIT_MEMORY),
            notes: m.flag(&INIT_NOTES),
            state: m.flag(&INIT_STATE),
        },
    };
    let path = axe_agent::init::agent(&agents, name, fill)?;
    if let Some(skill) = fill.skill {
        warn_missing_skill(agents.dirs(), skill)?;
    }
    if m.flag(&INIT_JSON) {
        return axe_cli::write_json(
            out,
            &serde_json::json!({ "agent": name, "path": path.to_string_lossy() }),
        );
    }
    writeln!(out, "{}", path.display()).map_err(Error::Output)?;
    Ok(())
}

/// A skill path that runs will not find is written anyway (the file may
/// come later) but said at once: a path relative to the current directory
/// is the likely mistake, since runs read it from the config directory.
fn warn_missing_skill(dirs: &Dirs, skill: &str) -> Result<()> {
    let config_dir = dirs.config()?;
    let path = config_dir.join(skill);
    if !path.is_file() {
        axe_base::stderr::note(format_args!(
            "Warning: skill not found: {} (a relative skill path is read from {})",
            path.display(),
            config_dir.display()
        ));
    }
    Ok(())
}

fn edit(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let agents = super::args::agents(m)?;
    let editor = editor()?;
    let mut words = editor.split_whitespace();
    let program = words.next().unwrap_or("vi");
    let name = required_agent(m)?;
    let path = agents.file_path(name)?;
    if !path.is_file() {
        return Err(agents.not_found(name));
    }
    // Whatever we printed so far must come before the editor's screen.
    out.flush().map_err(Error::Output)?;
    let status = std::process::Command::new(program)
        .args(words)
        .arg(&path)
        .status()
        .map_err(|e| {
            Error::caused(
                Error::Child(format!(
                    "exec: \"{program}\": {}",
                    axe_base::error::describe_io(&e)
                )),
                e,
            )
        })?;
    if !status.success() {
        return Err(Error::Child(match status.code() {
            Some(code) => format!("exit status {code}"),
            None => format!("{program} was killed: {status}"),
        }));
    }
    Ok(())
}

/// The editor to run: `$EDITOR`, else `$VISUAL`, else the system's
/// `editor` (Debian's alternative), else `vi`, the first found.
fn editor() -> Result<String> {
    for var in ["EDITOR", "VISUAL"] {
        if let Some(value) = std::env::var(var).ok().filter(|v| !v.trim().is_empty()) {
            return Ok(value);
        }
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    ["editor", "vi"]
        .into_iter()
        .find(|program| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
        .map(str::to_owned)
        .ok_or_else(|| {
            Error::Child(
                "no editor: $EDITOR and $VISUAL are not set, and neither editor nor vi is on PATH"
                    .into(),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_like_go_g() {
        for (f, go) in [
            (0.3, "0.3"),
            (1.0, "1"),
            (0.7, "0.7"),
            (2.5, "2.5"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (123456.0, "123456"),
            (1000000.0, "1e+06"),
            (1.5e300, "1.5e+300"),
        ] {
            assert_eq!(go_float(f), go, "{f}");
        }
    }

    #[test]
    fn show_prints_only_what_is_set() {
        let cfg = axe_agent::parse("name = \"a\"\nmodel = \"x/y\"\n").unwrap();
        assert_eq!(
            show_text(&Dirs::from_env(), &cfg),
            "Name:           a\nModel:          x/y\n"
        );
    }

    #[test]
    fn show_prints_the_run_options_that_are_set() {
        let cfg = axe_agent::parse(
            "name = \"a\"\nmodel = \"x/y\"\ntimeout = 30\nstream = true\n\
             [retry]\nmax_retries = 2\nbackoff = \"linear\"\n[budget]\nmax_tokens = 500\n\
             [params]\nresponse_format = \"json_object\"\ncache = false\n",
        )
        .unwrap();
        assert_eq!(
            show_text(&Dirs::from_env(), &cfg),
            "Name:           a\nModel:          x/y\nTimeout:        30s\nStream:         true\n\
             Retry:          2 (linear, 500ms to 30000ms)\nBudget:         500 tokens\n\
             Answer Format:  \"json_object\"\nCache:          false\n"
        );
    }
}
