//! The documents hold together: every relative link in README.md and
//! docs/**/*.md reaches a file, and its `#fragment` a
//! heading there, by GitHub's rules; every repository path they name in
//! code (`tests/mcp_http.rs`, `bench/run`) is there, and every Rust path
//! (`memory::lock::Wait`); each help text names the page it sends a
//! reader to; each long document
//! opens with a table of contents that is current; the README's opening
//! list names every executable.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The package's root, where README.md and docs/ are.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every docs/**/*.md.
fn documents() -> Vec<PathBuf> {
    let mut docs = vec![root().join("README.md")];
    let mut dirs = vec![root().join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                docs.push(path);
            }
        }
    }
    docs.sort();
    docs
}

/// The lines of `text` outside fenced code blocks, with their numbers.
fn prose(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            lines.push((i + 1, line));
        }
    }
    lines
}

/// `line` without its code spans, which hold text, never links.
fn without_code(line: &str) -> String {
    let mut out = String::new();
    for (i, part) in line.split('`').enumerate() {
        if i % 2 == 0 {
            out.push_str(part);
        }
    }
    out
}

/// The targets of the inline links `[text](target)` in `line`.
fn links(line: &str) -> Vec<String> {
    let line = without_code(line);
    let mut found = Vec::new();
    let mut rest = line.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        // `[text](target "title")`: the target is the first word.
        let target = after[..end].split_whitespace().next().unwrap_or("");
        found.push(target.trim_matches(['<', '>']).to_owned());
        rest = &after[end..];
    }
    found
}

/// A heading's anchor as GitHub makes it: the rendered text (code spans
/// and links as their text) lower-cased, everything but letters, digits,
/// spaces, `-` and `_` dropped, spaces made `-`.
fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading.replace('`', "");
    // `[text](url)` renders as text.
    while let (Some(open), Some(mid)) = (rest.find('['), rest.find("](")) {
        let Some(close) = rest[mid..].find(')') else {
            break;
        };
        if open > mid {
            break;
        }
        text.push_str(&rest[..open]);
        text.push_str(&rest[open + 1..mid]);
        rest = rest[mid + close + 1..].to_owned();
    }
    text.push_str(&rest);
    text.trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Every anchor of a markdown `text`: its headings' slugs (a repeated one
/// with `-1`, `-2`, … as GitHub numbers them) and any `id`/`name` given
/// in HTML.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut found = BTreeSet::new();
    for (_, line) in prose(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            let base = slug(&line[hashes..]);
            let n = seen.entry(base.clone()).or_insert(0);
            found.insert(match *n {
                0 => base.clone(),
                n => format!("{base}-{n}"),
            });
            *n += 1;
        }
        for attr in ["id=\"", "name=\""] {
            let mut rest = line;
            while let Some(at) = rest.find(attr) {
                let value = &rest[at + attr.len()..];
                let end = value.find('"').unwrap_or(value.len());
                found.insert(value[..end].to_owned());
                rest = &value[end..];
            }
        }
    }
    found
}

