//! The committed completion scripts, driven by the real shells: bash's
//! programmable completion, zsh's completion system in a pseudo-terminal,
//! fish's `complete -C`. Each sees agent names from the agents directory,
//! flags, subcommands and model prefixes.

use std::path::PathBuf;

use crate::util::Env;

fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("completions")
        .join(name)
}

/// A world with two agents.
fn world() -> Env {
    let env = Env::new();
    for name in ["reviewer", "summarizer"] {
        env.agent(name, &format!("name = \"{name}\"\nmodel = \"x/y\"\n"));
    }
    env
}

/// What bash's completion function registered for `words[0]` offers for
/// the last word.
fn bash(env: &Env, words: &[&str]) -> Vec<String> {
    let program = format!(
        r#"source {}
spec=$(complete -p {cmd}) || exit 1
[[ $spec == *"-F _axe "* ]] || {{ echo "unexpected: $spec"; exit 1; }}
COMP_WORDS=("$@")
COMP_CWORD=$(($# - 1))
COMP_LINE="$*"
COMP_POINT=${{#COMP_LINE}}
_axe {cmd} "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\n' "${{COMPREPLY[@]}}""#,
        script("axe.bash").display(),
        cmd = words[0],
    );
    let out = env
        .shell("bash")
        .arg("-c")
        .arg(program)
        .arg("bash")
        .args(words)
        .assert()
        .success();
    crate::util::stdout(out.get_output())
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn bash_offers_agents_flags_subcommands_and_models() {
    if !crate::util::have("bash") {
        return;
    }
    let env = world();
    let agents = ["reviewer", "summarizer"];
    assert_eq!(bash(&env, &["axe-run", ""]), agents);
    assert_eq!(bash(&env, &["axe-run", "rev"]), ["reviewer"]);
    assert_eq!(bash(&env, &["axe-gc", "--dry-run", ""]), agents);
    assert_eq!(bash(&env, &["axe-mem-load", "-n", "3", ""]), agents);
    // One positional only.
    assert!(bash(&env, &["axe-run", "reviewer", ""]).is_empty());
    let flags = bash(&env, &["axe-run", "--"]);
    for flag in [
        "--model",
        "--skill",
        "--workdir",
        "--dry-run",
        "--json",
        "--help",
    ] {
        assert!(flags.iter().any(|f| f == flag), "{flag} not in {flags:?}");
    }
    assert_eq!(bash(&env, &["axe-run", "--dr"]), ["--dry-run"]);
    assert_eq!(
        bash(&env, &["axe-run", "--model", ""]),
        [
            "anthropic/",
            "openai/",
            "ollama/",
            "openrouter/",
            "google/",
            "requesty/",
            "atlascloud/",
            "edenai/"
        ]
    );
    assert_eq!(
        bash(&env, &["axe-run", "--model", "=", "op"]),
        ["openai/", "openrouter/"]
    );
    assert_eq!(
        bash(&env, &["axe-run", "--model", "=", "openr"]),
        ["openrouter/"]
    );
    // A flag's value is not a positional: the agent is still to come.
    assert_eq!(
        bash(&env, &["axe-run", "--model", "x/y", "s"]),
        ["summarizer"]
    );
    assert_eq!(
        bash(&env, &["axe-agents", ""]),
        ["list", "show", "check", "init", "edit", "mcp-login"]
    );
    assert_eq!(bash(&env, &["axe-agents", "show", ""]), agents);
    assert_eq!(bash(&env, &["axe-agents", "show", "--j"]), ["--json"]);
    assert_eq!(bash(&env, &["axe-config", ""]), ["path", "init"]);
    // The dispatcher: its words, then the executable's own completions.
    let top = bash(&env, &["axe", ""]);
    for word in [
        "run", "gc", "agents", "config", "llm", "mem", "help", "version",
    ] {
        assert!(top.iter().any(|w| w == word), "{word} not in {top:?}");
    }
    assert_eq!(
        bash(&env, &["axe", "mem", ""]),
        ["path", "append", "load", "count", "trim"]
    );
    assert_eq!(bash(&env, &["axe", "mem", "load", ""]), agents);
    assert_eq!(bash(&env, &["axe", "run", "--model", "an"]), ["anthropic/"]);
    assert_eq!(bash(&env, &["axe", "agents", "edit", "r"]), ["reviewer"]);
    assert_eq!(bash(&env, &["axe", "help", "ag"]), ["agents"]);
}

#[test]
fn bash_completes_paths_for_file_and_dir_values() {
    if !crate::util::have("bash") {
        return;
    }
    let env = world();
    env.write(&env.root().join("notes dir/skill.md"), "x");
    assert_eq!(bash(&env, &["axe-run", "--skill", "notes"]), ["notes dir"]);
    assert_eq!(
        bash(&env, &["axe-run", "--skill", "notes dir/"]),
        ["notes dir/skill.md"]
    );
    assert_eq!(
        bash(&env, &["axe-run", "--workdir", "notes"]),
        ["notes dir"]
    );
}

#[test]
fn bash_offers_no_agents_when_there_are_none() {
    if !crate::util::have("bash") {
        return;
    }
    let env = Env::new();
    assert!(bash(&env, &["axe-run", ""]).is_empty());
}

/// Types each input and a Tab into an interactive zsh with the committed
/// `_axe` on its fpath, and returns the command line after each.
fn zsh(env: &Env, inputs: &[&str]) -> Vec<String> {
    let out = env.root().join("zsh-lines");
    let driver = r#"
zmodload zsh/zpty || exit 1
local fdir=$1 out=$2; shift 2
zpty z zsh -f -i
zpty -w z "PS1='> '; bindkey -e; fpath=($fdir \$fpath); autoload -U compinit; compinit -u -D"
zpty -w z "dumpline() { print -r -- \"\$BUFFER\" >> $out; BUFFER=; }; zle -N dumpline; bindkey '^T' dumpline"
for input in "$@"; do
    zpty -n -w z "$input"$'\t\C-t'
done
local n=0
while (( n < 200 )); do
    [[ -f $out ]] && (( $(wc -l < $out) >= $# )) && break
    sleep 0.05
    (( n++ ))
done
zpty -d z
"#;
    env.shell("zsh")
        .arg("-f")
        .arg("-c")
        .arg(driver)
        .arg("zsh")
        .arg(script("_axe").parent().unwrap())
        .arg(&out)
        .args(inputs)
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success();
    std::fs::read_to_string(&out)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn zsh_completes_agents_flags_subcommands_and_models() {
    if !crate::util::have("zsh") {
        return;
    }
    let env = world();
    let cases = [
        ("axe-run r", "axe-run reviewer "),
        ("axe-run --dry", "axe-run --dry-run "),
        ("axe-run --model an", "axe-run --model anthropic/"),
        ("axe-gc --all --mod", "axe-gc --all --model="),
        ("axe-agents sh", "axe-agents show "),
        ("axe-agents show s", "axe-agents show summarizer "),
        ("axe-config i", "axe-config init "),
        ("axe ag", "axe agents "),
        ("axe mem lo", "axe mem load "),
        ("axe mem load r", "axe mem load reviewer "),
        ("axe run --model ol", "axe run --model ollama/"),
        ("axe agents edit su", "axe agents edit summarizer "),
    ];
    let inputs: Vec<&str> = cases.iter().map(|(i, _)| *i).collect();
    let lines = zsh(&env, &inputs);
    let expected: Vec<&str> = cases.iter().map(|(_, e)| *e).collect();
    assert_eq!(lines, expected);
}

/// fish's own completions for a command line, as `candidate` words.
fn fish(env: &Env, line: &str) -> Vec<String> {
    let out = env
        .shell("fish")
        .arg("--no-config")
        .arg("-c")
        .arg(format!(
            "source {}; complete -C {}",
            script("axe.fish").display(),
            shell_quote(line)
        ))
        .assert()
        .success();
    crate::util::stdout(out.get_output())
        .lines()
        .map(|l| l.split('\t').next().unwrap_or("").to_owned())
        .collect()
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "\\'"))
}

#[test]
fn fish_completes_agents_flags_subcommands_and_models() {
    if !crate::util::have("fish") {
        return;
    }
    let env = world();
    let agents = ["reviewer", "summarizer"];
    assert_eq!(fish(&env, "axe-run "), agents);
    assert_eq!(fish(&env, "axe-run --model x/y "), agents);
    assert!(fish(&env, "axe-run reviewer ").is_empty());
    assert_eq!(fish(&env, "axe-run --dr"), ["--dry-run"]);
    assert_eq!(
        fish(&env, "axe-run --model "),
        [
            "anthropic/",
            "atlascloud/",
            "edenai/",
            "google/",
            "ollama/",
            "openai/",
            "openrouter/",
            "requesty/"
        ]
    );
    assert_eq!(
        fish(&env, "axe-agents "),
        ["check", "edit", "init", "list", "mcp-login", "show"]
    );
    assert_eq!(fish(&env, "axe-agents show "), agents);
    assert_eq!(fish(&env, "axe-agents show --j"), ["--json"]);
    assert_eq!(
        fish(&env, "axe mem "),
        ["append", "count", "load", "path", "trim"]
    );
    assert_eq!(fish(&env, "axe mem load "), agents);
    assert_eq!(fish(&env, "axe run --js"), ["--json"]);
    assert_eq!(fish(&env, "axe agents show s"), ["summarizer"]);
    let top = fish(&env, "axe ");
    for word in [
        "agents", "config", "gc", "help", "llm", "mem", "run", "version",
    ] {
        assert!(top.iter().any(|w| w == word), "{word} not in {top:?}");
    }
}

/// [`world`] plus `./axe/agents` with one agent of its own and one that
/// shadows a config agent.
fn local_world() -> Env {
    let env = world();
    for name in ["local-only", "reviewer"] {
        env.write(
            &env.root().join(format!("axe/agents/{name}.toml")),
            format!("name = \"{name}\"\nmodel = \"x/y\"\n"),
        );
    }
    env
}

#[test]
fn every_shell_offers_local_agents_once() {
    let env = local_world();
    let all = ["local-only", "reviewer", "summarizer"];
    if crate::util::have("bash") {
        let mut got = bash(&env, &["axe-run", ""]);
        got.sort();
        assert_eq!(got, all);
        assert_eq!(bash(&env, &["axe-agents", "show", "loc"]), ["local-only"]);
    }
    if crate::util::have("fish") {
        assert_eq!(fish(&env, "axe-run "), all);
    }
    if crate::util::have("zsh") {
        assert_eq!(zsh(&env, &["axe-run loc"]), ["axe-run local-only "]);
    }
}
