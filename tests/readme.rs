//! Every shell example of the README and of the guide (`docs/guide/*.md`,
//! in the order the README's "The guide" lists them) runs as written, in
//! order, as a newcomer runs them: one shell session in a fresh `HOME`
//! with only what the documents themselves set up (and a local server
//! answering for every provider). A block is left out only when a comment
//! before it says why (`<!-- not run: ... -->`) or that it installs into
//! the system and which test runs it (`<!-- install: ... -->`), so a new
//! example is run unless someone decides otherwise in the document itself.
//!
//! The other tests that pin a documented block (a marker such as
//! `<!-- pipeline`, a client's lines) find it in [`guide`], the README and
//! the guide together, so a block may move between them and stay tested.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

use crate::server::{Recorded, Server};
use crate::util::{Env, have};
use crate::wire::{reply_for, served_by, stream_answer};

/// What the local server answers: a reply in the wire format the path asks
/// for, streamed when the request asks for a stream.
fn answer(r: &Recorded) -> crate::server::Answer {
    let provider = match r.path.as_str() {
        p if p.ends_with("/messages") => "anthropic",
        p if p.ends_with("/chat/completions") => "openai",
        p if p.starts_with("/v1beta/models/") => "google",
        _ => "ollama",
    };
    let text = "Two problems: the lock is taken after the read.";
    // Gemini streams from another method; the rest say so in the body.
    let stream = r.path.contains(":streamGenerateContent")
        || serde_json::from_slice::<Value>(&r.body)
            .ok()
            .and_then(|b| b["stream"].as_bool())
            .unwrap_or(false);
    match stream {
        true => stream_answer(provider, &[text]),
        false => crate::server::Answer::json(200, &reply_for(provider, text)),
    }
}

/// The package's root, where README.md and docs/ are.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The heading of the README's section that lists the guide's files.
const GUIDE_HEADING: &str = "## The guide\n";

/// The guide's files, as paths from the root (`docs/guide/run.md`), in the
/// order the README's "The guide" section links them: the reading order,
/// and the order their examples run in.
pub(crate) fn guide_files() -> Vec<String> {
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    let start = readme
        .find(GUIDE_HEADING)
        .expect("the README has a \"## The guide\" section");
    let section = &readme[start + GUIDE_HEADING.len()..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let mut files: Vec<String> = Vec::new();
    let mut rest = section;
    while let Some(at) = rest.find("](docs/guide/") {
        let target = &rest[at + 2..];
        let end = target.find([')', '#']).unwrap_or(target.len());
        let file = target[..end].to_owned();
        if !files.contains(&file) {
            files.push(file);
        }
        rest = &target[end..];
    }
    files
}

/// The README, then every guide file in [`guide_files`] order, as one
/// text: where the tests look for a documented block.
pub(crate) fn guide() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| {
        let mut text = fs::read_to_string(root().join("README.md")).unwrap();
        for file in guide_files() {
            text.push('\n');
            text.push_str(&fs::read_to_string(root().join(&file)).unwrap());
        }
        text
    })
}

/// The runnable ```sh blocks of `text`, each with the number of its first
/// line, in order: those without a `<!-- not run` or `<!-- install`
/// comment on the line before.
fn runnable_blocks(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i] != "```sh" {
            i += 1;
            continue;
        }
        let before = if i > 0 { lines[i - 1].trim_start() } else { "" };
        let skipped = before.starts_with("<!-- not run") || before.starts_with("<!-- install");
        let start = i + 1;
        i += 1;
        let mut body = String::new();
        while i < lines.len() && !lines[i].starts_with("```") {
            body.push_str(lines[i]);
            body.push('\n');
            i += 1;
        }
        if !skipped {
            blocks.push((start, body));
        }
    }
    blocks
}

