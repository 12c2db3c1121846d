//! The bash completion script: a small engine that walks the words typed
//! so far, plus one spec function per command saying which flags take
//! values, what each positional completes to, and the subcommands.

use std::fmt::Write;

use super::program::{Program, Top};
use super::script::{header, ident, kind_name};
use crate::spec::Command;

/// The engine; `%MODELS%` is replaced with the model prefixes. Candidates
/// are split on newlines only, so file names with spaces stay whole.
const ENGINE: &str = r#"
# The agent names: the stems of ./axe/agents/*.toml and of
# <config>/agents/*.toml, where axe-config says <config> is; each once.
_axe_agent_names() {
    local dir f
    local -A seen=()
    dir=$(command axe-config path 2>/dev/null)
    for f in ./axe/agents/*.toml ${dir:+"$dir"/agents/*.toml}; do
        [[ -f $f ]] || continue
        f=${f##*/}
        f=${f%.toml}
        [[ -n ${seen[$f]-} ]] && continue
        seen[$f]=1
        printf '%s\n' "$f"
    done
}

# _axe_values KIND: candidates for $cur of KIND (agent, file, dir, model,
# words:a,b,c or none).
_axe_values() {
    local IFS=$'\n'
    case $1 in
        agent) COMPREPLY=($(compgen -W "$(_axe_agent_names)" -- "$cur")) ;;
        file)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -f -- "$cur"))
            ;;
        dir)
            compopt -o filenames 2>/dev/null
            COMPREPLY=($(compgen -d -- "$cur"))
            ;;
        model)
            compopt -o nospace 2>/dev/null
            COMPREPLY=($(compgen -W $'%MODELS%' -- "$cur"))
            ;;
        words:*)
            local words=${1#words:}
            COMPREPLY=($(compgen -W "${words//,/$'\n'}" -- "$cur"))
            ;;
        *) COMPREPLY=() ;;
    esac
}

