//! Who may reach which memory: the tokens file of `axe-mcp --tokens`, a
//! TOML list of `[[token]]` entries, each a name, the SHA-256 of the
//! token (the token itself is never stored), the agents it reaches
//! (`["a", "b"]` or `"*"`), whether it only reads, and when it was made.
//!
//! The file is read as ssh reads `authorized_keys`: only a regular file
//! that no one but its owner (this user, or root) can write, in a
//! directory others cannot write either, and at most [`MAX_BYTES`] of it.
//! Anything else in its place (a FIFO would hang every request, a device
//! like `/dev/zero` exhaust memory, a file others can write hand them the
//! server) takes no token, said on the server's report.

use std::io::Read;
use std::path::Path;

use serde::Deserialize;

use axe_base::error::{Error, Result};
use axe_base::lock::Recover;
use axe_base::report::Report;
use axe_memory::hash::sha256_hex;

/// One entry of the file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Token {
    pub name: String,
    pub sha256: String,
    pub agents: Agents,
    #[serde(default)]
    pub read_only: bool,
    /// When `token add` made it (RFC 3339, UTC); absent in older files.
    #[serde(default)]
    pub created: Option<String>,
}

/// The agents a token reaches.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Agents {
    /// `"*"`: every agent.
    Every(String),
    Some(Vec<String>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    token: Vec<Token>,
}

/// The tokens a server takes.
#[derive(Debug)]
pub struct Tokens(Vec<Token>);

/// A tokens file larger than this is refused: a few hundred bytes a token.
pub const MAX_BYTES: u64 = 1 << 20;

/// The tokens file as the server reads it: again whenever it changed
/// (`axe-mcp token add` replaces it whole, so a new token works at once
/// and a reader never sees half a file). A file that no longer reads or
/// parses takes no token at all until it does, said on `report`: an entry
/// removed in a broken edit (a token that leaked) must not stay in force.
pub struct Live {
    path: std::path::PathBuf,
    read: std::sync::Mutex<(Option<Stamp>, std::sync::Arc<Tokens>)>,
}

/// What tells one version of the file from the next.
#[derive(PartialEq, Eq, Clone, Copy)]
struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: i64,
    mtime_nsec: i64,
}

fn stamp(path: &Path) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some(Stamp {
        dev: m.dev(),
        ino: m.ino(),
        len: m.len(),
        mtime: m.mtime(),
        mtime_nsec: m.mtime_nsec(),
    })
}

impl Live {
    /// Reads the file at `path`, which must parse now.
    pub fn load(path: &Path) -> Result<Live> {
        let before = stamp(path);
        let tokens = Tokens::load(path)?;
        Ok(Live {
            path: path.to_owned(),
            read: std::sync::Mutex::new((before, std::sync::Arc::new(tokens))),
        })
    }

    /// The file read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The tokens in force: the file's, read again if it changed; why a
    /// changed file takes no token goes to `report`.
    pub fn current(&self, report: &dyn Report) -> std::sync::Arc<Tokens> {
        let now = stamp(&self.path);
        let mut read = self.read.lock().recover();
        if now != read.0 {
            read.0 = now;
            match Tokens::load(&self.path) {
                Ok(tokens) => read.1 = std::sync::Arc::new(tokens),
                Err(e) => {
                    report.note(format_args!(
                        "axe-mcp: {e}; no token is taken until it is mended"
                    ));
                    read.1 = std::sync::Arc::new(Tokens(Vec::new()));
                }
            }
        }
        std::sync::Arc::clone(&read.1)
    }
}

impl Tokens {
    /// Reads the tokens file at `path`: a malformed one is an error, as
    /// is an entry whose digest or agents cannot be right.
    pub fn load(path: &Path) -> Result<Tokens> {
        let text = read_guarded(path)?;
        parse(&text, path)
    }

    /// Every entry, in the file's order.
    pub fn all(&self) -> &[Token] {
        &self.0
    }

    /// Whether a token of this digest is in force and reaches `agent`:
    /// what a session begun with it needs to live on.
    pub fn allows(&self, digest: &str, agent: &str) -> bool {
        self.0
            .iter()
            .any(|t| t.sha256.eq_ignore_ascii_case(digest) && t.reaches(agent))
    }

    /// The entry a bearer `token` matches: its digest is compared, so no
    /// comparison's time says anything of the token.
    pub fn find(&self, token: &str) -> Option<&Token> {
        let digest = sha256_hex(token.as_bytes());
        self.0
            .iter()
            .find(|t| t.sha256.eq_ignore_ascii_case(&digest))
    }
}

