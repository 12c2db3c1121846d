//! `axe-llm`: one call to a model, from the shell.

use std::io::{self, Write};
use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use super::args as target;
use super::stdin::NO_STDIN;
use axe_agent::config;
use axe_base::error::{Error, Result};
use axe_base::read;
use axe_base::stderr::note;
use axe_cli::{Arg, Command, Complete, Flag, Item, Matches, Rule, Run};
use axe_llm::{CallOptions, Conversation, Message, Reply, Role, ToolCall};
use axe_run::conversation::{self, Owner};

pub const COMMAND: Command = Command {
    name: "axe-llm",
    about: "Send a prompt to a model and print its answer",
    usage: &[
        "[-m <PROVIDER/MODEL>] [OPTIONS] [PROMPT]...",
        "[OPTIONS] --request <FILE>",
    ],
    args: &[Arg {
        name: "PROMPT",
        noun: "prompt",
        help: "The user message, as words joined by spaces; standard input, when piped, follows after a blank line",
        complete: Complete::Nothing,
        many: true,
    }],
    flags: &[
        MODEL,
        SYSTEM,
        SYSTEM_FILE,
        TEMPERATURE,
        MAX_TOKENS,
        TIMEOUT,
        RETRIES,
        STREAM,
        REQUEST,
        NO_STDIN,
        CONTINUE,
        CID,
        super::args::NEW,
        JSON,
        super::log::NO_LOG,
    ],
    rules: &[
        Rule::Conflict(Item::Flag(&SYSTEM), Item::Flag(&SYSTEM_FILE)),
        Rule::Conflict(Item::Flag(&CONTINUE), Item::Flag(&CID)),
        Rule::Conflict(Item::Flag(&REQUEST), Item::Flag(&CONTINUE)),
        Rule::Conflict(Item::Flag(&REQUEST), Item::Flag(&CID)),
        Rule::RequiredWith(Item::Flag(&CID), Item::Flag(&super::args::NEW)),
    ],
    description: "\
Prints the answer exactly, with no newline added, and nothing else. The
user message is the PROMPT words, then standard input when it is piped
(unless -n), after a blank line. Without -m (or a model in the --request file), the
model is default_model in config.toml.

Keys and servers come from the environment, then config.toml:
ANTHROPIC_API_KEY / OPENAI_API_KEY, or api_key or api_key_cmd under
[providers.<name>]; AXE_<PROVIDER>_BASE_URL or base_url for another server
(any OpenAI-compatible one works as openai). Ollama needs no key.

With --request, the conversation comes from a JSON file (its form is in
docs/reference.md, \"axe-llm --request\"): system prompt, messages with
tool calls and tool results, tool definitions and parameters. Flags
given with --request override its fields. A reply may call tools: --json
gives their number as tool_calls (as axe-run does) and the calls
themselves as calls, in the file's shape, so a script can run a tool
loop; without --json each call is named on stderr, as
`Tool call: NAME ARGUMENTS (id ID)`.

Each call keeps its turn in a conversation, as llm logs every prompt: -c
goes on with the one used last, --cid ID with a given one (an ID not kept
is an error naming those that are, unless --new), and --json says which as
conversation_id. --no-log keeps none (nor a ledger line), nor does a
--request call, whose file is its conversation; config.toml's [log]
conversations = false keeps one only when -c or --cid is given.",
    run: Run::Action(run),
};

const MODEL: Flag = Flag::with_value(
    "model",
    "PROVIDER/MODEL",
    "The model, e.g. openai/gpt-4o, ollama/llama3 [default: the request's, else default_model in config.toml]",
)
.short('m')
.completes(Complete::Model);

const SYSTEM: Flag = Flag::with_value("system", "TEXT", "The system prompt").short('s');

const SYSTEM_FILE: Flag =
    Flag::with_value("system-file", "PATH", "Read the system prompt from PATH")
        .completes(Complete::File);

const TEMPERATURE: Flag = Flag::with_value(
    "temperature",
    "T",
    "Sampling temperature, sent even when 0 [default: the server's]",
)
.number();

const MAX_TOKENS: Flag = Flag::with_value(
    "max-tokens",
    "N",
    "Longest answer in tokens; 0 is not sent (Anthropic gets 4096) [default: 0]",
)
.int();

const TIMEOUT: Flag = Flag::with_value(
    "timeout",
    "SECONDS",
    "Give up after this long, retries included [default: 120]",
)
.number();

const RETRIES: Flag = Flag::with_value(
    "retries",
    "N",
    "Retry 408, 429, 529, 5xx and dropped connections N times, waiting 0.5 s, 1 s, 2 s... (at most 30 s) or as Retry-After says [default: 0]",
)
.int();

const STREAM: Flag = Flag::switch(
    "stream",
    "Print the answer as it arrives; with --json, stream the call and print the document at the end",
);

const REQUEST: Flag = Flag::with_value(
    "request",
    "FILE",
    "Send the conversation in FILE (- for standard input), tools and all",
)
.completes(Complete::File);

const CONTINUE: Flag = Flag::switch(
    "continue",
    "Go on with the last conversation axe-llm kept (a new one when there is none) and keep this turn in it",
)
.short('c');

const CID: Flag = Flag::with_value(
    "cid",
    "ID",
    "Go on with axe-llm's conversation ID and keep this turn in it; an ID it does not have is an error unless --new",
);

const JSON: Flag = Flag::switch(
    "json",
    "Print {model, content, input_tokens, output_tokens, stop_reason, duration_ms, tool_calls, calls, conversation_id} as JSON (conversation_id null when the turn was not kept; cache_read_tokens, cache_write_tokens, cost when the provider reports them)",
);

/// What `axe-llm --json` adds to the answer. `tool_calls` is how many
/// tool calls the reply makes, as in `axe-run --json` (Go's name for a
/// count); `calls` are the calls themselves, in the `--request` file's
/// shape, so a script can answer them. Without `--request` no tools are
/// offered, so there are none.
#[derive(Serialize)]
struct Calls<'a> {
    tool_calls: usize,
    calls: &'a [ToolCall],
    /// The conversation the turn was kept in; always said, `null` when
    /// none was (`--no-log`, `--request`, `[log] conversations = false`).
    conversation_id: Option<&'a str>,
}