/// `%20` and friends, as a browser reads a link.
fn percent_decoded(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// What is wrong with the link `target` in the document `from`, if
/// anything.
fn broken(from: &Path, target: &str) -> Option<String> {
    let external = target.contains("://") || target.starts_with("mailto:");
    if external || target.is_empty() {
        return None;
    }
    let (path, fragment) = match target.split_once('#') {
        Some((p, f)) => (p, Some(f)),
        None => (target, None),
    };
    let file = match path {
        "" => from.to_owned(),
        p if p.starts_with('/') => root().join(&p[1..]),
        p => from.parent().unwrap().join(percent_decoded(p)),
    };
    if !file.exists() {
        return Some(format!("{} does not exist", file.display()));
    }
    let fragment = fragment.filter(|f| !f.is_empty())?;
    if file.extension().is_none_or(|e| e != "md") {
        return None;
    }
    let text = fs::read_to_string(&file).unwrap();
    let fragment = percent_decoded(fragment).to_lowercase();
    match anchors(&text).contains(&fragment) {
        true => None,
        false => Some(format!("{} has no heading #{fragment}", file.display())),
    }
}

/// What `find` names in every document (each with its line), judged by
/// `judge` (the document, the name): `None` is passed over, `Some(None)`
/// is there, `Some(Some(why))` is wrong. How many were judged, and the
/// wrong ones as `doc:line: why`.
fn judge_documents(
    find: impl Fn(&str) -> Vec<(usize, String)>,
    judge: impl Fn(&Path, &str) -> Option<Option<String>>,
) -> (usize, Vec<String>) {
    let (mut checked, mut wrong) = (0, Vec::new());
    for doc in documents() {
        let text = fs::read_to_string(&doc).unwrap();
        for (n, named) in find(&text) {
            let Some(verdict) = judge(&doc, &named) else {
                continue;
            };
            checked += 1;
            if let Some(why) = verdict {
                let name = doc.strip_prefix(root()).unwrap().display();
                wrong.push(format!("{name}:{n}: {why}"));
            }
        }
    }
    (checked, wrong)
}

#[test]
fn every_relative_link_reaches_a_file_and_a_heading() {
    let every_link = |text: &str| -> Vec<(usize, String)> {
        prose(text)
            .into_iter()
            .flat_map(|(n, line)| links(line).into_iter().map(move |l| (n, l)))
            .collect()
    };
    let (checked, wrong) = judge_documents(every_link, |doc, target| {
        Some(broken(doc, target).map(|why| format!("({target}): {why}")))
    });
    assert!(checked > 10, "the link reader finds no links: {checked}");
    assert!(wrong.is_empty(), "broken links:\n{}", wrong.join("\n"));
}

#[test]
fn github_slugs_are_made_as_github_makes_them() {
    assert_eq!(
        slug(" Memory on several machines"),
        "memory-on-several-machines"
    );
    assert_eq!(slug(" `axe-agents`: agent files"), "axe-agents-agent-files");
    assert_eq!(slug(" Safety of memory files"), "safety-of-memory-files");
    assert_eq!(
        slug(" What holds, and what does not"),
        "what-holds-and-what-does-not"
    );
    assert_eq!(slug(" See [the guide](README.md) now"), "see-the-guide-now");
    let text = "# A\n## A\n```\n# not a heading\n```\n## B\n";
    let found: Vec<String> = anchors(text).into_iter().collect();
    assert_eq!(found, ["a", "a-1", "b"]);
    let doc = root().join("docs/reference.md");
    assert!(broken(&doc, "../README.md#no-such-heading-here").is_some());
    assert!(broken(&doc, "no-such-file.md").is_some());
    assert!(broken(&doc, "../README.md").is_none());
}

#[test]
fn the_readmes_opening_list_names_every_executable() {
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    let start = readme.find("The executables:").expect("the opening list");
    let list = &readme[start..];
    let list = &list[..list.find("\n\n").unwrap_or(list.len())];
    let manifest = fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let mut bins = Vec::new();
    let mut in_bin = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_bin = line == "[[bin]]";
        } else if in_bin && let Some(name) = line.strip_prefix("name = ") {
            bins.push(name.trim_matches('"').to_owned());
        }
    }
    assert!(bins.len() > 20, "no [[bin]] read from Cargo.toml: {bins:?}");
    let missing: Vec<&String> = bins
        .iter()
        .filter(|b| !list.contains(&format!("`{b}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "not in the README's opening list: {missing:?}"
    );
}

/// Every `#`…`######` heading of `text` outside fences: its level, its
/// text and its anchor, numbered on repeats as GitHub numbers them.
fn headings(text: &str) -> Vec<(usize, String, String)> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut found = Vec::new();
    for (_, line) in prose(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            let base = slug(&line[hashes..]);
            let n = seen.entry(base.clone()).or_insert(0);
            let anchor = match *n {
                0 => base.clone(),
                n => format!("{base}-{n}"),
            };
            *n += 1;
            found.push((hashes, line[hashes..].trim().to_owned(), anchor));
        }
    }
    found
}

/// Where a document's table of contents begins and ends.
const CONTENTS_OPEN: &str =
    "<!-- contents: kept current by tests/docs.rs (AXE_UPDATE_GENERATED=1 rewrites it) -->\n";