impl Token {
    /// What the token reaches on a server whose memory is `served`, in
    /// words: `own` when that is the owner's own data directory.
    pub fn reach(&self, served: &Path, own: bool) -> String {
        let rights = match self.read_only {
            true => "reads only",
            false => "reads and writes",
        };
        let whose = match &self.agents {
            Agents::Every(_) => {
                "every agent's notes, run log and state (a new name starts a new memory)".to_owned()
            }
            Agents::Some(names) => {
                format!("the notes, run log and state of {}", names.join(", "))
            }
        };
        let mut text = format!(
            "{rights} {whose} in {}, and every world topic of {}",
            served.display(),
            served.join("notes/world").display()
        );
        if own {
            text.push_str(
                " (your own memory: the world topics every local agent recalls and axe-import fills)",
            );
        }
        text
    }

    /// Whether this token reaches `agent`'s memory.
    pub fn reaches(&self, agent: &str) -> bool {
        match &self.agents {
            Agents::Every(_) => true,
            Agents::Some(names) => names.iter().any(|n| n == agent),
        }
    }
}

/// The tokens of `text`, the file at `path`: a malformed one is an error,
/// as is an entry whose digest or agents cannot be right.
fn parse(text: &str, path: &Path) -> Result<Tokens> {
    let file: File = axe_base::toml_read::from_str(text)
        .map_err(|e| Error::Config(format!("tokens file {}: {}", path.display(), e.message())))?;
    for t in &file.token {
        let bad = |why: &str| {
            Error::Config(format!(
                "tokens file {}: token \"{}\": {why}",
                path.display(),
                t.name
            ))
        };
        if t.sha256.len() != 64 || !t.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad("sha256 is not 64 hex digits"));
        }
        if matches!(&t.agents, Agents::Every(s) if s != "*") {
            return Err(bad("agents is a list of names or \"*\""));
        }
    }
    Ok(Tokens(file.token))
}

/// The text of the tokens file at `path`, read as ssh reads an
/// `authorized_keys`: opened without blocking (a FIFO never hangs the
/// reader), and only a regular file of this user or root that neither
/// group nor others can write, in a directory others (or a group not the
/// user's own) cannot write either unless it is sticky, as /tmp, of at
/// most [`MAX_BYTES`].
fn read_guarded(path: &Path) -> Result<String> {
    use rustix::fs::{FileType, Mode, OFlags};

    let refuse = |why: String| Error::Config(format!("tokens file {}: {why}", path.display()));
    let io = |e: std::io::Error| refuse(axe_base::error::describe_io(&e));
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| io(e.into()))?;
    let stat = rustix::fs::fstat(&fd).map_err(|e| io(e.into()))?;
    let kind = FileType::from_raw_mode(stat.st_mode);
    if kind != FileType::RegularFile {
        return Err(refuse(format!(
            "not a regular file (a {}); no token is read from it",
            type_name(kind)
        )));
    }
    let me = rustix::process::geteuid().as_raw();
    if stat.st_uid != me && stat.st_uid != 0 {
        return Err(refuse(format!(
            "owned by uid {}, not by this user or root; no token is read from it",
            stat.st_uid
        )));
    }
    let mode = stat.st_mode & 0o7777;
    if mode & 0o022 != 0 {
        return Err(refuse(format!(
            "others can write it (mode {mode:04o}), as ssh refuses such an authorized_keys; chmod go-w it"
        )));
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let d = rustix::fs::stat(dir).map_err(|e| io(e.into()))?;
    let dir_mode = d.st_mode & 0o7777;
    // A group-writable directory of the user's own group is the usual
    // umask 002 of a user-private group, not a stranger's way in.
    let own_group = d.st_gid == rustix::process::getegid().as_raw();
    let open_dir = dir_mode & 0o002 != 0 || (dir_mode & 0o020 != 0 && !own_group);
    if open_dir && dir_mode & 0o1000 == 0 {
        return Err(refuse(format!(
            "others can write its directory {} (mode {dir_mode:04o}) and so replace it; chmod go-w it",
            dir.display()
        )));
    }
    if stat.st_size as u64 > MAX_BYTES {
        return Err(refuse(format!(
            "larger than {} KiB; no token is read from it",
            MAX_BYTES >> 10
        )));
    }
    let file = std::fs::File::from(fd);
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(refuse(format!(
            "larger than {} KiB; no token is read from it",
            MAX_BYTES >> 10
        )));
    }
    String::from_utf8(bytes).map_err(|_| refuse("not UTF-8".into()))
}

