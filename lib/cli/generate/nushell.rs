//! The Nushell module: an `export extern` per command, under its own name
//! (`axe-run`) and the dispatcher's (`axe run`), with custom completers for
//! agent names and model prefixes. Load it with `use axe.nu *`; the file
//! must be called `axe.nu`, whose module's `main` becomes `axe`.

use std::fmt::Write;

use super::program::Program;
use super::script::header;
use crate::flag::{Complete, Flag, Kind};
use crate::spec::Command;

const HELPERS: &str = r#"
# The agent names: the stems of ./axe/agents/*.toml and of
# <config>/agents/*.toml, each once.
def "nu-complete axe agents" [] {
    let dir = (do { ^axe-config path } | complete | get stdout | str trim)
    let local = (glob ('axe' | path join agents '*.toml'))
    let config = if ($dir | is-empty) { [] } else { glob ($dir | path join agents '*.toml') }
    $local | append $config | each {|f| $f | path parse | get stem } | uniq | sort
}

def "nu-complete axe models" [] {
    [%MODELS%]
}

def "nu-complete axe shells" [] {
    [bash zsh fish nushell]
}
"#;

pub fn script(p: &Program) -> String {
    let mut out = header("#", "nushell");
    let models: Vec<String> = p
        .model_prefixes()
        .iter()
        .map(|m| format!("\"{m}\""))
        .collect();
    out.push_str(&HELPERS.replace("%MODELS%", &models.join(" ")));
    let axe = p.front;
    let words: Vec<String> = p.routes().iter().map(|(w, _)| w.join(" ")).collect();
    let _ = writeln!(
        out,
        "\ndef \"nu-complete axe commands\" [] {{\n    [{}]\n}}",
        words
            .iter()
            .map(|w| format!("\"{w}\""))
            .collect::<Vec<_>>()
            .join(" ")
    );
    // `main`, not "axe": a module (axe.nu) may not export a command
    // named after itself, and its `main` is what `use` makes `axe`.
    extern_(&mut out, "main", axe);
    for cmd in p.executables().skip(1).flat_map(|c| c.tree()) {
        extern_(&mut out, cmd.name, cmd);
    }
    for (words, cmd) in p.routes() {
        let name = format!("axe {}", words.join(" "));
        for c in cmd.tree() {
            let sub = c.name.strip_prefix(cmd.name).unwrap_or("");
            extern_(&mut out, &format!("{name}{sub}"), c);
        }
    }
    out
}

fn shape(kind: Complete) -> &'static str {
    match kind {
        Complete::Nothing => "string",
        Complete::Agent => "string@\"nu-complete axe agents\"",
        Complete::File => "path",
        Complete::Dir => "directory",
        Complete::Model => "string@\"nu-complete axe models\"",
    }
}

fn comment(text: &str) -> String {
    text.replace('\n', " ")
}

fn extern_(out: &mut String, name: &str, cmd: &Command) {
    let _ = writeln!(
        out,
        "\n# {}\nexport extern {} [",
        comment(cmd.about),
        if name == "main" {
            name.to_owned()
        } else {
            format!("\"{name}\"")
        }
    );
    if !cmd.subcommands().is_empty() {
        // The subcommands are externs of their own.
    } else if cmd.name == "axe" {
        out.push_str("    command?: string@\"nu-complete axe commands\"  # The subcommand\n");
        out.push_str("    ...args: string  # Its arguments\n");
    } else {
        for arg in cmd.args {
            let lower = arg.name.to_lowercase();
            let (prefix, suffix) = if arg.many { ("...", "") } else { ("", "?") };
            let _ = writeln!(
                out,
                "    {prefix}{lower}{suffix}: {}  # {}",
                shape(arg.complete),
                comment(arg.help)
            );
        }
    }
    for f in cmd.all_flags() {
        let _ = writeln!(out, "    {}", flag(cmd, f));
    }
    out.push_str("]\n");
}

fn flag(cmd: &Command, f: &Flag) -> String {
    let short = f.short.map(|c| format!("(-{c})")).unwrap_or_default();
    let shape = match (cmd.name, f.long, f.value, f.kind) {
        (_, _, None, _) => String::new(),
        ("axe", "completions", _, _) => ": string@\"nu-complete axe shells\"".into(),
        (_, _, Some(_), Kind::Int) => ": int".into(),
        (_, _, Some(_), Kind::Number) => ": number".into(),
        (_, _, Some(_), Kind::Text) => format!(": {}", shape(f.complete)),
    };
    format!("--{}{short}{shape}  # {}", f.long, comment(f.help))
}