/// `axe-llm`'s command line as typed values, read before anything is
/// read: a malformed flag is reported before the request file, standard
/// input or the config is touched, as cobra parsed flags first in Go.
struct Args<'m> {
    model: Option<&'m str>,
    /// `-s TEXT`; `--system-file` is read later, as it is a file.
    system: Option<&'m str>,
    system_file: Option<&'m Path>,
    temperature: Option<f64>,
    max_tokens: Option<u64>,
    timeout: std::time::Duration,
    retries: u32,
    stream: bool,
    json: bool,
    request: Option<&'m str>,
    no_stdin: bool,
    go_on: bool,
    cid: Option<&'m str>,
    /// `--new`: `--cid` of an id not kept starts it.
    new: bool,
    /// Record the call in the ledger (off: `--no-log`).
    log: bool,
}

impl<'m> Args<'m> {
    fn read(m: &'m Matches) -> Result<Args<'m>> {
        let args = Args {
            model: m.string(&MODEL)?,
            system: m.string(&SYSTEM)?,
            system_file: m.value(&SYSTEM_FILE).map(Path::new),
            temperature: m.number::<f64>(&TEMPERATURE)?,
            max_tokens: m.number::<u64>(&MAX_TOKENS)?,
            timeout: target::timeout(m, &TIMEOUT)?,
            retries: m.number::<u32>(&RETRIES)?.unwrap_or(0),
            stream: m.flag(&STREAM),
            json: m.flag(&JSON),
            request: m.string(&REQUEST)?,
            no_stdin: m.flag(&NO_STDIN),
            go_on: m.flag(&CONTINUE),
            cid: m.string(&CID)?,
            new: m.flag(&super::args::NEW),
            log: !m.flag(&super::log::NO_LOG),
        };
        if let Some(id) = args.cid {
            conversation::check_id(id)?;
        }
        match args.request {
            Some("-") if args.no_stdin => Err(Error::Usage(
                "--request - reads standard input, which -n leaves unread: give a file".into(),
            )),
            Some(_) if !m.args().is_empty() => Err(Error::Usage(
                "cannot combine --request with a PROMPT".into(),
            )),
            _ => Ok(args),
        }
    }
}

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let args = Args::read(m)?;
    let json = args.json;
    // Standard input is read within the timeout too: a pipe may never close.
    let deadline = axe_llm::Deadline::after(args.timeout);