const CONTENTS_CLOSE: &str = "<!-- /contents -->\n";

/// A document this long opens with a table of contents.
const LONG: usize = 150;

/// The table of contents of `text`: one line per `## ` heading, linking
/// its anchor, between the markers.
fn contents(text: &str) -> String {
    let mut out = String::from(CONTENTS_OPEN);
    for (level, title, anchor) in headings(text) {
        if level == 2 {
            out.push_str(&format!("- [{title}](#{anchor})\n"));
        }
    }
    out.push_str(CONTENTS_CLOSE);
    out
}

/// Each long document (over 150 lines) opens with its table of contents,
/// before its first `## ` heading, and every table is current: one line
/// per `## ` heading, in order. `AXE_UPDATE_GENERATED=1` writes them.
#[test]
fn each_long_document_opens_with_a_current_table_of_contents() {
    let update = std::env::var_os("AXE_UPDATE_GENERATED").is_some();
    let mut wrong = Vec::new();
    for doc in documents() {
        let text = fs::read_to_string(&doc).unwrap();
        let name = doc.strip_prefix(root()).unwrap().display().to_string();
        let first_section = prose(&text)
            .into_iter()
            .find(|(_, l)| l.starts_with("## "))
            .map(|(n, _)| text.lines().take(n - 1).map(|l| l.len() + 1).sum::<usize>());
        let fresh = contents(&text);
        let now = match (text.find(CONTENTS_OPEN), text.find(CONTENTS_CLOSE)) {
            (Some(open), Some(close)) if open < close => {
                if first_section.is_some_and(|s| open > s) {
                    wrong.push(format!("{name}: its contents come after its first section"));
                    continue;
                }
                let end = close + CONTENTS_CLOSE.len();
                (fresh != text[open..end])
                    .then(|| format!("{}{fresh}{}", &text[..open], &text[end..]))
            }
            _ if text.lines().count() <= LONG => None,
            _ => match first_section {
                Some(at) => Some(format!("{}{fresh}\n{}", &text[..at], &text[at..])),
                None => {
                    wrong.push(format!("{name}: over {LONG} lines with no `## ` section"));
                    continue;
                }
            },
        };
        if let Some(now) = now {
            if update {
                fs::write(&doc, now).unwrap();
            }
            wrong.push(format!("{name}: its table of contents is missing or stale"));
        }
    }
    assert!(
        update || wrong.is_empty(),
        "{}\n(`AXE_UPDATE_GENERATED=1 cargo test --locked --test integration -- docs::` writes them)",
        wrong.join("\n")
    );
}

/// The repository paths `text` names (`tests/mcp_http.rs`, `bench/run`,
/// `lib/app/commands/`), in prose or code spans but not in fenced blocks,
/// each with its line.
fn named_paths(text: &str) -> Vec<(usize, String)> {
    const TOPS: [&str; 8] = [
        "tests/",
        "lib/",
        "bins/",
        "bench/",
        "docs/",
        "man/",
        "completions/",
        ".ci/",
    ];
    let mut found = Vec::new();
    for (n, line) in prose(text) {
        for top in TOPS {
            for (at, _) in line.match_indices(top) {
                let before = line[..at].chars().next_back();
                if before.is_some_and(|c| c.is_alphanumeric() || "/.-_~$".contains(c)) {
                    continue;
                }
                let rest = &line[at..];
                let end = rest
                    .find(|c: char| !(c.is_alphanumeric() || "/._-".contains(c)))
                    .unwrap_or(rest.len());
                let mut path = rest[..end].trim_end_matches(['.', ',', ':']);
                // `bins/axe-<name>.rs`: a placeholder; its directory is named.
                if rest[end..].starts_with('<') {
                    path = &path[..path.rfind('/').map_or(0, |s| s + 1)];
                }
                found.push((n, path.to_owned()));
            }
        }
    }
    found
}

