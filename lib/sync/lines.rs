//! The three-way line merge of notes a person or a reflect rewrites
//! (MEMORY.md, world topics), by `git merge-file`: git's own merge of
//! text, the one its users know. Where both sides changed the same lines
//! the local text is kept (`--ours`) and the caller keeps the other side
//! whole beside it; a conflict marker never reaches a note.

use std::fs;

use super::error::{Result, SyncError};
use super::git::Git;

/// `ours` and `theirs` merged against `base`, and whether some lines
/// conflicted (resolved to ours).
pub fn merge(git: &Git, base: &[u8], ours: &[u8], theirs: &[u8]) -> Result<(Vec<u8>, bool)> {
    let dir = git.git_dir().join("axe-sync");
    fs::create_dir_all(&dir).map_err(|e| SyncError::io("mkdir", &dir, e))?;
    let pid = std::process::id();
    let paths = ["ours", "base", "theirs"].map(|n| dir.join(format!("{n}-{pid}")));
    let result = (|| {
        for (path, bytes) in paths.iter().zip([ours, base, theirs]) {
            fs::write(path, bytes).map_err(|e| SyncError::io("write", path, e))?;
        }
        let run = |ours_wins: bool| {
            let mut args = vec![
                "merge-file",
                "-p",
                "-L",
                "ours",
                "-L",
                "base",
                "-L",
                "theirs",
            ];
            if ours_wins {
                args.push("--ours");
            }
            let files = paths.iter().map(|p| p.as_os_str());
            let args: Vec<&std::ffi::OsStr> =
                args.iter().map(|a| a.as_ref()).chain(files).collect();
            git.output(&args, None)
        };
        let out = run(false)?;
        match out.code {
            Some(0) => Ok((out.stdout, false)),
            Some(1..=127) => {
                let out = run(true)?;
                match out.ok {
                    true => Ok((out.stdout, true)),
                    false => Err(super::git::failed(&["merge-file"], &out)),
                }
            }
            _ => Err(super::git::failed(&["merge-file"], &out)),
        }
    })();
    for p in &paths {
        let _ = fs::remove_file(p);
    }
    result
}