    // The conversation gone on with (-c, --cid): its id, and its
    // messages before this turn's.
    let dirs = super::args::env_agents().dirs().clone();
    let wait = axe_memory::Wait::Until(deadline.at);
    let asked = conversation::Asked {
        last: args.go_on,
        cid: args.cid,
        new: args.new,
    };
    // The rules keep -c and --cid from --request.
    let (id, earlier) = match conversation::pick(&dirs, Owner::Llm, asked, wait)? {
        Some(c) => (c.id, c.messages),
        None => (conversation::new_id(), Vec::new()),
    };
    let before = earlier.len();
    let mut conversation = match args.request {
        Some(source) => read_request(source, deadline)?,
        None => {
            let mut messages = earlier;
            messages.push(Message::user(prompt(m, args.no_stdin, deadline)?));
            Conversation {
                messages,
                ..Conversation::default()
            }
        }
    };
    if let Some(system) = system_prompt(&args)? {
        conversation.system = system;
    }
    // Given, from the flag or the file, is sent, 0 included: only an
    // agent file's 0 means "not set" (Go's), and there is none here.
    if let Some(t) = args.temperature {
        conversation.temperature = Some(t);
    }
    if let Some(n) = args.max_tokens {
        conversation.max_tokens = n;
    }
    let given = match args.model {
        Some(model) => Some(model.to_owned()),
        None => conversation.model.clone(),
    };
    let ((provider, name), config) = match given {
        // A model given is checked before the config is read, as axe-run
        // does; the config's default is checked where it is read.
        Some(model) => (
            axe_llm::parse_model(&model)?,
            config::load(&super::args::env_agents())?,
        ),
        None => {
            let config = config::load(&super::args::env_agents())?;
            let model = config.default_model()?.ok_or_else(|| {
                Error::Usage(
                    "missing required flag --model (or set default_model in config.toml)".into(),
                )
            })?;
            (axe_llm::parse_model(model)?, config)
        }
    };
    // Every call keeps its turn, as `llm` logs every prompt; `[log]
    // conversations = false` keeps only one that names a conversation,
    // --no-log none, and a --request file is its own conversation.
    let keep = args.log && args.request.is_none() && (config.log.conversations || asked.any());
    let kept = keep.then_some(id);
    let endpoint = config.endpoint_for(provider, &name)?;
    let options = CallOptions {
        deadline,
        retry: axe_llm::RetryPolicy::times(args.retries),
        stream: args.stream,
        client: axe_net::Client::from_env(),
    };

    let started = Instant::now();
    let reply = {
        let mut show = |text: &str| -> io::Result<()> {
            // With --json the one document comes at the end instead.
            if !json {
                out.write_all(text.as_bytes())?;
                out.flush()?;
            }
            Ok(())
        };
        let ledger = axe_ledger::Ledger::new(
            super::args::env_agents().dirs().data().ok(),
            &config.log,
            config.keys(),
            args.log,
            std::sync::Arc::new(axe_base::report::Stderr),
        );
        let caller = axe_ledger::Caller {
            agent: None,
            conversation: kept.as_deref(),
        };
        ledger.complete(
            caller,
            &endpoint,
            &name,
            &conversation,
            &options,
            &mut show,
            &mut |_| {},
        )?
    };
    let duration_ms = started.elapsed().as_millis();
    let kept = kept.and_then(|id| {
        let mut turn = conversation.messages.split_off(before);
        turn.push(Message {
            role: Role::Assistant,
            content: reply.content.clone(),
            tool_calls: reply.tool_calls.clone(),
            tool_results: Vec::new(),
        });
        let secrets = config.secrets(None, Vec::new());
        match conversation::append(&dirs, Owner::Llm, &id, &turn, None, (&secrets, wait)) {
            Ok(_) => Some(id),
            Err(e) => {
                note(format_args!("Warning: {e}"));
                None
            }
        }
    });
    print_reply(
        out,
        &reply,
        (json, args.stream),
        duration_ms,
        kept.as_deref(),
    )
}