/// Every path in the repository a document names is there: a test, a
/// script, a source file or a directory a reader is sent to.
#[test]
fn every_path_the_documents_name_is_there() {
    let (checked, wrong) = judge_documents(named_paths, |_, path| {
        // Made by the bench harness when it runs, never committed.
        if path.starts_with("bench/data") {
            return Some(None);
        }
        Some((!root().join(path).exists()).then(|| format!("{path} is not there")))
    });
    assert!(checked > 20, "the path reader finds no paths: {checked}");
    assert!(wrong.is_empty(), "named but missing:\n{}", wrong.join("\n"));
}

#[test]
fn the_path_reader_finds_paths_and_leaves_others() {
    let text = "See tests/mcp_http.rs and `bench/run`, not ~/.config/axe/docs/x or \
                /usr/lib/x, in bins/axe-<name>.rs.\n```\ntests/nowhere.rs\n```\n";
    let found: Vec<String> = named_paths(text).into_iter().map(|(_, p)| p).collect();
    assert_eq!(found, ["tests/mcp_http.rs", "bins/", "bench/run"]);
    assert!(
        !root().join("tests/no-such-test.rs").exists(),
        "the check can fail"
    );
}

/// The Rust paths `text` names in code spans (`memory::lock::Wait`,
/// `axe-sync::git`, `run::prepared::Prepared`), outside fenced blocks,
/// each with its line.
fn rust_paths(text: &str) -> Vec<(usize, String)> {
    let word = |s: &str| {
        s.starts_with(|c: char| c.is_alphabetic() || c == '_')
            && s.chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
    };
    let mut found = Vec::new();
    for (n, line) in prose(text) {
        for (i, span) in line.split('`').enumerate() {
            let span = span.trim_end_matches("()");
            let segments: Vec<&str> = span.split("::").collect();
            if i % 2 == 1 && segments.len() > 1 && segments.iter().all(|s| word(s)) {
                found.push((n, span.to_owned()));
            }
        }
    }
    found
}

/// Whether `name` is a whole word of `text`, as an item's name is in the
/// file that declares or re-exports it.
fn has_word(text: &str, name: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(name)
        .any(|(at, _)| !text[..at].ends_with(ident) && !text[at + name.len()..].starts_with(ident))
}

/// The file of the module `name` inside the module whose file is `file`
/// (`lib.rs` and `mod.rs` hold their children beside them, `x.rs` in `x/`).
fn child(file: &Path, name: &str) -> Option<PathBuf> {
    let dir = match file.file_name()?.to_str()? {
        "lib.rs" | "mod.rs" => file.parent()?.to_owned(),
        f => file.parent()?.join(f.strip_suffix(".rs")?),
    };
    [
        dir.join(format!("{name}.rs")),
        dir.join(name).join("mod.rs"),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

/// The files a path's first segment may be: the crate `axe-X`/`axe_X`
/// (`lib/X/lib.rs`, its `_` a `-` in the folder's name), or else the crate named so and every module of that
/// name under `lib/` (the documents name a module by its last few
/// segments, as a reader of that crate would).
fn path_roots(first: &str) -> Vec<PathBuf> {
    let lib = root().join("lib");
    if let Some(name) = first.strip_prefix("axe-").or(first.strip_prefix("axe_")) {
        return vec![lib.join(name.replace('_', "-")).join("lib.rs")];
    }
    let mut found: Vec<PathBuf> = vec![lib.join(first).join("lib.rs")];
    let mut dirs = vec![lib];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                found.push(path.join(first).join("mod.rs"));
                dirs.push(path);
            } else if path
                .file_name()
                .is_some_and(|f| *f == *format!("{first}.rs"))
            {
                found.push(path);
            }
        }
    }
    found.retain(|p| p.is_file());
    found
}

/// Whether the segments `rest` are found from the module whose file is
/// `file`: each lower-case segment with more after it a module (a file,
/// or `mod NAME` inline), a type's name and the last segment words of
/// the file they are in.
fn resolves(file: &Path, rest: &[&str]) -> bool {
    let Ok(text) = fs::read_to_string(file) else {
        return false;
    };
    match rest {
        [] => true,
        [last] => has_word(&text, last),
        [next, ..] if next.starts_with(char::is_uppercase) => has_word(&text, next),
        [next, tail @ ..] => match child(file, next) {
            Some(module) => resolves(&module, tail),
            None => text.contains(&format!("mod {next} {{")) && resolves(file, tail),
        },
    }
}