/// The guide as a newcomer meets it: every ```sh block in order, in one
/// shell session (a `cd` or a variable carries on, as in a terminal), in a
/// fresh `HOME` with nothing prepared: no agents, no files, no repository,
/// no `XDG_*`; only the providers' keys and base URLs a user would export
/// (a local server standing in for every provider) and an `EDITOR`. A
/// block is left out only when the comment before it says it is not run
/// (`<!-- not run: ... -->`) or installs into the system (`<!-- install:
/// ... -->`, run by the test it names); every other block must work, with
/// what the README and the guide set up before it. The README's blocks
/// come first, then each guide file's, in the README's order.
#[test]
fn the_guide_runs_top_to_bottom_in_a_fresh_home() {
    if !have("bash") || !have("git") || !have("jq") {
        return;
    }
    let mut script = String::from("set -e\n");
    let mut ran = 0;
    for file in std::iter::once("README.md".to_owned()).chain(guide_files()) {
        let text = fs::read_to_string(root().join(&file)).unwrap();
        for (start, body) in runnable_blocks(&text) {
            script.push_str(&format!("echo '--- {file} line {start}' >&2\n{body}"));
            ran += 1;
        }
    }
    assert!(ran > 20, "only {ran} runnable blocks found");
    let server = Server::route(answer);
    let env = Env::new();
    let home = env.root().join("home");
    fs::create_dir_all(&home).unwrap();
    let bins = assert_cmd::cargo::cargo_bin("axe");
    let path = format!(
        "{}:{}",
        bins.parent().unwrap().display(),
        std::env::var("PATH").unwrap()
    );
    let out = served_by(env.program("bash"), &server.url)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_DATA_HOME")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("XDG_STATE_HOME")
        .env("PATH", path)
        .env("EDITOR", "true")
        .env("GIT_AUTHOR_NAME", "Ada")
        .env("GIT_AUTHOR_EMAIL", "ada@example.org")
        .env("GIT_COMMITTER_NAME", "Ada")
        .env("GIT_COMMITTER_EMAIL", "ada@example.org")
        .current_dir(&home)
        .args(["-c", &script])
        .write_stdin("")
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = stderr.lines().rfind(|l| l.starts_with("--- "));
    assert!(
        out.status.success(),
        "the guide stopped at {last:?}: exit {:?}\n--- stderr\n{stderr}",
        out.status.code(),
    );
}

/// No guide file goes unrun: every `docs/guide/*.md` is in the README's
/// list (the list decides the order its examples run in), and every file
/// the list names is there.
#[test]
fn the_readme_lists_every_guide_file() {
    let listed = guide_files();
    let mut present = Vec::new();
    for entry in fs::read_dir(root().join("docs/guide")).unwrap() {
        let path: PathBuf = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            let name = path.file_name().unwrap().to_string_lossy();
            present.push(format!("docs/guide/{name}"));
        }
    }
    present.sort();
    let unlisted: Vec<&String> = present.iter().filter(|f| !listed.contains(f)).collect();
    assert!(
        unlisted.is_empty(),
        "guide files the README's \"## The guide\" does not list (so their examples never run): {unlisted:?}"
    );
    let missing: Vec<&String> = listed.iter().filter(|f| !present.contains(f)).collect();
    assert!(missing.is_empty(), "listed but not there: {missing:?}");
    assert!(listed.len() >= 10, "the guide's list: {listed:?}");
}

/// The README is the short way in: what axe is, install and test, the
/// Quickstart and the first day, at most 500 lines; the depth is in the
/// guide.
#[test]
fn the_readme_is_at_most_500_lines_and_keeps_cis_test_command() {
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 500, "README.md has {lines} lines, over 500");
    // .ci/run runs "the test command from README.md": the README's
    // "Install and test" must still give it.
    let install = &readme[readme.find("## Install and test").expect("its section")..];
    let install = &install[..install[3..].find("\n## ").map_or(install.len(), |e| e + 3)];
    assert!(install.contains("\ncargo test --locked "), "{install}");
    let ci = fs::read_to_string(root().join(".ci/run")).unwrap();
    assert!(ci.contains("\ncargo test --locked\n"), "{ci}");
}

/// Every runnable block is in a file the guide runs: none in the other
/// documents (the reference, the FAQ), where nothing would run it.
#[test]
fn no_runnable_block_lies_outside_the_guide() {
    let mut stray = Vec::new();
    for entry in fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "md") {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap();
        for (line, _) in runnable_blocks(&text) {
            stray.push(format!(
                "{}:{line}",
                path.strip_prefix(root()).unwrap().display()
            ));
        }
    }
    assert!(
        stray.is_empty(),
        "```sh blocks no test runs (move them into the guide, or mark them <!-- not run: why -->): {stray:?}"
    );
}
