//! `--help` and `--version` text, generated from the flag table.

use super::spec::{Command, Flag};

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

pub fn help(command: &Command) -> String {
    let mut out = format!("{}: {}\n\nUsage:\n", command.name, command.about);
    for usage in command.usage {
        out.push_str(&format!("  {} {usage}\n", command.name));
    }
    let subs = command.subcommands();
    if !subs.is_empty() {
        out.push_str("\nCommands:\n");
        let width = subs.iter().map(|s| s.word().len()).max().unwrap_or(0);
        for sub in subs {
            out.push_str(&format!("  {:width$}  {}\n", sub.word(), sub.about));
        }
    }
    if !command.args.is_empty() {
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
    if !command.description.is_empty() {
        out.push('\n');
        out.push_str(command.description.trim_end());
        out.push('\n');
    }
    out
}