/// Whether the Rust path `path` names something in the workspace: `None`
/// when its first segment is no crate or module of it (`io::Error`,
/// `Error::Usage`: a type's own items are not looked up).
fn rust_path_is_there(path: &str) -> Option<bool> {
    let segments: Vec<&str> = path.split("::").collect();
    if segments[0].starts_with(char::is_uppercase) {
        return None;
    }
    let roots = path_roots(segments[0]);
    if roots.is_empty() {
        return None;
    }
    Some(roots.iter().any(|f| resolves(f, &segments[1..])))
}

/// Every Rust path a document names in a code span (`memory::lock`,
/// `run::prepared::Prepared`) is in the workspace: its modules are files
/// or inline modules, its item a word of its module's file.
#[test]
fn every_rust_path_the_documents_name_is_there() {
    let (checked, wrong) = judge_documents(rust_paths, |_, path| {
        rust_path_is_there(path).map(|there| (!there).then(|| format!("{path} is not there")))
    });
    assert!(
        checked > 20,
        "the Rust path reader finds no paths: {checked}"
    );
    assert!(wrong.is_empty(), "named but missing:\n{}", wrong.join("\n"));
}

#[test]
fn the_rust_path_reader_finds_modules_and_items() {
    let text = "`memory::lock::Wait`, `Error::Usage()`, not `a b::c` \
                or lib/x::y.\n```\nfenced::path\n```\n";
    let found: Vec<String> = rust_paths(text).into_iter().map(|(_, p)| p).collect();
    assert_eq!(found, ["memory::lock::Wait", "Error::Usage"]);
    assert_eq!(rust_path_is_there("memory::lock::Wait"), Some(true));
    assert_eq!(rust_path_is_there("axe-sync::git"), Some(true));
    assert_eq!(rust_path_is_there("io::Error"), None);
    assert_eq!(
        rust_path_is_there("memory::no_such_module::offer"),
        Some(false)
    );
    assert_eq!(rust_path_is_there("memory::lock::NoSuchItem"), Some(false));
}