fn type_name(kind: rustix::fs::FileType) -> &'static str {
    use rustix::fs::FileType;
    match kind {
        FileType::Fifo => "FIFO",
        FileType::CharacterDevice => "character device",
        FileType::BlockDevice => "block device",
        FileType::Directory => "directory",
        FileType::Socket => "socket",
        FileType::Symlink => "symlink",
        _ => "special file",
    }
}

/// `bytes` in lower-case hex: a token's text, a session's id.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `N` random bytes from the system's generator (getrandom, through the
/// tree's crypto crate), which needs no /dev in a sandbox or chroot.
pub fn random<const N: usize>() -> std::io::Result<[u8; N]> {
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; N];
    ring::rand::SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| std::io::Error::other("the system gave no random bytes"))?;
    Ok(bytes)
}

/// What `axe-mcp token add` made: the token (shown once) and where its
/// digest went.
pub struct Added {
    pub token: String,
    pub file: std::path::PathBuf,
}

/// Adds a token named `name` reaching `agents` (`["*"]` for every one) to
/// the tokens file at `path`, created (0600) when missing: a new random
/// token, of which only the digest is written. The file is read and
/// replaced whole under its lock, so two adds at once both land and a
/// reader sees the old file or the new one; it stays 0600 whatever it was.
pub fn add(path: &Path, name: &str, agents: &[String], read_only: bool) -> Result<Added> {
    if !word(name) {
        return Err(Error::Usage(format!(
            "token name \"{name}\": letters, digits, '.', '_' and '-' only"
        )));
    }
    let every = agents.iter().any(|a| a == "*");
    if agents.is_empty()
        || (every && agents.len() > 1)
        || (!every && !agents.iter().all(|a| word(a)))
    {
        return Err(Error::Usage(
            "--agents is a list of agent names (a,b) or \"*\"".into(),
        ));
    }
    let locked = Locked::open(path, true)?;
    let mut text = locked.text.clone();
    let existing = parse(&text, path)?;
    if existing.0.iter().any(|t| t.name == name) {
        return Err(Error::Usage(format!(
            "a token named \"{name}\" is in {} already",
            path.display()
        )));
    }
    let token = new_token(path)?;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    let entry = Token {
        name: name.to_owned(),
        sha256: sha256_hex(token.as_bytes()),
        agents: match every {
            true => Agents::Every("*".to_owned()),
            false => Agents::Some(agents.to_vec()),
        },
        read_only,
        created: Some(now()),
    };
    text.push('\n');
    text.push_str(&render(&entry));
    locked.write(&text)?;
    Ok(Added {
        token,
        file: path.to_owned(),
    })
}

/// What `token remove` and `token rotate` did to the file: whether it
/// had to be written out in axe's own layout (an entry written in a way
/// the edit in place does not follow, an inline table), its comments
/// gone.
pub struct Edited {
    pub rewritten: bool,
}

/// Takes the entry named `name` out of the tokens file at `path`, under
/// its lock and replaced whole: a server reading it sees the old file or
/// the new one, and ends the sessions the token began at their next
/// request. The rest of the file stays as written.
pub fn remove(path: &Path, name: &str) -> Result<Edited> {
    let locked = Locked::open(path, false)?;
    let tokens = parse(&locked.text, path)?;
    named(&tokens, name, path)?;
    let kept: Vec<Token> = tokens.0.into_iter().filter(|t| t.name != name).collect();
    let edited = edit_piece(&locked.text, name, |_| None);
    let (text, rewritten) = checked(edited, &kept, path);
    locked.write(&text)?;
    Ok(Edited { rewritten })
}

