//! The fish completions: `complete` lines per command, conditions from two
//! helpers that read the command line, and `axe WORD...` handed to the
//! executable's own completions with `complete -C`.

use std::fmt::Write;

use super::program::{Program, Top};
use super::script::header;
use crate::flag::{Complete, Flag};
use crate::spec::Command;

const HELPERS: &str = r#"
# The agent names: the stems of ./axe/agents/*.toml and of
# <config>/agents/*.toml, each once.
function __axe_agents
    set -l files ./axe/agents/*.toml
    set -l dir (command axe-config path 2>/dev/null); and set -a files $dir/agents/*.toml
    for f in $files
        test -f $f; and string replace -r '^.*/(.*)\.toml$' '$1' -- $f
    end | sort -u
end

# __axe_args VALUED...: the positional words typed so far after the
# command, skipping the values of the flags VALUED.
function __axe_args
    set -l skip 0
    for w in (commandline -opc)[2..-1]
        if test $skip = 1
            set skip 0
        else if contains -- $w $argv
            set skip 1
        else if not string match -q -- '-*' $w
            echo $w
        end
    end
end

# __axe_at N WORD VALUED...: true when N positionals are typed and, unless
# WORD is -, the first is WORD (a subcommand).
function __axe_at
    set -l args (__axe_args $argv[3..-1])
    test (count $args) -eq $argv[1]; or return 1
    test $argv[2] = -; or test "$args[1]" = $argv[2]
end

# __axe_in WORD VALUED...: true when the first positional is WORD.
function __axe_in
    set -l args (__axe_args $argv[2..-1])
    test "$args[1]" = $argv[1]
end

# `axe WORD... ARGS`: the completions of axe-WORD-... for ARGS.
function __axe_delegate
    set -l words (commandline -opc)[2..-1]
    set -l known %ROUTES%
    for n in 1 2
        set -l program axe-(string join - -- $words[1..$n])
        if contains -- $program $known
            set -l rest $words[(math $n + 1)..-1]
            complete -C (string join ' ' -- $program (string escape -- $rest) (commandline -ct))
            return
        end
    end
end
"#;

pub fn script(p: &Program) -> String {
    let mut out = header("#", "fish");
    let known: Vec<&str> = p.executables().skip(1).map(|c| c.name).collect();
    out.push_str(&HELPERS.replace("%ROUTES%", &known.join(" ")));
    let models = p.model_prefixes().join(" ");
    dispatcher(p, &models, &mut out);
    for cmd in p.executables().skip(1) {
        let _ = writeln!(out, "\n# {}\ncomplete -c {} -f", cmd.name, cmd.name);
        let subs = cmd.subcommands();
        let own = valued(cmd);
        flags(&mut out, &models, cmd.name, cmd, "");
        positionals(&mut out, &models, cmd.name, cmd, "-", 0, &own);
        for sub in subs {
            let _ = writeln!(
                out,
                "complete -c {} -n '__axe_at 0 - {own}' -a {} -d {}",
                cmd.name,
                sub.word(),
                quote(sub.about)
            );
            let cond = format!("__axe_in {} {}", sub.word(), valued(sub));
            flags(&mut out, &models, cmd.name, sub, &cond);
            positionals(
                &mut out,
                &models,
                cmd.name,
                sub,
                sub.word(),
                1,
                &valued(sub),
            );
        }
    }
    out
}

/// The spellings of the flags that take a value, for `__axe_args`.
fn valued(cmd: &Command) -> String {
    cmd.all_flags()
        .filter(|f| f.value.is_some())
        .flat_map(|f| {
            std::iter::once(format!("--{}", f.long)).chain(f.short.map(|c| format!("-{c}")))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "\\'"))
}

fn flags(out: &mut String, models: &str, program: &str, cmd: &Command, cond: &str) {
    for f in cmd.all_flags() {
        let _ = write!(out, "complete -c {program}");
        if !cond.is_empty() {
            let _ = write!(out, " -n '{cond}'");
        }
        out.push_str(&flag(f, models));
        out.push('\n');
    }
}

fn flag(f: &Flag, models: &str) -> String {
    let mut s = String::new();
    if let Some(c) = f.short {
        let _ = write!(s, " -s {c}");
    }
    let _ = write!(s, " -l {}", f.long);
    if f.value.is_some() {
        s.push_str(match f.complete {
            Complete::File => " -r -F",
            Complete::Dir => " -x -a '(__fish_complete_directories)'",
            _ => " -x",
        });
        s.push_str(&values(f.complete, models));
    }
    let _ = write!(s, " -d {}", quote(f.help));
    s
}

/// `-a` for values of a kind that fish does not complete by itself;
/// `models` are the model prefixes.
fn values(kind: Complete, models: &str) -> String {
    match kind {
        Complete::Agent => " -a '(__axe_agents)'".into(),
        Complete::Model => format!(" -a '{models}'"),
        _ => String::new(),
    }
}

/// The positionals of `cmd`, counted after `skip` subcommand words.
fn positionals(
    out: &mut String,
    models: &str,
    program: &str,
    cmd: &Command,
    word: &str,
    skip: usize,
    valued: &str,
) {
    for (i, arg) in cmd.args.iter().enumerate() {
        let at = if arg.many {
            format!("__axe_in {word} {valued}")
        } else {
            format!("__axe_at {} {word} {valued}", skip + i)
        };
        let at = if arg.many && word == "-" {
            String::from("true")
        } else {
            at
        };
        let what = match arg.complete {
            Complete::Agent => " -a '(__axe_agents)'".to_owned(),
            Complete::File => " -F".to_owned(),
            Complete::Dir => " -a '(__fish_complete_directories)'".to_owned(),
            Complete::Model => values(Complete::Model, models),
            Complete::Nothing => continue,
        };
        let _ = writeln!(out, "complete -c {program} -n '{}'{what}", at.trim_end());
    }
}

/// `axe`: its first words, `mem`'s second words, then the executable's
/// own completions.
fn dispatcher(p: &Program, models: &str, out: &mut String) {
    let axe = p.front;
    out.push_str("\n# axe\ncomplete -c axe -f\n");
    flags(out, models, "axe", axe, "__axe_at 0 -");
    let tops = p.tops();
    for t in &tops {
        let about = match t {
            Top::One(_, cmd) => cmd.about.to_owned(),
            Top::Group(first, _) => format!("The axe-{first}-* commands"),
        };
        let _ = writeln!(
            out,
            "complete -c axe -n '__axe_at 0 -' -a {} -d {}",
            t.word(),
            quote(&about)
        );
        if let Top::Group(first, subs) = t {
            for (second, cmd) in subs {
                let _ = writeln!(
                    out,
                    "complete -c axe -n '__axe_at 1 {first}' -a {second} -d {}",
                    quote(cmd.about)
                );
            }
        }
    }
    let names: Vec<&str> = tops.iter().map(Top::word).collect();
    out.push_str(
        "complete -c axe -n '__axe_at 0 -' -a help -d 'Print help, or a command\\'s help'\n",
    );
    out.push_str("complete -c axe -n '__axe_at 0 -' -a version -d 'Print version'\n");
    let _ = writeln!(
        out,
        "complete -c axe -n '__axe_at 1 help' -a '{}'",
        names.join(" ")
    );
    out.push_str("complete -c axe -n 'not __axe_at 0 -' -a '(__axe_delegate)'\n");
}
