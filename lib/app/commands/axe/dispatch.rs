//! How `axe SUBCOMMAND` runs: one of axe's own commands runs in this
//! process (the `axe` executable links them all, so `axe mem load` needs
//! no `axe-mem-load` installed and starts no second program); any other
//! `axe-SUBCOMMAND` is a plugin, looked up in the directory of the `axe`
//! executable first, then on `PATH`, as cargo and git look up their
//! external subcommands. A plugin replaces `axe` (exec), so stdin, stdout,
//! stderr, signals and the exit code are its own.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use std::io::Write;

use axe_cli::Command;

use crate::commands::ALL;
use axe_base::error::{Error, Result};

/// Subcommands may span this many words: `axe mem load`.
const MAX_WORDS: usize = 3;

/// A subcommand that can be run: `mem load` for `axe-mem-load`.
pub struct Found {
    /// The words after `axe`, space separated.
    pub name: String,
    pub path: PathBuf,
    /// The command's one line when it is one of ours, else empty.
    pub about: &'static str,
}

/// The directories searched, in order.
fn search_path() -> Vec<PathBuf> {
    let own = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf));
    let path = std::env::var_os("PATH").unwrap_or_default();
    own.into_iter()
        .chain(std::env::split_paths(&path))
        .collect()
}

fn is_executable(path: &Path) -> bool {
    let Ok(meta) = path.metadata() else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    meta.is_file()
}

/// The first executable called `program` in `dirs`.
fn find(dirs: &[PathBuf], program: &str) -> Option<PathBuf> {
    dirs.iter()
        .map(|dir| dir.join(program))
        .find(|p| is_executable(p))
}

/// Every command `axe` can run: its own, in the order of [`ALL`] (at the
/// path of its executable beside `axe` when there is one, else `axe`'s
/// own), then every other `axe-*` executable along the search path by
/// name, the first of each name winning.
pub fn available() -> Vec<Found> {
    let dirs = search_path();
    let own = std::env::current_exe().unwrap_or_default();
    let mut found: Vec<Found> = ALL
        .iter()
        .map(|c| Found {
            name: words_of(c).join(" "),
            path: own
                .parent()
                .filter(|dir| !dir.as_os_str().is_empty())
                .map(|dir| dir.join(c.name))
                .filter(|p| is_executable(p))
                .unwrap_or_else(|| own.clone()),
            about: c.about,
        })
        .collect();
    let mut plugins: Vec<Found> = Vec::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(file) = entry.file_name().into_string() else {
                continue;
            };
            let Some(rest) = file.strip_prefix("axe-") else {
                continue;
            };
            let name = rest.replace('-', " ");
            let seen = |f: &Found| f.name == name;
            if rest.is_empty() || found.iter().any(seen) || plugins.iter().any(seen) {
                continue;
            }
            if is_executable(&entry.path()) {
                plugins.push(Found {
                    name,
                    path: entry.path(),
                    about: "",
                });
            }
        }
    }
    plugins.sort_by(|f, g| f.name.cmp(&g.name));
    found.extend(plugins);
    found
}

/// The command of axe's own whose executable `arg0` (a program's name as
/// started, or its path) names: `axe-run` for `/usr/bin/axe-run`.
pub fn own(arg0: &OsStr) -> Option<&'static Command> {
    let name = Path::new(arg0).file_name()?.to_str()?;
    ALL.iter().copied().find(|c| c.name == name)
}

/// The words after `axe` that name `command`: `["mem", "load"]` for
/// `axe-mem-load`.
fn words_of(command: &Command) -> Vec<&'static str> {
    let name: &'static str = command.name;
    name.strip_prefix("axe-")
        .unwrap_or(name)
        .split('-')
        .collect()
}

/// A word that can be part of an executable's name: no path tricks.
fn plain(word: &str) -> bool {
    !word.is_empty() && !word.starts_with('-') && !word.contains(['/', '\\', '\0', '.'])
}