/// Gives the entry named `name` a new random token (returned, shown only
/// now) in place of its digest, keeping its agents and rights; `created`
/// becomes now, since it says when the token in force was made. The
/// file is replaced whole under its lock, so the old token stops at once
/// and the sessions it began end at their next request.
pub fn rotate(path: &Path, name: &str) -> Result<(Added, Edited)> {
    let locked = Locked::open(path, false)?;
    let tokens = parse(&locked.text, path)?;
    named(&tokens, name, path)?;
    let token = new_token(path)?;
    let digest = sha256_hex(token.as_bytes());
    let created = now();
    let mut entries = tokens.0;
    for t in entries.iter_mut().filter(|t| t.name == name) {
        t.sha256 = digest.clone();
        t.created = Some(created.clone());
    }
    let edited = edit_piece(&locked.text, name, |piece| {
        let mut out = String::new();
        let mut dated = false;
        for line in piece.split_inclusive('\n') {
            let key = line.trim_start();
            if key.starts_with("sha256") && key[6..].trim_start().starts_with('=') {
                out.push_str(&format!("sha256 = \"{digest}\"\n"));
            } else if key.starts_with("created") && key[7..].trim_start().starts_with('=') {
                out.push_str(&format!("created = \"{created}\"\n"));
                dated = true;
            } else {
                out.push_str(line);
            }
        }
        if !dated {
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(&format!("created = \"{created}\"\n"));
        }
        Some(out)
    });
    let (text, rewritten) = checked(edited, &entries, path);
    locked.write(&text)?;
    Ok((
        Added {
            token,
            file: path.to_owned(),
        },
        Edited { rewritten },
    ))
}

/// The entry named `name`, or an error naming the ones there are.
fn named<'a>(tokens: &'a Tokens, name: &str, path: &Path) -> Result<&'a Token> {
    tokens.0.iter().find(|t| t.name == name).ok_or_else(|| {
        let names: Vec<&str> = tokens.0.iter().map(|t| t.name.as_str()).collect();
        Error::Usage(format!(
            "no token named \"{name}\" in {} ({})",
            path.display(),
            match names.is_empty() {
                true => "it holds none".to_owned(),
                false => format!("its tokens: {}", names.join(", ")),
            }
        ))
    })
}

/// `text` with the `[[token]]` table of the entry `name` replaced by what
/// `change` makes of it (`None`: taken out), the rest as written; `None`
/// when no table alone holds that entry.
fn edit_piece(
    text: &str,
    name: &str,
    change: impl FnOnce(&str) -> Option<String>,
) -> Option<String> {
    // Cut before every `[[token]]` header line: the head, then one piece
    // per table, each with the comments and blank lines that follow it.
    let mut cuts = vec![0];
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with("[[token]]") {
            cuts.push(at);
        }
        at += line.len();
    }
    cuts.push(text.len());
    cuts.dedup();
    let pieces: Vec<&str> = cuts.windows(2).map(|w| &text[w[0]..w[1]]).collect();
    let is_it = |piece: &str| {
        axe_base::toml_read::from_str::<File>(piece)
            .ok()
            .is_some_and(|f| f.token.len() == 1 && f.token[0].name == name)
    };
    let mut found = pieces.iter().enumerate().filter(|(_, p)| is_it(p));
    let (index, piece) = found.next()?;
    if found.next().is_some() {
        return None;
    }
    let changed = change(piece).unwrap_or_default();
    let mut out = String::new();
    for (i, p) in pieces.iter().enumerate() {
        match i == index {
            true => out.push_str(&changed),
            false => out.push_str(p),
        }
    }
    Some(out)
}

/// The edited text when it holds exactly `want`; else every entry of
/// `want` written out in axe's own layout (and `true`).
fn checked(edited: Option<String>, want: &[Token], path: &Path) -> (String, bool) {
    let same = |text: &str| {
        parse(text, path).is_ok_and(|got| {
            got.0.len() == want.len()
                && got.0.iter().zip(want).all(|(a, b)| {
                    a.name == b.name
                        && a.sha256.eq_ignore_ascii_case(&b.sha256)
                        && a.read_only == b.read_only
                        && a.created == b.created
                })
        })
    };
    match edited {
        Some(text) if same(&text) => (text, false),
        _ => {
            let text: Vec<String> = want.iter().map(render).collect();
            (text.join("\n"), true)
        }
    }
}

