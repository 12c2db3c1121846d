//! What the generators read: the `axe` command and the executables it
//! fronts, passed in by the caller so the generators import no command.

use crate::spec::Command;

/// `axe` and every executable it fronts, in `axe help`'s order.
pub struct Program {
    pub front: &'static Command,
    pub commands: &'static [&'static Command],
    /// The providers' names, offered as `name/` for a model value.
    pub providers: fn() -> Vec<&'static str>,
}

impl Program {
    /// The model prefixes offered for a model value: `anthropic/`, ...
    pub fn model_prefixes(&self) -> Vec<String> {
        (self.providers)()
            .iter()
            .map(|name| format!("{name}/"))
            .collect()
    }

    /// `axe` and every executable it fronts.
    pub fn executables(&self) -> impl Iterator<Item = &'static Command> {
        std::iter::once(self.front).chain(self.commands.iter().copied())
    }

    /// The words after `axe` that reach each executable: `["mem", "load"]`
    /// for `axe-mem-load`.
    pub fn routes(&self) -> Vec<(Vec<&'static str>, &'static Command)> {
        self.commands
            .iter()
            .map(|c| {
                let words = c.name.strip_prefix("axe-").unwrap_or(c.name);
                (words.split('-').collect(), *c)
            })
            .collect()
    }

    /// [`Program::routes`] by first word, in table order.
    pub fn tops(&self) -> Vec<Top> {
        let mut tops: Vec<Top> = Vec::new();
        for (words, cmd) in self.routes() {
            match words.as_slice() {
                [one] => tops.push(Top::One(one, cmd)),
                [first, second] => {
                    let group = tops.iter_mut().find_map(|t| match t {
                        Top::Group(g, subs) if g == first => Some(subs),
                        _ => None,
                    });
                    match group {
                        Some(subs) => subs.push((second, cmd)),
                        None => tops.push(Top::Group(first, vec![(second, cmd)])),
                    }
                }
                _ => {}
            }
        }
        tops
    }
}

/// A first word after `axe`: one executable (`run`), or a group of them
/// that takes a second word (`mem` for `axe-mem-*`).
pub enum Top {
    One(&'static str, &'static Command),
    Group(&'static str, Vec<(&'static str, &'static Command)>),
}

impl Top {
    pub fn word(&self) -> &'static str {
        match self {
            Top::One(w, _) | Top::Group(w, _) => w,
        }
    }
}
