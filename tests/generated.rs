//! The committed completions and man pages: current with the flag tables,
//! the same as `axe --completions` prints, and clean under the man page
//! linters.

use std::path::Path;
use std::process::Command;

use crate::util::Env;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// rust-analyzer's `ensure_file_contents`: regenerate, compare, and with
/// `AXE_UPDATE_GENERATED=1` rewrite what differs.
#[test]
fn generated_files_are_current() {
    let update = std::env::var_os("AXE_UPDATE_GENERATED").is_some();
    let mut stale = Vec::new();
    let files = axe::commands::axe::PROGRAM.files();
    for (path, text) in &files {
        let full = root().join(path);
        if std::fs::read_to_string(&full).ok().as_ref() == Some(text) {
            continue;
        }
        if update {
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(&full, text).unwrap();
        }
        stale.push(path.clone());
    }
    for dir in ["completions", "man"] {
        for entry in std::fs::read_dir(root().join(dir)).unwrap() {
            let name = format!("{dir}/{}", entry.unwrap().file_name().to_string_lossy());
            assert!(
                files.iter().any(|(p, _)| *p == name),
                "{name} is not generated any more: delete it"
            );
        }
    }
    assert!(
        update || stale.is_empty(),
        "stale generated files {stale:?}: run `AXE_UPDATE_GENERATED=1 cargo test --test integration generated` and commit them"
    );
}

#[test]
fn axe_prints_each_committed_completion_script() {
    let env = Env::new();
    for (shell, file) in [
        ("bash", "axe.bash"),
        ("zsh", "_axe"),
        ("fish", "axe.fish"),
        ("nushell", "axe.nu"),
    ] {
        let committed = std::fs::read_to_string(root().join("completions").join(file)).unwrap();
        env.cmd("axe")
            .args(["--completions", shell])
            .assert()
            .success()
            .stdout(committed);
    }
    env.cmd("axe")
        .args(["--completions", "tcsh"])
        .assert()
        .code(1)
        .stdout("")
        .stderr("error parsing flag --completions: unknown shell \"tcsh\" (expected one of bash, zsh, fish, nushell)\n");
}

#[test]
fn axe_writes_the_committed_man_pages() {
    let env = Env::new();
    let dir = env.root().join("share/man/man1");
    let out = env
        .cmd("axe")
        .arg("--man-pages")
        .arg(&dir)
        .assert()
        .success();
    let listed = crate::util::stdout(out.get_output());
    let mut count = 0;
    for entry in std::fs::read_dir(root().join("man")).unwrap() {
        let entry = entry.unwrap();
        let written = dir.join(entry.file_name());
        assert!(listed.contains(&*written.to_string_lossy()));
        assert_eq!(
            std::fs::read(&written).unwrap(),
            std::fs::read(entry.path()).unwrap()
        );
        count += 1;
    }
    assert_eq!(count, listed.lines().count());
    assert_eq!(count, 1 + axe::commands::ALL.len());
}

/// Runs a linter over every man page; its stderr must be empty. False
/// when the linter is not installed (and the test skipped).
fn lint(program: &str, args: &[&str]) -> bool {
    if !crate::util::have(program) {
        return false;
    }
    for entry in std::fs::read_dir(root().join("man")).unwrap() {
        let path = entry.unwrap().path();
        let out = Command::new(program)
            .args(args)
            .arg(&path)
            .env("MANWIDTH", "80")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && stderr.is_empty(),
            "{program} {}: {stderr}",
            path.display()
        );
    }
    true
}

#[test]
fn man_pages_pass_groff_with_all_warnings() {
    lint("groff", &["-ww", "-man", "-Tutf8", "-z"]);
}

#[test]
fn man_pages_pass_mandoc_lint() {
    lint("mandoc", &["-T", "lint", "-W", "warning"]);
}

#[test]
fn man_renders_each_page() {
    if !lint("man", &["-l"]) {
        return;
    }
    let out = Command::new("man")
        .args(["-l"])
        .arg(root().join("man/axe-run.1"))
        .env("MANWIDTH", "80")
        .output()
        .unwrap();
    let page = String::from_utf8_lossy(&out.stdout);
    for part in [
        "NAME",
        "axe-run - run an agent",
        "SYNOPSIS",
        "--dry-run",
        "EXIT STATUS",
        "SEE ALSO",
    ] {
        assert!(page.contains(part), "man axe-run lacks {part}:\n{page}");
    }
}

/// The reference's table of exit codes is the library's, row for row: one
/// table ([`axe::error::EXIT_CODES`]) makes the man pages and `--help`, and
/// this keeps the docs from drifting off it.
#[test]
fn the_references_exit_codes_are_the_table() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/reference.md")).unwrap();
    let start = readme
        .find("## Exit codes\n")
        .expect("an Exit codes section");
    let rows: Vec<&str> = readme[start..]
        .lines()
        .skip_while(|l| !l.starts_with("| code |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .collect();
    let expected: Vec<String> = axe::error::EXIT_CODES
        .iter()
        .map(|c| format!("| {} | {} |", c.code, c.meaning.replace('|', "\\|")))
        .collect();
    assert_eq!(rows, expected);
}
