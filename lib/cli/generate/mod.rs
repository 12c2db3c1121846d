//! Shell completions and man pages, generated from the command tables so
//! they always agree with `--help`. The generated files are committed in
//! `completions/` and `man/`; a test regenerates them and fails when the
//! committed copies differ.

mod bash;
mod fish;
mod man;
mod nushell;
mod program;
mod script;
mod zsh;

use std::path::{Path, PathBuf};

pub use program::{Program, Top};

use axe_base::error::{Error, Result};

/// Shells that get a completion script, as `axe --completions` names them.
pub const SHELLS: &[&str] = &["bash", "zsh", "fish", "nushell"];

impl Program {
    /// The completion script for `shell`.
    pub fn completions(&self, shell: &str) -> Result<String> {
        match shell {
            "bash" => Ok(bash::script(self)),
            "zsh" => Ok(zsh::script(self)),
            "fish" => Ok(fish::script(self)),
            "nushell" | "nu" => Ok(nushell::script(self)),
            _ => Err(crate::error::UsageError::UnknownShell {
                shell: shell.to_owned(),
                expected: SHELLS,
            }
            .into()),
        }
    }

    /// Every generated file, as `(path in the repository, contents)`.
    pub fn files(&self) -> Vec<(String, String)> {
        let scripts = [
            ("completions/axe.bash", bash::script(self)),
            ("completions/_axe", zsh::script(self)),
            ("completions/axe.fish", fish::script(self)),
            ("completions/axe.nu", nushell::script(self)),
        ];
        let mut files: Vec<(String, String)> = scripts
            .into_iter()
            .map(|(p, s)| (p.to_owned(), s))
            .collect();
        files.extend(
            self.executables()
                .map(|c| (format!("man/{}.1", c.name), man::page(self, c))),
        );
        files
    }

    /// Writes each executable's man page into `dir` (created if need be).
    pub fn write_man_pages(&self, dir: &Path) -> Result<Vec<PathBuf>> {
        let failed = |p: &Path, e: std::io::Error| {
            Error::Output(std::io::Error::new(
                e.kind(),
                format!("{}: {}", p.display(), axe_base::error::describe_io(&e)),
            ))
        };
        std::fs::create_dir_all(dir).map_err(|e| failed(dir, e))?;
        self.executables()
            .map(|c| {
                let path = dir.join(format!("{}.1", c.name));
                std::fs::write(&path, man::page(self, c)).map_err(|e| failed(&path, e))?;
                Ok(path)
            })
            .collect()
    }
}