/// What the leading words of a command line name.
enum Target {
    /// One of axe's own commands, run in this process.
    Own(&'static Command),
    /// A plugin: its program name and path.
    Plugin(String, PathBuf),
}

/// Runs the subcommand that `words` start with, with the words after its
/// name. The shortest match wins, so `axe run mem` is `axe-run mem`; at
/// the same length axe's own command wins over a program of its name.
pub fn run(words: Vec<OsString>) -> ExitCode {
    match resolve(&words) {
        Some((Target::Own(command), k)) => axe_cli::main_with(command, words[k..].to_vec()),
        Some((Target::Plugin(program, path), k)) => {
            axe_cli::fail(&exec(&program, &path, &words[k..]), false)
        }
        None => axe_cli::fail(&unknown(&words), false),
    }
}

/// What the leading words of `words` name, and how many words its name
/// took; the shortest match wins.
fn resolve(words: &[OsString]) -> Option<(Target, usize)> {
    let leading: Vec<&str> = words
        .iter()
        .take(MAX_WORDS)
        .map_while(|w| w.to_str().filter(|w| plain(w)))
        .collect();
    let dirs = search_path();
    (1..=leading.len()).find_map(|k| {
        let said = &leading[..k];
        if let Some(own) = ALL.iter().find(|c| words_of(c) == said) {
            return Some((Target::Own(own), k));
        }
        let program = format!("axe-{}", said.join("-"));
        find(&dirs, &program).map(|path| (Target::Plugin(program, path), k))
    })
}

/// The words typed where a command's name was expected, at most as many
/// as a name has.
fn typed(words: &[OsString]) -> Vec<String> {
    words
        .iter()
        .take(MAX_WORDS)
        .map(|w| w.to_string_lossy().into_owned())
        .collect()
}

/// `axe mem` alone: the second words of the commands `first` starts.
fn group<'a>(first: &str, names: &'a [String]) -> Vec<&'a str> {
    names
        .iter()
        .filter_map(|n| n.strip_prefix(&format!("{first} ")))
        .collect()
}

/// The command `typed` is nearest to, compared with each command of as
/// many words: (what was typed of it, the command's name).
fn closest<'a>(typed: &[String], names: &'a [String]) -> Option<(String, &'a str)> {
    names
        .iter()
        .filter_map(|name| {
            let n = name.split(' ').count().min(typed.len());
            let said = typed[..n].join(" ");
            let d = axe_base::suggest::edit_distance(&said, name);
            // Near, and not every letter replaced: `hi` is no typo of `gc`.
            let near = axe_base::suggest::near(&said, [name.as_str()]).is_some();
            (near && d < said.chars().count()).then_some((d, said, name.as_str()))
        })
        .min_by_key(|(d, ..)| *d)
        .map(|(_, said, name)| (said, name))
}

/// `axe help NAME...`: runs the command `NAME...` names with `--help`,
/// axe's own writing to `out`; returns only on failure for a plugin.
/// Words that name no command get the closest command or a plain "no such
/// command": they are a command's name, never an agent or a prompt, so no
/// `axe run` line is made of them.
pub fn help(words: Vec<OsString>, out: &mut dyn Write) -> Result<()> {
    let Some((target, k)) = resolve(&words) else {
        return Err(no_such(&words));
    };
    let mut args = words[k..].to_vec();
    args.push("--help".into());
    match target {
        Target::Own(command) => axe_cli::run(command, args, out),
        Target::Plugin(program, path) => {
            out.flush().map_err(Error::Output)?;
            Err(exec(&program, &path, &args))
        }
    }
}

/// Why `axe help NAME...` names no command.
fn no_such(words: &[OsString]) -> Error {
    let typed = typed(words);
    let names: Vec<String> = available().into_iter().map(|f| f.name).collect();
    let first = typed.first().map(String::as_str).unwrap_or_default();
    let group = group(first, &names);
    if !group.is_empty() && typed.len() == 1 {
        return Error::Usage(format!(
            "\"axe {first}\" needs a subcommand: {}",
            group.join(", ")
        ));
    }
    Error::Usage(match closest(&typed, &names) {
        Some((said, name)) => {
            format!("no such command \"{said}\" for \"axe\" (did you mean \"{name}\"?)")
        }
        None => format!(
            "no such command \"{}\" for \"axe\" (axe help lists them)",
            typed.join(" ")
        ),
    })
}

