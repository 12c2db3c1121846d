//! Rules between a command's flags and arguments, as data: what must be
//! given, what cannot go together. The parser enforces them (in table
//! order, after the words are sorted and before the command runs), and
//! `--help` and the man page list them, from the same values.
//!
//! The messages are the Go `axe`'s (cobra's "missing required flag",
//! "cannot use both", and the agent-name wordings of `axe-mem-*` and
//! `axe gc`); the
//! runner adds the usage line to a missing argument's.

use super::flag::{Arg, Flag};
use super::matches::Matches;

/// What a rule names: a flag, or a positional argument of the command.
#[derive(Clone, Copy)]
pub enum Item {
    Flag(&'static Flag),
    Arg(&'static Arg),
}

/// One rule of a command line.
#[derive(Clone, Copy)]
pub enum Rule {
    /// Must be given.
    Required(Item),
    /// One of the two must be given; the first is the usual one.
    Either(Item, Item),
    /// Not both.
    Conflict(Item, Item),
    /// The first must be given when the second is.
    RequiredWith(Item, Item),
}

impl Item {
    /// Whether `m`, the line of a command with positional `args`, has it.
    fn given(self, args: &[Arg], m: &Matches) -> bool {
        match self {
            Item::Flag(f) => m.given(f),
            Item::Arg(a) => args
                .iter()
                .position(|x| x.name == a.name)
                .is_some_and(|i| m.args().len() > i),
        }
    }

    /// As the rules' lines show it: `--task`, `<AGENT>`.
    fn shown(self) -> String {
        match self {
            Item::Flag(f) => format!("--{}", f.long),
            Item::Arg(a) => format!("<{}>", a.name),
        }
    }

    /// As the errors name it: `--task`, `agent name`.
    fn named(self) -> String {
        match self {
            Item::Flag(f) => format!("--{}", f.long),
            Item::Arg(a) => a.noun.to_owned(),
        }
    }
}

impl Rule {
    /// The argument this rule finds missing when broken, if it is about
    /// one: `<AGENT>` for "agent name is required".
    pub fn missing_arg(self) -> Option<&'static Arg> {
        match self {
            Rule::Required(Item::Arg(a)) | Rule::Either(Item::Arg(a), _) => Some(a),
            _ => None,
        }
    }

    /// The error when `m` (with positional `args`) breaks this rule.
    fn broken(self, args: &[Arg], m: &Matches) -> Option<String> {
        let given = |i: Item| i.given(args, m);
        let broken = match self {
            Rule::Required(i) => !given(i),
            Rule::Either(a, b) => !given(a) && !given(b),
            Rule::Conflict(a, b) => given(a) && given(b),
            Rule::RequiredWith(a, b) => !given(a) && given(b),
        };
        broken.then(|| self.message())
    }

    /// What the error says when the rule is broken.
    pub fn message(self) -> String {
        match self {
            Rule::Required(Item::Flag(f)) => format!("missing required flag --{}", f.long),
            Rule::Required(Item::Arg(a)) => format!("{} is required", a.noun),
            Rule::Either(Item::Flag(f), b) => {
                format!("missing required flag --{} (or {})", f.long, b.named())
            }
            Rule::Either(Item::Arg(a), b) => {
                format!("{} is required (or use {})", a.noun, b.named())
            }
            Rule::Conflict(a, Item::Arg(x)) => {
                format!("cannot specify both {} and {}", a.named(), article(x.noun))
            }
            Rule::Conflict(a, b) => format!("cannot use both {} and {}", a.named(), b.named()),
            Rule::RequiredWith(a, b) => format!("{} is required with {}", a.named(), b.named()),
        }
    }

    /// One line for `--help` and the man page.
    pub fn describe(self) -> String {
        match self {
            Rule::Required(i) => format!("{} is required", i.shown()),
            Rule::Either(a, b) => format!("{} or {} is required", a.shown(), b.shown()),
            Rule::Conflict(a, b) => format!("{} and {} cannot go together", a.shown(), b.shown()),
            Rule::RequiredWith(a, b) => format!("{} is required with {}", a.shown(), b.shown()),
        }
    }
}

/// `an agent name`, `a topic`.
fn article(noun: &str) -> String {
    match noun.starts_with(['a', 'e', 'i', 'o', 'u']) {
        true => format!("an {noun}"),
        false => format!("a {noun}"),
    }
}

/// The first of `rules` that `m`, the line of a command with positional
/// `args`, breaks, with its message.
pub fn first_broken(rules: &[Rule], args: &[Arg], m: &Matches) -> Option<(Rule, String)> {
    rules.iter().find_map(|r| Some((*r, r.broken(args, m)?)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flag::Complete;

    const AGENT: Arg = Arg {
        name: "AGENT",
        noun: "agent name",
        help: "h",
        complete: Complete::Nothing,
        many: false,
    };
    const FILE: Flag = Flag::with_value("file", "PATH", "f");
    const TASK: Flag = Flag::with_value("task", "TEXT", "t");
    const TASK_FILE: Flag = Flag::with_value("task-file", "PATH", "t");
    const KEEP: Flag = Flag::with_value("keep", "N", "k");

    #[test]
    fn messages_are_the_go_axes() {
        let (a, f) = (Item::Arg(&AGENT), Item::Flag(&FILE));
        let (t, tf) = (Item::Flag(&TASK), Item::Flag(&TASK_FILE));
        for (rule, said) in [
            (Rule::Required(a), "agent name is required"),
            (Rule::Required(t), "missing required flag --task"),
            (Rule::Either(a, f), "agent name is required (or use --file)"),
            (
                Rule::Either(t, tf),
                "missing required flag --task (or --task-file)",
            ),
            (
                Rule::Conflict(f, a),
                "cannot specify both --file and an agent name",
            ),
            (
                Rule::Conflict(t, tf),
                "cannot use both --task and --task-file",
            ),
            (
                Rule::RequiredWith(Item::Flag(&KEEP), f),
                "--keep is required with --file",
            ),
        ] {
            assert_eq!(rule.message(), said);
        }
        assert_eq!(
            Rule::Conflict(f, a).describe(),
            "--file and <AGENT> cannot go together"
        );
    }
}
