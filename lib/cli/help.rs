//! `--help` and `--version` text, generated from the flag table.

use super::flag::{Arg, Flag};
use super::spec::Command;

/// `<name> version <semver>`, as the Go `axe version` printed it.
pub fn version(command: &Command) -> String {
    format!(
        "{} version {}\n",
        command.program(),
        env!("CARGO_PKG_VERSION")
    )
}

/// The flag as it is spelled in help: `-n, --last <N>`.
pub fn flag_spelling(flag: &Flag) -> String {
    let short = match flag.short {
        Some(c) => format!("-{c}, "),
        None => "    ".to_owned(),
    };
    match flag.value {
        Some(v) => format!("{short}--{} <{v}>", flag.long),
        None => format!("{short}--{}", flag.long),
    }
}

/// The usage line of `command` that has `arg` in it (else its first),
/// with the command's name: `axe-run [OPTIONS] <AGENT> [PROMPT]...`.
pub fn usage_for(command: &Command, arg: &Arg) -> String {
    let placeholder = format!("<{}>", arg.name);
    let line = command
        .usage
        .iter()
        .find(|u| u.contains(&placeholder))
        .or(command.usage.first())
        .copied()
        .unwrap_or_default();
    format!("{} {line}", command.name)
}

pub fn help(command: &Command) -> String {
    let subs: Vec<(&str, &str)> = command
        .subcommands()
        .iter()
        .map(|s| (s.word(), s.about))
        .collect();
    render(command, &subs, true)
}

/// Help whose Commands section lists `rows` (`(name, about)`; a row
/// without an about is a note) in place of the arguments: for `axe`,
/// whose subcommands are found at run time.
pub fn help_with_commands(command: &Command, rows: &[(String, String)]) -> String {
    let rows: Vec<(&str, &str)> = rows.iter().map(|(n, a)| (n.as_str(), a.as_str())).collect();
    render(command, &rows, false)
}

fn render(command: &Command, commands: &[(&str, &str)], with_args: bool) -> String {
    let mut out = format!("{}: {}\n\nUsage:\n", command.name, command.about);
    for usage in command.usage {
        out.push_str(&format!("  {} {usage}\n", command.name));
    }
    if !commands.is_empty() {
        out.push_str("\nCommands:\n");
        let width = commands
            .iter()
            .filter(|(_, about)| !about.is_empty())
            .map(|(name, _)| name.len())
            .max()
            .unwrap_or(0);
        for (name, about) in commands {
            if about.is_empty() {
                out.push_str(&format!("  {name}\n"));
            } else {
                out.push_str(&format!("  {name:width$}  {about}\n"));
            }
        }
    }
    if with_args && !command.args.is_empty() {
        out.push_str("\nArguments:\n");
        let width = command
            .args
            .iter()
            .map(|a| a.name.len() + 2)
            .max()
            .unwrap_or(0);
        for arg in command.args {
            let name = format!("<{}>{}", arg.name, if arg.many { "..." } else { "" });
            out.push_str(&format!("  {name:width$}  {}\n", arg.help));
        }
    }
    out.push_str("\nOptions:\n");
    let spelled: Vec<(String, &Flag)> =
        command.all_flags().map(|f| (flag_spelling(f), f)).collect();
    let width = spelled.iter().map(|(s, _)| s.len()).max().unwrap_or(0);
    for (spelling, flag) in &spelled {
        out.push_str(&format!("  {spelling:width$}  {}\n", flag.help));
    }
    if !command.rules.is_empty() {
        out.push_str("\nRules:\n");
        for rule in command.rules {
            out.push_str(&format!("  {}\n", rule.describe()));
        }
    }
    if !command.description.is_empty() {
        out.push('\n');
        out.push_str(command.description().trim_end());
        out.push('\n');
    }
    let codes: Vec<String> = axe_base::error::EXIT_CODES
        .iter()
        .map(|c| format!("{} {}", c.code, c.name))
        .collect();
    out.push_str(&format!(
        "\nExit status: {} (see the man page).\n",
        codes.join(", ")
    ));
    out
}