/// `unknown command "rn" for "axe" (did you mean "run"?)`: the typed words
/// are compared with each subcommand of as many words. A word no command
/// is near is most likely an agent (`axe reviewer`) or a prompt (`axe
/// "fix the tests"`), so the error says how to run one, as a command line
/// to copy.
fn unknown(words: &[OsString]) -> Error {
    let typed = typed(words);
    let first = typed.first().cloned().unwrap_or_default();
    let names: Vec<String> = available().into_iter().map(|f| f.name).collect();
    // `axe mem` alone: a group word without its second word.
    let group = group(&first, &names);
    if !group.is_empty() && typed.get(1).is_none_or(|w| w.starts_with('-')) {
        return Error::Usage(format!(
            "\"axe {first}\" needs a subcommand: {}",
            group.join(", ")
        ));
    }
    // `axe mem rm`: the group is right, its second word is not; suggest
    // within the group rather than another command of one word.
    if let (false, Some(second)) = (group.is_empty(), typed.get(1)) {
        let near = axe_base::suggest::closest(second, group.iter().copied()).unwrap_or_default();
        return Error::Usage(format!(
            "unknown command \"{first} {second}\" for \"axe\" (did you mean \"{first} {near}\"?)"
        ));
    }
    let say = |said: &str, advice: String| {
        Error::Usage(format!("unknown command \"{said}\" for \"axe\" ({advice})"))
    };
    // The command line that runs `agent` with the words after the first.
    let run_line = |agent: &str| {
        let rest = words[1..].iter().map(|w| shell_word(&w.to_string_lossy()));
        let line: Vec<String> = [shell_word(agent)].into_iter().chain(rest).collect();
        format!("axe run {}", line.join(" "))
    };
    let agents = axe_agent::Agents::new(axe_base::dirs::Dirs::from_env(), None);
    // An agent's name, exactly: `axe reviewer "hi"` meant `axe run`.
    if agents.file_path(&first).is_ok_and(|p| p.is_file()) {
        return say(
            &first,
            format!("\"{first}\" is an agent: {}", run_line(&first)),
        );
    }
    if let Some((said, name)) = closest(&typed, &names) {
        return say(&said, format!("did you mean \"{name}\"?"));
    }
    if let Some(agent) = agents.near_name(&first) {
        let advice = format!("did you mean the agent \"{agent}\"? {}", run_line(&agent));
        return say(&first, advice);
    }
    // Free text: all of it is the prompt.
    let prompt: Vec<String> = words
        .iter()
        .map(|w| shell_word(&w.to_string_lossy()))
        .collect();
    let advice = format!(
        "to give an agent a prompt: axe run <AGENT> {}",
        prompt.join(" ")
    );
    say(&first, advice)
}

/// `word` as a shell would need it typed: as it is when plain, else in
/// single quotes.
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_alphanumeric() || "-_./,:=@%+".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return word.to_owned();
    }
    format!("'{}'", word.replace('\'', "'\\''"))
}

#[cfg(unix)]
fn exec(program: &str, path: &Path, args: &[OsString]) -> Error {
    use std::os::unix::process::CommandExt;
    let err = std::process::Command::new(path)
        .arg0(program)
        .args(args)
        .exec();
    Error::caused(
        Error::Child(format!(
            "failed to run {}: {}",
            path.display(),
            axe_base::error::describe_io(&err)
        )),
        err,
    )
}

#[cfg(not(unix))]
fn exec(_program: &str, path: &Path, args: &[OsString]) -> Error {
    match std::process::Command::new(path).args(args).status() {
        Ok(status) => std::process::exit(status.code().unwrap_or(1)),
        Err(err) => Error::caused(
            Error::Child(format!(
                "failed to run {}: {}",
                path.display(),
                axe_base::error::describe_io(&err)
            )),
            err,
        ),
    }
}
