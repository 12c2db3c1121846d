//! What many commands read from their command line alike: the agent
//! argument and the words after it, `--timeout`, `--wait`.

use std::path::Path;
use std::time::Duration;

use axe_agent::{AgentConfig, Agents};
use axe_base::dirs::Dirs;
use axe_base::error::{Error, Result};
use axe_base::lock::Recover;
use axe_cli::{Arg, Complete, Flag, Item, Matches, Rule};
use axe_memory::Wait;

pub const AGENT: Arg = Arg {
    name: "AGENT",
    noun: "agent name",
    help: "The agent's name: its file in the agents directory, without .toml",
    complete: Complete::Agent,
    many: false,
};

/// The AGENT argument, when given; the parser allows one at most.
pub fn agent_arg(m: &Matches) -> Result<Option<&str>> {
    m.args()
        .first()
        .map(|name| {
            name.to_str().ok_or_else(|| {
                Error::InvalidAgentName(format!(
                    "agent name \"{}\" is not valid UTF-8",
                    name.to_string_lossy()
                ))
            })
        })
        .transpose()
}

/// The words after AGENT (a task, a note), joined by spaces; `None` when
/// there are none.
pub fn words_after_agent(m: &Matches) -> Option<String> {
    let words: Vec<String> = m
        .args()
        .get(1..)?
        .iter()
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// `--new`, with `--cid ID` (axe-run, axe-llm, axe-chat): an ID not kept
/// yet starts a conversation by that name, where alone it is refused so a
/// mistyped id never starts one silently.
pub const NEW: Flag = Flag::switch(
    "new",
    "With --cid: start conversation ID when there is none by that name (without --new that is an error naming the ids kept)",
);

/// The rule of a command that cannot do without an agent.
pub const AGENT_REQUIRED: Rule = Rule::Required(Item::Arg(&AGENT));

/// The AGENT argument of a command whose rules have [`AGENT_REQUIRED`].
pub fn required_agent(m: &Matches) -> Result<&str> {
    agent_arg(m)?.ok_or_else(|| Error::Usage(AGENT_REQUIRED.message()))
}

/// The settings of the agent whose memory a memory tool works on, and
/// whether it has a file of its own. A name with no agent file is still a
/// memory: the one `axe-mcp` serves for it, every kind on with the
/// defaults ([`every_kind_on`]), so `axe-mcp team` and `axe-notes-recall
/// team` reach the same files. The name must still be one (no path
/// tricks), and a broken agent file is still an error, never the defaults.
pub fn memory_agent(agents: &Agents, name: &str) -> Result<(AgentConfig, bool)> {
    axe_agent::check_name(name)?;
    if let Some(cfg) = agents.load_if_any(name)? {
        return Ok((cfg, true));
    }
    // A typo once was an error here; now it is someone else's memory, so
    // say which agent was probably meant: judged the first time the name
    // is served, as a server opens a memory per session or request and
    // the search for a near name reads the agents directories.
    if first_time(name)
        && let Some(near) = agents.near_name(name)
    {
        axe_base::stderr::note(format_args!(
            "note: no agent file \"{name}\" (did you mean \"{near}\"?): using the memory of \"{name}\", every kind on"
        ));
    }
    Ok((every_kind_on(), false))
}

/// Whether `name` is served for the first time in this process. Bounded:
/// past a thousand names, a new one counts as new every time rather than
/// kept.
fn first_time(name: &str) -> bool {
    static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut said = SAID.lock().recover();
    if said.iter().any(|n| n == name) {
        return false;
    }
    if said.len() < 1024 {
        said.push(name.to_owned());
    }
    true
}

/// The memory of a name with no agent file: every kind on, with the
/// documented defaults (`log_recent` then gives 10 entries).
pub fn every_kind_on() -> AgentConfig {
    let mut cfg = AgentConfig::default();
    cfg.memory.log.enabled = true;
    cfg.memory.notes.enabled = true;
    cfg.memory.state.enabled = true;
    cfg
}

/// `--agents-dir DIR` of `axe-run`, `axe-agents` and `axe-gc`: the first
/// directory agent files are looked up in.
pub const AGENTS_DIR: Flag = Flag::with_value(
    "agents-dir",
    "DIR",
    "Look for agent files in DIR first, then in ./axe/agents, then in <config>/agents",
)
.completes(Complete::Dir);

/// The agents of a command with `--agents-dir`: that directory first,
/// then those of the environment's directories.
pub fn agents(m: &Matches) -> Result<Agents> {
    let given = m.value(&AGENTS_DIR);
    if given.is_some_and(|d| d.is_empty()) {
        return Err(Error::Usage("--agents-dir must not be empty".to_owned()));
    }
    Ok(Agents::new(Dirs::from_env(), given.map(Path::new)))
}

/// The agents of a command without `--agents-dir`: those of the
/// environment's directories.
pub fn env_agents() -> Agents {
    Agents::new(Dirs::from_env(), None)
}

/// `--timeout SECONDS` of `axe-llm`, `axe-run` and `axe-gc` [default: 120]:
/// positive, fractions allowed, at most [`timeout::MAX_SECONDS`].
pub fn timeout(m: &Matches, flag: &Flag) -> Result<Duration> {
    Ok(given_timeout(m, flag)?.unwrap_or(DEFAULT_TIMEOUT))
}

/// The timeout when none is given: 120 s.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// `--timeout SECONDS` when given, checked as [`timeout`] does.
pub fn given_timeout(m: &Matches, flag: &Flag) -> Result<Option<Duration>> {
    m.number::<f64>(flag)?
        .map(|seconds| {
            axe_base::timeout::from_seconds(seconds)
                .map_err(|why| Error::caused(Error::Usage(format!("--timeout {why}")), why))
        })
        .transpose()
}

/// `-q`/`--quiet` of the memory writes: nothing on stdout on success, for
/// git hooks and scripts that run on every commit; errors and warnings
/// still go to stderr. Not with `--json`, which asks for the report.
pub const QUIET: Flag = Flag::switch(
    "quiet",
    "Print nothing on success; errors and warnings still go to standard error",
)
.short('q');

/// Where a write reports on success: `out`, or with `--quiet` nowhere.
pub fn report_to<'a>(
    m: &Matches,
    out: &'a mut dyn std::io::Write,
    sink: &'a mut std::io::Sink,
) -> &'a mut dyn std::io::Write {
    match m.flag(&QUIET) {
        true => sink,
        false => out,
    }
}

/// `--wait SECONDS`: how long a memory tool waits for another process's
/// lock on a file before giving up (exit 5, nothing written).
pub const WAIT: Flag = Flag::with_value(
    "wait",
    "SECONDS",
    "Wait this long at most for another process's lock on a memory file; 0: not at all [default: 30]",
)
.number();

/// Reads `--wait`: the command's lock wait, handed to every memory
/// operation it makes.
pub fn wait(m: &Matches) -> Result<Wait> {
    let wait = match m.number::<f64>(&WAIT)? {
        None => axe_memory::DEFAULT_WAIT,
        Some(0.0) => Duration::ZERO,
        Some(s) => axe_base::timeout::from_seconds(s)
            .map_err(|why| Error::caused(Error::Usage(format!("--wait {why}")), why))?,
    };
    Ok(Wait::For(wait))
}

/// Says `done` on stderr, a line per place
/// ([`axe_memory::secrets::lines`]): what
/// commands that write memory directly tell their user whether or not
/// asked, as the text they gave is not what was kept.
pub fn tell(done: &[axe_memory::secrets::Redaction]) {
    for line in axe_memory::secrets::lines(done) {
        axe_base::stderr::note(format_args!("{line}"));
    }
}
