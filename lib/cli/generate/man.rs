//! One roff man page per executable (`man -l man/axe-run.1`), clean under
//! `groff -ww` and `mandoc -T lint`.

use super::program::Program;
use crate::flag::Flag;
use crate::spec::Command;

/// The date on every page: the release this version of the tables is.
const DATE: &str = "2026-11-21";

pub fn page(p: &Program, command: &'static Command) -> String {
    let mut out = format!(
        ".TH {} 1 {DATE} \"axe {}\" \"User Commands\"\n",
        command.name.to_uppercase(),
        env!("CARGO_PKG_VERSION")
    );
    out.push_str(&format!(
        ".SH NAME\n{} \\- {}\n",
        escape(command.name),
        escape(&lowercase_first(command.about))
    ));
    out.push_str(".SH SYNOPSIS\n");
    let synopsis: Vec<String> = command
        .tree()
        .into_iter()
        .filter(|c| c.subcommands().is_empty() || c.name == command.name)
        .flat_map(|c| {
            c.usage
                .iter()
                .map(|u| format!(".B {}\n{}\n", escape(c.name), escape(u)))
        })
        .collect();
    out.push_str(&synopsis.join(".br\n"));
    out.push_str(&format!(
        ".SH DESCRIPTION\n{}\n",
        escape(&sentence(command.about))
    ));
    paragraphs(&mut out, &command.description());
    details(&mut out, command);
    for sub in command.subcommands() {
        out.push_str(&format!(
            ".SH COMMAND: {}\n",
            escape(&sub.word().to_uppercase())
        ));
        out.push_str(&format!(".B {}\n", escape(sub.name)));
        out.push_str(&format!(
            "{}\n",
            escape(sub.usage.first().copied().unwrap_or(""))
        ));
        paragraphs(&mut out, &sentence(sub.about));
        paragraphs(&mut out, &sub.description());
        details(&mut out, sub);
    }
    out.push_str(&exit_status());
    let others: Vec<String> = p
        .executables()
        .filter(|c| c.name != command.name)
        .map(|c| format!(".BR {} (1)", c.name))
        .collect();
    out.push_str(".SH SEE ALSO\n");
    for (i, line) in others.iter().enumerate() {
        out.push_str(line);
        if i + 1 < others.len() {
            out.push_str(" ,");
        }
        out.push('\n');
    }
    out
}

/// `.SH EXIT STATUS` from the one table of exit codes.
fn exit_status() -> String {
    let mut out = String::from(".SH EXIT STATUS\n");
    for c in &axe_base::error::EXIT_CODES {
        out.push_str(&format!(
            ".TP\n.B {}\n{}\n",
            c.code,
            escape(&sentence(&unquote(c.meaning)))
        ));
    }
    out
}

/// The table's markdown, as roff shows it: without backquotes.
fn unquote(text: &str) -> String {
    text.replace('`', "")
}

/// Arguments and options of one command.
fn details(out: &mut String, cmd: &Command) {
    if !cmd.args.is_empty() {
        out.push_str(".SS Arguments\n");
        for arg in cmd.args {
            let dots = if arg.many { "..." } else { "" };
            out.push_str(&format!(
                ".TP\n.I {}{dots}\n{}\n",
                escape(arg.name),
                escape(&sentence(arg.help))
            ));
        }
    }
    out.push_str(".SS Options\n");
    for flag in cmd.all_flags() {
        out.push_str(&format!(
            ".TP\n{}\n{}\n",
            spelling(flag),
            escape(&sentence(flag.help))
        ));
    }
    if !cmd.rules.is_empty() {
        out.push_str(".SS Rules\n");
        let lines: Vec<String> = cmd
            .rules
            .iter()
            .map(|r| escape(&sentence(&r.describe())))
            .collect();
        out.push_str(&lines.join("\n.br\n"));
        out.push('\n');
    }
}

/// `\fB\-m\fR, \fB\-\-model\fR \fIMODEL\fR`.
fn spelling(flag: &Flag) -> String {
    let mut s = String::new();
    if let Some(c) = flag.short {
        s.push_str(&format!("\\fB\\-{}\\fR, ", escape(&c.to_string())));
    }
    s.push_str(&format!("\\fB\\-\\-{}\\fR", escape(flag.long)));
    if let Some(v) = flag.value {
        s.push_str(&format!(" \\fI{}\\fR", escape(v)));
    }
    s
}

/// Paragraphs separated by blank lines; a paragraph whose lines are all
/// indented is shown as is (an example).
fn paragraphs(out: &mut String, text: &str) {
    for para in text.trim().split("\n\n").filter(|p| !p.trim().is_empty()) {
        if para.lines().all(|l| l.starts_with("  ")) {
            out.push_str(".PP\n.RS 4\n.nf\n");
            for line in para.lines() {
                out.push_str(&escape(&line[2..]));
                out.push('\n');
            }
            out.push_str(".fi\n.RE\n");
        } else {
            out.push_str(".PP\n");
            for line in para.lines() {
                out.push_str(&escape(line.trim_start()));
                out.push('\n');
            }
        }
    }
}

/// Text made safe for roff: backslashes and dashes escaped, and a line
/// that would start with a control character guarded.
fn escape(text: &str) -> String {
    let escaped = text.replace('\\', "\\e").replace('-', "\\-");
    if escaped.starts_with(['.', '\'']) {
        format!("\\&{escaped}")
    } else {
        escaped
    }
}

fn sentence(help: &str) -> String {
    format!("{help}.")
}

fn lowercase_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}
