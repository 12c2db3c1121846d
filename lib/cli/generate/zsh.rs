//! The zsh completion function `_axe` (`#compdef` for every executable):
//! one `_arguments` call per command, `_describe` for subcommands.

use std::fmt::Write;

use super::program::{Program, Top};
use super::script::{header, ident};
use crate::flag::{Complete, Flag};
use crate::rule::{Item, Rule};
use crate::spec::Command;

const HELPERS: &str = r#"
_axe_agent_names() {
    local dir expl
    local -aU names
    names=( ./axe/agents/*.toml(N-.:t:r) )
    dir=$(command axe-config path 2>/dev/null) &&
        names+=( $dir/agents/*.toml(N-.:t:r) )
    _wanted agents expl agent compadd -a names
}

_axe_models() {
    local expl
    _wanted models expl model compadd -S '' -- %MODELS%
}
"#;

pub fn script(p: &Program) -> String {
    let names: Vec<&str> = p.executables().map(|c| c.name).collect();
    let mut out = format!("#compdef {}\n", names.join(" "));
    out.push_str(&header("#", "zsh"));
    out.push_str(&HELPERS.replace("%MODELS%", &p.model_prefixes().join(" ")));
    dispatcher(p, &mut out);
    for cmd in p.executables().skip(1).flat_map(|c| c.tree()) {
        function(&mut out, cmd);
    }
    out.push_str("\n_axe_main() {\n    case $service in\n");
    for cmd in p.executables() {
        let _ = writeln!(
            out,
            "        {}) _axe_cmd_{} \"$@\" ;;",
            cmd.name,
            ident(cmd)
        );
    }
    out.push_str("    esac\n}\n\n");
    let _ = writeln!(
        out,
        "if [[ $funcstack[1] == _axe ]]; then\n    _axe_main \"$@\"\nelse\n    compdef _axe_main {}\nfi",
        names.join(" ")
    );
    out
}

/// Text for inside a single-quoted `_arguments` spec.
fn quoted(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('\'', "'\\''")
        .replace('[', "\\[")
        .replace(']', "\\]")
        .replace(':', "\\:")
}

fn action(kind: Complete) -> &'static str {
    match kind {
        Complete::Nothing => " ",
        Complete::Agent => "_axe_agent_names",
        Complete::File => "_files",
        Complete::Dir => "_files -/",
        Complete::Model => "_axe_models",
    }
}

/// The `_arguments` specs of a command's flags.
fn flag_specs(cmd: &Command) -> Vec<String> {
    cmd.all_flags().map(|f| flag_spec(cmd, f)).collect()
}

/// The flags that cannot go with `f` by the command's rules, as zsh
/// spells them in an exclusion list: once one is on the line, the other
/// is not offered.
fn conflicting(cmd: &Command, f: &Flag) -> Vec<String> {
    let mut out = Vec::new();
    for rule in cmd.rules {
        let Rule::Conflict(Item::Flag(a), Item::Flag(b)) = *rule else {
            continue;
        };
        let other = match (a.long == f.long, b.long == f.long) {
            (true, _) => b,
            (_, true) => a,
            _ => continue,
        };
        out.extend(other.short.map(|c| format!("-{c}")));
        out.push(format!("--{}", other.long));
    }
    out
}

fn flag_spec(cmd: &Command, f: &Flag) -> String {
    let help = quoted(f.help);
    let (short, long) = match f.value {
        Some(_) => (f.short.map(|c| format!("-{c}+")), format!("--{}=", f.long)),
        None => (f.short.map(|c| format!("-{c}")), format!("--{}", f.long)),
    };
    let value = match f.value {
        Some(v) => format!(":{v}:{}", action(f.complete)),
        None => String::new(),
    };
    let exclusive = if matches!(f.long, "help" | "version") {
        "(- *)".to_owned()
    } else {
        let mut names: Vec<String> = match f.short {
            Some(c) => vec![format!("-{c}"), format!("--{}", f.long)],
            None => Vec::new(),
        };
        names.extend(conflicting(cmd, f));
        match names.is_empty() {
            true => String::new(),
            false => format!("({})", names.join(" ")),
        }
    };
    let spelled = match short {
        Some(s) => format!("{{{s},{long}}}"),
        None => long,
    };
    if exclusive.is_empty() {
        format!("'{spelled}[{help}]{value}'")
    } else if spelled.starts_with('{') {
        format!("'{exclusive}'{spelled}'[{help}]{value}'")
    } else {
        format!("'{exclusive}{spelled}[{help}]{value}'")
    }
}

fn arguments(out: &mut String, specs: &[String]) {
    out.push_str("    _arguments -s -S -C \\\n");
    for (i, spec) in specs.iter().enumerate() {
        let end = if i + 1 == specs.len() { "\n" } else { " \\\n" };
        let _ = write!(out, "        {spec}{end}");
    }
}

fn function(out: &mut String, cmd: &Command) {
    let _ = writeln!(out, "\n_axe_cmd_{}() {{", ident(cmd));
    let mut specs = flag_specs(cmd);
    let subs = cmd.subcommands();
    if subs.is_empty() {
        for arg in cmd.args {
            let star = if arg.many { "*" } else { "" };
            specs.push(format!("'{star}:{}:{}'", arg.name, action(arg.complete)));
        }
        arguments(out, &specs);
    } else {
        let described: Vec<(String, String)> = subs
            .iter()
            .map(|s| (s.word().to_owned(), s.about.to_owned()))
            .collect();
        let cases: Vec<(String, String)> = subs
            .iter()
            .map(|s| (s.word().to_owned(), format!("_axe_cmd_{}", ident(s))))
            .collect();
        group(out, cmd.name, specs, &described, &cases);
    }
    out.push_str("}\n");
}

/// `(word, text)` pairs: descriptions, or functions to call.
type Pairs = Vec<(String, String)>;

/// A command whose first word picks a subcommand.
fn group(
    out: &mut String,
    name: &str,
    mut specs: Vec<String>,
    described: &[(String, String)],
    cases: &[(String, String)],
) {
    out.push_str("    local curcontext=$curcontext state line\n");
    specs.push("'1: :->command'".into());
    specs.push("'*:: :->args'".into());
    arguments(out, &specs);
    out.push_str("    case $state in\n        command)\n            local -a commands\n            commands=(\n");
    for (word, about) in described {
        let _ = writeln!(out, "                '{word}:{}'", quoted(about));
    }
    let _ = writeln!(
        out,
        "            )\n            _describe -t commands '{name} command' commands\n            ;;\n        args)\n            case $words[1] in"
    );
    for (word, function) in cases {
        let _ = writeln!(out, "                {word}) {function} ;;");
    }
    out.push_str("            esac\n            ;;\n    esac\n");
}

/// `axe`: its words lead to the executables' functions; `mem` is a level
/// of its own; `help` completes command names.
fn dispatcher(p: &Program, out: &mut String) {
    let axe = p.front;
    let mut described = Vec::new();
    let mut cases = Vec::new();
    let mut groups: Vec<(&str, Pairs, Pairs)> = Vec::new();
    for t in p.tops() {
        let word = t.word().to_owned();
        match t {
            Top::One(_, cmd) => {
                described.push((word.clone(), cmd.about.to_owned()));
                cases.push((word, format!("_axe_cmd_{}", ident(cmd))));
            }
            Top::Group(first, subs) => {
                described.push((word.clone(), format!("The axe-{first}-* commands")));
                cases.push((word, format!("_axe_cmd_axe_{first}")));
                let d = subs
                    .iter()
                    .map(|(w, c)| (w.to_string(), c.about.to_owned()))
                    .collect();
                let c = subs
                    .iter()
                    .map(|(w, c)| (w.to_string(), format!("_axe_cmd_{}", ident(c))))
                    .collect();
                groups.push((first, d, c));
            }
        }
    }
    let names: Vec<String> = described.iter().map(|(w, _)| w.clone()).collect();
    described.push(("help".into(), "Print help, or a command's help".into()));
    described.push(("version".into(), "Print version".into()));
    cases.push(("help".into(), "_axe_cmd_axe_help".into()));
    out.push_str("\n_axe_cmd_axe() {\n");
    group(out, "axe", flag_specs(axe), &described, &cases);
    out.push_str("}\n");
    for (first, d, c) in &groups {
        let _ = writeln!(out, "\n_axe_cmd_axe_{first}() {{");
        group(out, &format!("axe {first}"), Vec::new(), d, c);
        out.push_str("}\n");
    }
    let _ = writeln!(
        out,
        "\n_axe_cmd_axe_help() {{\n    _arguments '1:command:({})'\n}}",
        names.join(" ")
    );
}