# _axe_complete SPEC: completes the word at COMP_CWORD for the command
# whose spec function is _axe_spec_SPEC. A spec sets flags (every
# spelling), valued (" --flag=KIND " for flags that take a value), args
# (the KIND of each positional; a trailing "..." repeats the last) and subs
# (" word=SPEC " for subcommands).
_axe_complete() {
    local cur=${COMP_WORDS[COMP_CWORD]} flags valued args subs
    local i=1 pos=0 word kind sub
    "_axe_spec_$1"
    while ((i < COMP_CWORD)); do
        word=${COMP_WORDS[i]}
        if [[ $word == -?* && $valued == *" $word="* ]]; then
            kind=${valued#* "$word"=}
            kind=${kind%% *}
            # --flag=value arrives as three words: --flag, =, value.
            [[ ${COMP_WORDS[i + 1]} == = ]] && ((i++))
            ((i++))
            if ((i >= COMP_CWORD)); then
                [[ $cur == = ]] && cur=
                _axe_values "$kind"
                return
            fi
        elif [[ $word != -* && $pos == 0 && $subs == *" $word="* ]]; then
            sub=${subs#* "$word"=}
            "_axe_spec_${sub%% *}"
        elif [[ $word != -* ]]; then
            ((pos++))
        fi
        ((i++))
    done
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$flags" -- "$cur"))
    elif [[ -n $subs && $pos == 0 ]]; then
        local names=() s
        for s in $subs; do names+=("${s%%=*}"); done
        COMPREPLY=($(compgen -W "${names[*]}" -- "$cur"))
    else
        local kinds=($args)
        if ((pos < ${#kinds[@]})); then
            kind=${kinds[pos]}
        else
            kind=${kinds[${#kinds[@]} - 1]}
            [[ $kind == *... ]] || kind=none
        fi
        _axe_values "${kind%...}"
    fi
}

_axe() {
    local name=${1##*/}
    _axe_complete "${name//-/_}"
}
"#;

pub fn script(p: &Program) -> String {
    let mut out = header("#", "bash");
    out.push_str(&ENGINE.replace("%MODELS%", &p.model_prefixes().join("\\n")));
    out.push('\n');
    dispatcher_specs(p, &mut out);
    for cmd in p.executables().skip(1).flat_map(|c| c.tree()) {
        spec(&mut out, cmd);
    }
    let names: Vec<&str> = p.executables().map(|c| c.name).collect();
    let _ = writeln!(out, "complete -F _axe {}", names.join(" "));
    out
}

/// The variables of one `_axe_spec_*` function, as the engine reads them.
struct Spec {
    id: String,
    flags: String,
    valued: String,
    args: String,
    subs: String,
}

impl Spec {
    /// A spec with `cmd`'s flags and nothing else.
    fn flags_of(id: String, cmd: &Command) -> Spec {
        let mut flags = Vec::new();
        let mut valued = String::from(" ");
        for f in cmd.all_flags() {
            let mut spellings = vec![format!("--{}", f.long)];
            spellings.extend(f.short.map(|c| format!("-{c}")));
            if f.value.is_some() {
                for s in &spellings {
                    let _ = write!(valued, "{s}={} ", kind_name(f.complete));
                }
            }
            flags.extend(spellings);
        }
        Spec {
            id,
            flags: flags.join(" "),
            valued,
            args: String::new(),
            subs: String::new(),
        }
    }

    fn empty(id: &str) -> Spec {
        Spec {
            id: id.to_owned(),
            flags: String::new(),
            valued: String::new(),
            args: String::new(),
            subs: String::new(),
        }
    }

    /// `word=SPEC` pairs, space separated and padded for the engine's
    /// `" word="` lookup.
    fn subs(mut self, pairs: &[String]) -> Spec {
        if !pairs.is_empty() {
            self.subs = format!(" {} ", pairs.join(" "));
        }
        self
    }

    fn write(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "_axe_spec_{}() {{\n    flags='{}'\n    valued='{}'\n    args='{}'\n    subs='{}'\n}}",
            self.id, self.flags, self.valued, self.args, self.subs
        );
    }
}

/// One command's spec function.
fn spec(out: &mut String, cmd: &Command) {
    let mut spec = Spec::flags_of(ident(cmd), cmd);
    spec.args = cmd
        .args
        .iter()
        .map(|a| {
            format!(
                "{}{}",
                kind_name(a.complete),
                if a.many { "..." } else { "" }
            )
        })
        .collect::<Vec<_>>()
        .join(" ");
    let subs: Vec<String> = cmd
        .subcommands()
        .iter()
        .map(|s| format!("{}={}", s.word(), ident(s)))
        .collect();
    spec.subs(&subs).write(out);
}

/// `axe`'s spec: its first words lead to the executables' specs, `mem` to
/// a level of its own; `help` completes command names.
fn dispatcher_specs(p: &Program, out: &mut String) {
    let mut top: Vec<String> = Vec::new();
    let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
    for t in p.tops() {
        match t {
            Top::One(word, cmd) => top.push(format!("{word}={}", ident(cmd))),
            Top::Group(word, subs) => {
                top.push(format!("{word}=axe_{word}"));
                let subs = subs
                    .iter()
                    .map(|(w, c)| format!("{w}={}", ident(c)))
                    .collect();
                groups.push((word, subs));
            }
        }
    }
    top.push("help=axe_help".into());
    top.push("version=axe_version".into());
    let names: Vec<&str> = top.iter().filter_map(|t| t.split('=').next()).collect();
    let mut help = Spec::empty("axe_help");
    help.args = format!("words:{}...", names.join(","));
    Spec::flags_of("axe".into(), p.front).subs(&top).write(out);
    for (group, subs) in &groups {
        let mut spec = Spec::empty(&format!("axe_{group}")).subs(subs);
        spec.flags = "-h --help".into();
        spec.write(out);
    }
    help.write(out);
    Spec::empty("axe_version").write(out);
}