fn print_reply(
    out: &mut dyn Write,
    reply: &Reply,
    (json, streamed): (bool, bool),
    duration_ms: u128,
    conversation_id: Option<&str>,
) -> Result<()> {
    if json {
        let more = Calls {
            tool_calls: reply.tool_calls.len(),
            calls: &reply.tool_calls,
            conversation_id,
        };
        return super::answer::write_answer(out, reply, &reply.usage, duration_ms, more);
    }
    super::answer::write_text(out, &reply.content, streamed)?;
    // The answer's text is all stdout carries, and a reply may be nothing
    // but tool calls: what the model asked for is said on stderr rather
    // than lost without a word.
    for call in &reply.tool_calls {
        let arguments = serde_json::Value::Object(call.arguments.clone());
        note(format_args!(
            "Tool call: {} {arguments} (id {})",
            call.name, call.id
        ));
    }
    Ok(())
}

/// PROMPT's words, then standard input when it is piped (after a blank
/// line), as `axe-run` builds its task.
fn prompt(m: &Matches, no_stdin: bool, deadline: axe_llm::Deadline) -> Result<String> {
    let words = (!m.args().is_empty()).then(|| {
        m.args()
            .iter()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    });
    let stdin = match no_stdin {
        true => String::new(),
        false => super::stdin::piped_stdin(deadline)?,
    };
    let text = super::stdin::words_then(words.as_deref(), &stdin);
    if text.trim().is_empty() {
        return Err(Error::Usage(
            "no prompt: give PROMPT or pipe it on standard input".into(),
        ));
    }
    Ok(text)
}

/// `-s TEXT` or `--system-file PATH`; an unreadable file (a FIFO, a
/// device, one over [`read::PROMPT_LIMIT`]) is a config error, like a
/// skill file for `axe-run`.
fn system_prompt(args: &Args) -> Result<Option<String>> {
    // The rules refuse both.
    match (args.system, args.system_file) {
        (Some(text), _) => Ok(Some(text.to_owned())),
        (None, Some(path)) => match read::lossy_text(path, read::PROMPT_LIMIT) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(Error::caused(
                Error::Config(format!("system file not found: {}", path.to_string_lossy())),
                e,
            )),
            Err(e) => Err(Error::caused(
                Error::Config(format!(
                    "failed to read system file {}: {}",
                    path.to_string_lossy(),
                    axe_base::error::describe_io(&e)
                )),
                e,
            )),
        },
        (None, None) => Ok(None),
    }
}

/// The `--request` conversation, from a file (regular, at most
/// [`read::REQUEST_LIMIT`]) or `-` (standard input, as much, read before
/// `deadline`).
fn read_request(source: &str, deadline: axe_llm::Deadline) -> Result<Conversation> {
    let text = if source == "-" {
        let bytes = super::stdin::read_until(deadline, read::REQUEST_LIMIT, "standard input")?;
        String::from_utf8_lossy(&bytes).into_owned()
    } else {
        read::text(Path::new(source), read::REQUEST_LIMIT).map_err(|e| {
            Error::caused(
                Error::Input(format!(
                    "failed to read request file {source}: {}",
                    axe_base::error::describe_io(&e)
                )),
                e,
            )
        })?
    };
    let conversation: Conversation = serde_json::from_str(&text)
        .map_err(|e| Error::caused(Error::Input(format!("malformed request {source}: {e}")), e))?;
    if conversation.messages.is_empty() {
        return Err(Error::Input(format!(
            "malformed request {source}: no messages"
        )));
    }
    Ok(conversation)
}