/// Every help text (`--help`, so the man pages too) that sends a reader
/// to a document names the page that holds what it promises, and the
/// page is there: the README is the guide's table of contents now, so
/// "see the README" sends them nowhere in particular.
#[test]
fn each_help_text_names_the_page_it_sends_a_reader_to() {
    let program = &axe::commands::axe::PROGRAM;
    let mut wrong = Vec::new();
    let mut pages = 0;
    for exe in program.executables() {
        for c in exe.tree() {
            let mut texts = vec![c.about.to_owned(), c.description()];
            texts.extend(c.flags.iter().map(|f| f.help.to_owned()));
            texts.extend(c.args.iter().map(|a| a.help.to_owned()));
            for text in texts {
                if text.contains("README") {
                    wrong.push(format!("{}: sends the reader to the README", c.name));
                }
                for (_, path) in named_paths(&text) {
                    pages += 1;
                    if !root().join(&path).exists() {
                        wrong.push(format!("{}: {path} is not there", c.name));
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(pages > 0, "no help text names a page");
}

/// docs/architecture.md's rule for lib/app/commands/: each executable's
/// module is named after it (`axe-log` is `log.rs`), a memory kind's in
/// its folder (`axe-mem-trim` is `mem/trim.rs`), so a reader finds a
/// command by its name.
#[test]
fn each_command_module_is_named_after_its_executable() {
    let commands = root().join("lib/app/commands");
    // The module's file, which declares the executable's command.
    let module = |path: PathBuf, exe: &str| {
        let declared = format!("name: \"{exe}\"");
        [path.with_extension("rs"), path.join("mod.rs")]
            .iter()
            .any(|f| fs::read_to_string(f).is_ok_and(|t| t.contains(&declared)))
    };
    let mut wrong = Vec::new();
    let mut checked = 0;
    for exe in axe::commands::axe::PROGRAM.executables() {
        checked += 1;
        let name = exe.name.strip_prefix("axe-").unwrap_or(exe.name);
        let named = module(commands.join(name), exe.name)
            || name
                .split_once('-')
                .is_some_and(|(kind, verb)| module(commands.join(kind).join(verb), exe.name));
        if !named {
            wrong.push(exe.name);
        }
    }
    assert!(checked > 20, "no executables read: {checked}");
    assert!(
        wrong.is_empty(),
        "no module in lib/app/commands/ named after {wrong:?}"
    );
}

/// Where the reference's generated list of commands begins and ends.
const COMMANDS_OPEN: &str = "<!-- commands: generated from the command tables by tests/docs.rs (AXE_UPDATE_GENERATED=1 rewrites it) -->\n";
const COMMANDS_CLOSE: &str = "<!-- /commands -->\n";

/// `text` for a markdown table's cell: `|` escaped, on one line.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// The reference's list of commands, from the same tables as `--help`,
/// the man pages and the completions: each executable and subcommand, its
/// synopsis, what it does and its flags.
fn commands_table() -> String {
    let program = &axe::commands::axe::PROGRAM;
    let mut out = String::from(COMMANDS_OPEN);
    out.push_str("| command | synopsis | what it does | flags |\n|---|---|---|---|\n");
    for exe in program.executables() {
        for c in exe.tree() {
            if !c.subcommands().is_empty() && c.name != exe.name {
                continue;
            }
            let synopsis: Vec<String> = c
                .usage
                .iter()
                .map(|u| format!("`{}`", cell(&format!("{} {u}", c.name))))
                .collect();
            let flags: Vec<String> = c
                .flags
                .iter()
                .map(|f| match f.value {
                    Some(v) => format!("`--{} {v}`", f.long),
                    None => format!("`--{}`", f.long),
                })
                .collect();
            let name = match c.name == exe.name {
                true => format!("[`{}`](../man/{}.1)", c.name, exe.name),
                false => format!("`{}`", c.name),
            };
            out.push_str(&format!(
                "| {name} | {} | {} | {} |\n",
                synopsis.join("<br>"),
                cell(c.about),
                flags.join(", ")
            ));
        }
    }
    out.push_str(COMMANDS_CLOSE);
    out
}

/// docs/reference.md's list of commands is the command tables', row for
/// row; `AXE_UPDATE_GENERATED=1` writes it.
#[test]
fn the_references_commands_are_the_command_tables() {
    let path = root().join("docs/reference.md");
    let text = fs::read_to_string(&path).unwrap();
    let fresh = commands_table();
    let open = text.find(COMMANDS_OPEN).expect("the reference's commands");
    let close = text.find(COMMANDS_CLOSE).expect("their end");
    let end = close + COMMANDS_CLOSE.len();
    if text[open..end] == fresh {
        return;
    }
    if std::env::var_os("AXE_UPDATE_GENERATED").is_some() {
        fs::write(&path, format!("{}{fresh}{}", &text[..open], &text[end..])).unwrap();
    } else {
        panic!(
            "docs/reference.md's commands are stale: `AXE_UPDATE_GENERATED=1 cargo test --locked --test integration -- docs::` writes them"
        );
    }
}

/// Every `[pricing."..."]` example in the documents prices the model the
/// Quickstart sets up: a new user who copies one sees the cost of the
/// calls they just made, not of another model's.
#[test]
fn the_pricing_examples_price_the_quickstarts_model() {
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    let quickstart = readme.split("## Quickstart").nth(1).unwrap();
    let model = quickstart
        .split("--model ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap();
    let mut docs = vec![root().join("README.md")];
    let mut dirs = vec![root().join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                docs.push(path);
            }
        }
    }
    let mut examples = 0;
    for doc in docs {
        let text = fs::read_to_string(&doc).unwrap();
        for line in text.lines().filter(|l| l.starts_with("[pricing.\"")) {
            examples += 1;
            assert!(
                line.starts_with(&format!("[pricing.\"{model}\"]")),
                "{}: {line} prices another model than the Quickstart's {model}",
                doc.display()
            );
        }
    }
    assert!(examples > 0, "no pricing example found");
}