/// One entry as `token add` writes it.
fn render(t: &Token) -> String {
    let agents = match &t.agents {
        Agents::Every(_) => "\"*\"".to_owned(),
        Agents::Some(names) => format!(
            "[{}]",
            names
                .iter()
                .map(|a| quote(a))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut text = format!(
        "[[token]]\nname = {}\nsha256 = \"{}\"\nagents = {agents}\nread_only = {}\n",
        quote(&t.name),
        t.sha256,
        t.read_only
    );
    if let Some(created) = &t.created {
        text.push_str(&format!("created = {}\n", quote(created)));
    }
    text
}

/// `s` as a TOML basic string.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A new random token.
fn new_token(path: &Path) -> Result<String> {
    let bytes = random::<32>().map_err(|e| failed(path, e))?;
    Ok(format!("axe_{}", hex(&bytes)))
}

/// Now, as `created` holds it (RFC 3339, UTC, whole seconds).
fn now() -> String {
    time::OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .ok()
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_default()
}

fn failed(path: &Path, e: std::io::Error) -> Error {
    Error::Config(format!(
        "tokens file {}: {}",
        path.display(),
        axe_base::error::describe_io(&e)
    ))
}

/// The tokens file held under its lock for a change, and its text.
struct Locked {
    dir: axe_base::beneath::Dir,
    name: std::ffi::OsString,
    file: std::fs::File,
    text: String,
    path: std::path::PathBuf,
}

impl Locked {
    /// Opens and locks the file at `path` (made 0600 when missing and
    /// `create`), read whole: a regular file of at most [`MAX_BYTES`].
    fn open(path: &Path, create: bool) -> Result<Locked> {
        use axe_base::beneath::{Dir, Open};
        use axe_memory::lock::{self, Mode};

        let failed = |e: std::io::Error| failed(path, e);
        let (dir, name) = Dir::holding(path, create)
            .map_err(failed)?
            .ok_or_else(|| failed(std::io::ErrorKind::NotFound.into()))?;
        if create {
            // A new file is made 0600 by its creator; then it is locked like any.
            let _ = dir.create(&name, Open::New).map_err(failed)?;
        }
        let file = lock::open_locked(
            &dir,
            &name,
            Open::Write,
            Mode::Exclusive,
            axe_memory::Wait::default(),
        )
        .map_err(failed)?
        .ok_or_else(|| failed(std::io::ErrorKind::NotFound.into()))?;
        if !file.metadata().map_err(failed)?.is_file() {
            return Err(Error::Config(format!(
                "tokens file {}: not a regular file",
                path.display()
            )));
        }
        let mut bytes = Vec::new();
        (&file)
            .take(MAX_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(failed)?;
        // Never written back cut short.
        if bytes.len() as u64 > MAX_BYTES {
            return Err(Error::Config(format!(
                "tokens file {}: larger than {} KiB; it is not changed",
                path.display(),
                MAX_BYTES >> 10
            )));
        }
        let text = String::from_utf8(bytes)
            .map_err(|_| Error::Config(format!("tokens file {}: not UTF-8", path.display())))?;
        Ok(Locked {
            dir,
            name,
            file,
            text,
            path: path.to_owned(),
        })
    }

    /// Replaces the file whole with `text`, 0600 whatever it was.
    fn write(self, text: &str) -> Result<()> {
        use std::io::Write;
        use std::os::unix::fs::PermissionsExt;

        let failed = |e: std::io::Error| failed(&self.path, e);
        // The replace keeps the file's mode: 0600 before it.
        self.file
            .set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(failed)?;
        axe_memory::replace::replace(&self.file, &self.dir, &self.name, |new, _| {
            new.write_all(text.as_bytes())
        })
        .map_err(failed)
    }
}

/// A token's or an agent's name as the file, the log line and a path
/// hold it: no separators, no dot first, no escapes (one word of letters,
/// digits, `.`, `_`, `-`).
pub(super) fn word(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use axe_base::report::Collected;

    use super::*;

    /// A tokens file broken while the server runs takes no token, and
    /// the server's report (not stderr) is told why.
    #[test]
    fn a_file_broken_meanwhile_takes_no_token_and_says_so_on_the_report() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokens.toml");
        let write = |text: &str| {
            std::fs::write(&path, text).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        };
        write(&format!(
            "[[token]]\nname = \"ci\"\nsha256 = \"{}\"\nagents = \"*\"\n",
            sha256_hex(b"secret")
        ));
        let live = Live::load(&path).unwrap();
        let report = Collected::default();
        assert_eq!(live.current(&report).all().len(), 1);
        assert!(report.lines().is_empty());
        write("[[token]\nname = broken");
        assert!(live.current(&report).all().is_empty());
        let lines = report.lines();
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].starts_with(&format!("axe-mcp: tokens file {}: ", path.display()))
                && lines[0].ends_with("; no token is taken until it is mended"),
            "{}",
            lines[0]
        );
        // Said once per change, not per request.
        live.current(&report);
        assert_eq!(report.lines().len(), 1);
    }
}
