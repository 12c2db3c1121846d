//! The executables' commands, one module each, named after its executable
//! (`log` is `axe-log`); those of a memory kind in the kind's folder
//! (`mem/` the run log's `axe-mem-*`, `notes/`, `state/`, whose `mod.rs`
//! holds what they share), plus what many share (`args`, `stdin`,
//! `answer`).

pub mod agents;
mod answer;
mod args;
pub mod axe;
pub mod chat;
pub mod config;
pub mod context;
pub mod export;
pub mod gc;
pub mod import;
pub mod llm;
pub mod log;
pub mod mcp;
mod mcp_login;
mod mcp_opened;
pub mod mem;
pub mod notes;
pub mod run;
pub mod state;
mod stdin;
pub mod sync;

use axe_cli::Command;

/// Every executable's command but `axe`'s, in the order `axe help` lists
/// them; for table checks and generated docs.
pub const ALL: &[&Command] = &[
    &run::COMMAND,
    &chat::COMMAND,
    &gc::COMMAND,
    &agents::COMMAND,
    &config::COMMAND,
    &llm::COMMAND,
    &context::COMMAND,
    &mcp::COMMAND,
    &log::COMMAND,
    &mem::path::COMMAND,
    &mem::append::COMMAND,
    &mem::load::COMMAND,
    &mem::count::COMMAND,
    &mem::trim::COMMAND,
    &notes::path::COMMAND,
    &notes::recall::COMMAND,
    &notes::remember::COMMAND,
    &notes::reflect::COMMAND,
    &notes::learn::COMMAND,
    &notes::search::COMMAND,
    &notes::prune::COMMAND,
    &notes::consolidate::COMMAND,
    &state::path::COMMAND,
    &state::show::COMMAND,
    &state::ingest::COMMAND,
    &state::record::COMMAND,
    &state::context::COMMAND,
    &sync::COMMAND,
    &import::COMMAND,
    &export::COMMAND,
];

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use axe_cli::Kind;

    use super::ALL;

    #[test]
    fn every_exit_code_a_description_names_is_in_the_table() {
        for cmd in ALL.iter().flat_map(|c| c.tree()) {
            let shown = cmd.description();
            assert!(!shown.contains("{exit:"), "{}: {shown}", cmd.name);
        }
    }

    #[test]
    fn flag_tables_are_consistent() {
        for cmd in ALL.iter().flat_map(|c| c.tree()) {
            let mut longs = HashSet::new();
            let mut shorts = HashSet::new();
            for f in cmd.all_flags() {
                assert!(longs.insert(f.long), "{}: --{} twice", cmd.name, f.long);
                if let Some(s) = f.short {
                    assert!(shorts.insert(s), "{}: -{s} twice", cmd.name);
                }
                assert!(!f.help.is_empty() && !f.help.contains('\n'));
                assert!(!f.help.ends_with('.'), "{}: --{}", cmd.name, f.long);
                if let Some(v) = f.value {
                    assert_eq!(v, v.to_uppercase(), "value names are upper case");
                    // Typed shells (Nushell) are told what a number is.
                    let kind = match v {
                        "N" => Kind::Int,
                        "SECONDS" | "T" => Kind::Number,
                        _ => Kind::Text,
                    };
                    assert_eq!(f.kind, kind, "{}: --{}", cmd.name, f.long);
                }
            }
            assert!(cmd.name.starts_with("axe"));
            assert!(!cmd.about.is_empty() && !cmd.usage.is_empty());
            for sub in cmd.subcommands() {
                assert_eq!(sub.name, format!("{} {}", cmd.name, sub.word()));
                assert!(
                    cmd.args.is_empty(),
                    "{}: the first word is the subcommand",
                    cmd.name
                );
            }
            assert!(
                cmd.args.iter().rev().skip(1).all(|a| !a.many),
                "{}: only the last argument takes many",
                cmd.name
            );
        }
    }
}
