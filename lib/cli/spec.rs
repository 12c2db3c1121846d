//! Commands and flags as data.
//!
//! Each executable is one [`Command`] value: its name, words, positional
//! arguments and a table of [`Flag`]s, or a list of subcommands that are
//! commands in turn. The parser, `--help`, the man pages and the shell
//! completions are all generated from these values, so they cannot disagree.

use std::io::Write;

use super::flag::{Arg, Flag, HELP, VERSION};
use super::matches::Matches;
use super::rule::Rule;
use axe_base::error::{EXIT_CODES, Result};

/// One executable.
pub struct Command {
    /// The executable's name, e.g. `axe-mem-load`; a subcommand's is the
    /// executable's followed by its own word, `axe-agents list`.
    pub name: &'static str,
    /// One line: what it does.
    pub about: &'static str,
    /// Usage lines after the name, e.g. `[OPTIONS] <AGENT>`.
    pub usage: &'static [&'static str],
    /// Positional arguments, in order; all optional to the parser, the
    /// command checks what it needs.
    pub args: &'static [Arg],
    /// Options, without `--help` and `--version`, which every command has.
    pub flags: &'static [Flag],
    /// What must be given and what cannot go together, checked by the
    /// parser in this order.
    pub rules: &'static [Rule],
    /// Paragraphs for `--help` and the man page, after the options.
    pub description: &'static str,
    pub run: Run,
}

/// What a command does with its command line.
pub enum Run {
    /// Does the work; writes its result to the given stdout.
    Action(fn(&Matches, &mut dyn Write) -> Result<()>),
    /// The first word names one of these (`axe-agents list`), which reads
    /// the rest of the line.
    Subcommands(&'static [Command]),
    /// As `Subcommands`, but a line that names none of them is the first
    /// one's (`axe-sync` and `axe-sync notes` are `axe-sync run ...`,
    /// as `git stash` is `git stash push`); a word one or two edits from a
    /// subcommand's is still taken for a mistyped subcommand.
    Default(&'static [Command]),
}

impl Command {
    /// The command's flags followed by `--help` and `--version`.
    pub fn all_flags(&self) -> impl Iterator<Item = &Flag> {
        self.flags.iter().chain([&HELP, &VERSION])
    }

    /// The flag named `--long`, if the command has it.
    pub fn flag(&self, long: &str) -> Option<&Flag> {
        self.all_flags().find(|f| f.long == long)
    }

    /// The executable this command belongs to: `axe-agents` for
    /// `axe-agents list`.
    pub fn program(&self) -> &'static str {
        self.name.split(' ').next().unwrap_or(self.name)
    }

    /// The word that selects a subcommand: `list` for `axe-agents list`.
    pub fn word(&self) -> &'static str {
        self.name.rsplit(' ').next().unwrap_or(self.name)
    }

    /// The subcommands, empty for a command that does the work itself.
    pub fn subcommands(&self) -> &'static [Command] {
        match self.run {
            Run::Action(_) => &[],
            Run::Subcommands(subs) | Run::Default(subs) => subs,
        }
    }

    /// The description as `--help` and the man page show it: each
    /// `{exit:NAME}` becomes `exit N`, N the code of that name in
    /// [`EXIT_CODES`], so that what a command says it exits with is the
    /// table's, not a number typed beside it (one said 4, the budget's,
    /// for a conflict).
    pub fn description(&self) -> String {
        let mut text = self.description.to_owned();
        for code in &EXIT_CODES {
            let named = format!("{{exit:{}}}", code.name);
            text = text.replace(&named, &format!("exit {}", code.code));
        }
        text
    }

    /// This command and its subcommands, depth first.
    pub fn tree(&'static self) -> Vec<&'static Command> {
        let mut all = vec![self];
        for sub in self.subcommands() {
            all.extend(sub.tree());
        }
        all
    }
}
