//! Files reached through directory handles, so that no path swapped under
//! us can redirect a read or a write.
//!
//! Checking a path and then opening it is a race: between the two, a
//! directory can be replaced with a symlink to anywhere, and the open
//! follows it. Here a path is walked one component at a time from an open
//! directory handle with `openat(O_NOFOLLOW)`, and every later operation
//! (open, create, rename, remove, list) is made relative to the handle of
//! the directory that was reached, never through its path again.
//!
//! A symlink met on the way is resolved by hand, inside the root: a
//! relative target is walked from the directory that holds the link (`..`
//! never climbs above the root), an absolute one is followed only when it
//! lies under the root's real path, and then from the root's handle. A link
//! that leads anywhere else is [`Outside`], found before anything is
//! created. Whatever is swapped meanwhile, the walk only ever holds handles
//! of directories beneath the root, so the worst a swap can do is make an
//! operation fail.
//!
//! The root itself is opened by its path, following symlinks: it is the
//! user's own setting (a workspace, a log's directory).

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fs::{self, File};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

/// How many symlinks one walk may follow, as Linux's `MAXSYMLINKS`.
const MAX_LINKS: usize = 40;

/// A path that leads outside the root it was walked from.
#[derive(Debug, thiserror::Error)]
#[error("leads outside")]
pub struct Outside;

/// Whether `err` is a walk refused because it led outside its root.
pub fn is_outside(err: &io::Error) -> bool {
    err.get_ref().is_some_and(|e| e.is::<Outside>())
}

fn outside() -> io::Error {
    io::Error::other(Outside)
}

/// A symlink where [`Dir::open`] expected the file itself: one put there
/// since the name was resolved, or one to resolve with [`Dir::file`].
#[derive(Debug, thiserror::Error)]
#[error("is a symbolic link")]
struct IsLink;

/// Whether `err` is [`Dir::open`] finding a symlink.
pub fn is_link(err: &io::Error) -> bool {
    err.get_ref().is_some_and(|e| e.is::<IsLink>())
}

/// Something other than a directory where a walk needed one: named, since
/// the path the caller asked for is a longer one.
#[derive(Debug, thiserror::Error)]
#[error("{} is not a directory", .0.display())]
struct NotDir(PathBuf);

/// The path a walk found not to be a directory, when that is `err`.
pub fn not_a_dir(err: &io::Error) -> Option<&Path> {
    err.get_ref()?
        .downcast_ref::<NotDir>()
        .map(|e| e.0.as_path())
}

/// An open directory, and the path it was reached by (for messages only).
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
    /// The path the root was opened by: its real path is worked out only
    /// when an absolute symlink needs it.
    root: PathBuf,
    /// How many components below the root it is.
    depth: usize,
}

/// How [`Dir::open`] opens a file. Every open is `O_NOFOLLOW` (the name
/// was resolved already), `O_NONBLOCK` (a FIFO cannot hang it) and
/// `O_CLOEXEC`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Open {
    Read,
    /// Appending, creating the file (0644 before the umask).
    Append,
    /// Reading and writing, creating the file (0644).
    Update,
    /// Reading and writing an existing file.
    Write,
    /// A new file only (0600): fails when the name exists.
    New,
}

impl Open {
    fn flags(self) -> (OFlags, Mode) {
        let file = Mode::from_raw_mode(0o644);
        match self {
            Open::Read => (OFlags::RDONLY, Mode::empty()),
            Open::Append => (OFlags::WRONLY | OFlags::APPEND | OFlags::CREATE, file),
            Open::Update => (OFlags::RDWR | OFlags::CREATE, file),
            Open::Write => (OFlags::RDWR, Mode::empty()),
            Open::New => (
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL,
                Mode::from_raw_mode(0o600),
            ),
        }
    }
}

/// What is at a name in a directory, not following a symlink there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub kind: FileType,
    pub dev: u64,
    pub ino: u64,
    pub len: u64,
    pub uid: u32,
}

/// A regular file's identity and times: when none of them changed, nor
/// did its bytes (a write changes the modification time, a `chmod` or a
/// rename over it the change time or the inode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub dev: u64,
    pub ino: u64,
    pub len: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
}

impl Stamp {
    /// The stamp of what `meta` describes (a file, or a directory whose
    /// times change as its entries do).
    pub fn of(meta: &std::fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.size(),
            mtime_ns: meta.mtime() * 1_000_000_000 + meta.mtime_nsec(),
            ctime_ns: meta.ctime() * 1_000_000_000 + meta.ctime_nsec(),
        }
    }
}

impl Dir {
    /// Opens the directory at `path`, following symlinks in it (the root
    /// is the user's setting); with `create`, creates it and its parents
    /// (0755) first. `Ok(None)` when it does not exist and `create` is off.
    pub fn root(path: &Path, create: bool) -> io::Result<Option<Dir>> {
        // Following symlinks here, but not for the last component of what
        // is walked from it: `dir_flags` is for the walk.
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let fd = match rustix::fs::open(path, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) if create => {
                create_dirs(path)?;
                rustix::fs::open(path, flags, Mode::empty())?
            }
            Err(Errno::NOENT) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        Ok(Some(Dir {
            fd,
            path: path.to_owned(),
            root: path.to_owned(),
            depth: 0,
        }))
    }

    /// The directory that holds the file at `path` (a log, a state file:
    /// a path the user configured), and the file's name in it. A symlink
    /// as the file itself is followed first, so what is opened and
    /// replaced is the file it points to, not the link. With `create`, the
    /// directory is created when missing; without, `Ok(None)` when it is.
    pub fn holding(path: &Path, create: bool) -> io::Result<Option<(Dir, OsString)>> {
        let real = follow_file_links(path)?;
        let name = real
            .file_name()
            .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?
            .to_owned();
        let parent = match real.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        Ok(Dir::root(parent, create)?.map(|dir| (dir, name)))
    }

    /// Where this directory is now, as the kernel knows it (`None` where
    /// it does not say: no `/proc`).
    pub fn real_path(&self) -> Option<PathBuf> {
        use std::os::fd::AsRawFd;
        std::fs::read_link(format!("/proc/self/fd/{}", self.fd.as_raw_fd())).ok()
    }

    /// The path of `name` in this directory, for messages.
    pub fn join(&self, name: impl AsRef<Path>) -> PathBuf {
        self.path.join(name)
    }

    /// The directory `rel` beneath this one (`..` and symlinks resolved
    /// inside the root); with `create`, missing directories are made
    /// (0755) on the way. `Ok(None)` when one is missing and `create` is
    /// off.
    pub fn dir(&self, rel: &Path, create: bool) -> io::Result<Option<Dir>> {
        Ok(Walk::new(self, rel)?
            .run(create, false)?
            .map(|(dir, _)| dir))
    }

    /// The directory `name` directly in this one, never through a
    /// symlink, even one that stays inside the root (what another tool
    /// keeps, where a link is not ours to follow). `Ok(None)` when nothing
    /// is there; a symlink is [`is_link`]'s error, anything else that is
    /// no directory [`not_a_dir`]'s.
    pub fn child(&self, name: &OsStr) -> io::Result<Option<Dir>> {
        if name.is_empty() || name == "." || name == ".." || name.as_bytes().contains(&b'/') {
            return Err(io::ErrorKind::InvalidInput.into());
        }
        loop {
            match rustix::fs::openat(&self.fd, name, dir_flags(), Mode::empty()) {
                Ok(fd) => {
                    return Ok(Some(Dir {
                        fd,
                        path: self.path.join(name),
                        root: self.root.clone(),
                        depth: self.depth + 1,
                    }));
                }
                Err(Errno::NOENT) => return Ok(None),
                Err(Errno::LOOP | Errno::NOTDIR) => match entry_at(&self.fd, name)? {
                    Some(e) if e.kind == FileType::Symlink => return Err(io::Error::other(IsLink)),
                    Some(_) => return Err(io::Error::other(NotDir(self.path.join(name)))),
                    // Gone meanwhile: look again.
                    None => {}
                },
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// The directory holding the file `rel` beneath this one, and the
    /// file's name there, a symlink as the file itself resolved inside the
    /// root (so a write replaces its target). As [`Dir::dir`] for the
    /// directories on the way; `rel` naming a directory is an error.
    pub fn file(&self, rel: &Path, create: bool) -> io::Result<Option<(Dir, OsString)>> {
        match Walk::new(self, rel)?.run(create, true)? {
            Some((dir, Some(name))) => Ok(Some((dir, name))),
            Some((_, None)) => Err(io::ErrorKind::IsADirectory.into()),
            None => Ok(None),
        }
    }

    /// Opens `name` here without following a symlink. `Ok(None)` when it
    /// does not exist (never for the creating modes).
    pub fn open(&self, name: &OsStr, how: Open) -> io::Result<Option<File>> {
        let (flags, mode) = how.flags();
        let flags = flags | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
        match rustix::fs::openat(&self.fd, name, flags, mode) {
            Ok(fd) => Ok(Some(File::from(fd))),
            Err(Errno::NOENT) if !matches!(how, Open::Append | Open::Update | Open::New) => {
                Ok(None)
            }
            // A FIFO without a reader cannot be opened for writing at all.
            Err(Errno::NXIO) => Err(not_regular()),
            Err(Errno::LOOP) => Err(io::Error::other(IsLink)),
            Err(e) => Err(e.into()),
        }
    }

    /// Appends the regular file `name` here to `buf`, when it holds at
    /// most `limit` bytes; `Ok(false)` when nothing is there. A larger
    /// file, a FIFO, device or socket is an error, found without reading
    /// or blocking; so is a symlink (resolve it with [`Dir::file`]).
    pub fn read_into(&self, name: &OsStr, buf: &mut Vec<u8>, limit: u64) -> io::Result<bool> {
        use std::io::Read;
        let Some(file) = self.open(name, Open::Read)? else {
            return Ok(false);
        };
        let meta = file.metadata()?;
        if meta.is_dir() {
            return Err(io::ErrorKind::IsADirectory.into());
        }
        if !meta.is_file() {
            return Err(not_regular());
        }
        let too_large = || io::Error::other(TooLarge { limit });
        if meta.len() > limit {
            return Err(too_large());
        }
        let start = buf.len();
        buf.reserve(meta.len() as usize);
        // One byte past the limit tells a file that grew meanwhile.
        file.take(limit + 1).read_to_end(buf)?;
        if (buf.len() - start) as u64 > limit {
            buf.truncate(start);
            return Err(too_large());
        }
        Ok(true)
    }

    /// Creates `name` here and opens it the way `how` says ([`Open::Append`]
    /// or [`Open::Update`]), only if nothing is there yet: `Ok(None)` when
    /// something is, so the caller knows whether the file is its own.
    pub fn create(&self, name: &OsStr, how: Open) -> io::Result<Option<File>> {
        let (flags, mode) = how.flags();
        let flags = flags
            | OFlags::EXCL
            | OFlags::NOFOLLOW
            | OFlags::NONBLOCK
            | OFlags::CLOEXEC
            | OFlags::NOCTTY;
        match rustix::fs::openat(&self.fd, name, flags, mode) {
            Ok(fd) => Ok(Some(File::from(fd))),
            Err(Errno::EXIST) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// What is at `name` here, not following a symlink; `None` when
    /// nothing is.
    pub fn entry(&self, name: &OsStr) -> io::Result<Option<Entry>> {
        entry_at(&self.fd, name)
    }

    /// What identifies the contents of the regular file `name` here for a
    /// cache of what it holds (a search's index): `None` when nothing is
    /// there or it is not a regular file (a symlink is not followed).
    // The fields' types differ between platforms (`time_t`, `long`).
    #[allow(clippy::unnecessary_cast)]
    pub fn stamp(&self, name: &OsStr) -> io::Result<Option<Stamp>> {
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile => {
                Ok(Some(Stamp {
                    dev: st.st_dev,
                    ino: st.st_ino,
                    len: st.st_size as u64,
                    mtime_ns: st.st_mtime as i64 * 1_000_000_000 + st.st_mtime_nsec as i64,
                    ctime_ns: st.st_ctime as i64 * 1_000_000_000 + st.st_ctime_nsec as i64,
                }))
            }
            Ok(_) | Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Removes the file `name` here; a missing one is not an error.
    pub fn remove(&self, name: &OsStr) -> io::Result<()> {
        match rustix::fs::unlinkat(&self.fd, name, AtFlags::empty()) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Renames `from` over `to`, both here: atomic, as `rename(2)`.
    pub fn rename(&self, from: &OsStr, to: &OsStr) -> io::Result<()> {
        Ok(rustix::fs::renameat(&self.fd, from, &self.fd, to)?)
    }

    /// Flushes the directory itself, so a rename in it survives a crash.
    pub fn sync(&self) -> io::Result<()> {
        Ok(rustix::fs::fsync(&self.fd)?)
    }

    /// The names in this directory (not `.` and `..`) with what each is,
    /// not following symlinks.
    pub fn list(&self) -> io::Result<Vec<(OsString, FileType)>> {
        let mut out = Vec::new();
        for entry in rustix::fs::Dir::read_from(&self.fd)? {
            let entry = entry?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let name = OsStr::from_bytes(name).to_owned();
            let kind = match entry.file_type() {
                // Some filesystems do not say in the listing.
                FileType::Unknown => match self.entry(&name)? {
                    Some(e) => e.kind,
                    None => continue,
                },
                kind => kind,
            };
            out.push((name, kind));
        }
        Ok(out)
    }
}

/// One walk down from a directory: the handles of the directories
/// entered so far, and the names still to walk.
struct Walk<'a> {
    start: &'a Dir,
    held: Vec<(OwnedFd, OsString)>,
    pending: VecDeque<OsString>,
    links: usize,
}

/// What entering a name found.
enum Step {
    Entered,
    Missing,
    Link,
}

impl<'a> Walk<'a> {
    fn new(start: &'a Dir, rel: &Path) -> io::Result<Walk<'a>> {
        let mut walk = Walk {
            start,
            held: Vec::new(),
            pending: VecDeque::new(),
            links: 0,
        };
        walk.push_front(rel)?;
        Ok(walk)
    }

    /// Walks every name; with `file`, the last one is not entered but
    /// returned (after following it while it is a symlink). `None` when a
    /// directory on the way is missing and not to be created.
    fn run(mut self, create: bool, file: bool) -> io::Result<Option<(Dir, Option<OsString>)>> {
        while let Some(name) = self.next_name()? {
            let last = self.pending.is_empty();
            if last && file {
                match entry_at(self.top(), &name)? {
                    Some(e) if e.kind == FileType::Symlink => self.expand_link(&name)?,
                    _ => return Ok(Some((self.finish()?, Some(name)))),
                }
                continue;
            }
            match self.enter(&name, create)? {
                Step::Entered => {}
                Step::Missing => return Ok(None),
                Step::Link => self.expand_link(&name)?,
            }
        }
        Ok(Some((self.finish()?, None)))
    }

    /// Puts the components of `rel` before the names still to walk; `..`
    /// stays a name so it is taken in its turn.
    fn push_front(&mut self, rel: &Path) -> io::Result<()> {
        let mut names = Vec::new();
        for c in rel.components() {
            match c {
                Component::Normal(name) => names.push(name.to_owned()),
                Component::ParentDir => names.push(OsString::from("..")),
                Component::CurDir => {}
                Component::RootDir | Component::Prefix(_) => return Err(outside()),
            }
        }
        for name in names.into_iter().rev() {
            self.pending.push_front(name);
        }
        Ok(())
    }

    /// The next name to walk, with any `..` before it taken. Climbing is
    /// letting go of a handle we hold, never a lookup of `..`, which a
    /// directory moved meanwhile would turn into anywhere; above the
    /// start is outside.
    fn next_name(&mut self) -> io::Result<Option<OsString>> {
        while let Some(name) = self.pending.pop_front() {
            if name != ".." {
                return Ok(Some(name));
            }
            if self.held.pop().is_none() {
                return Err(outside());
            }
        }
        Ok(None)
    }

    /// The path of `name` in the directory reached so far, for messages.
    fn path_of(&self, name: &OsStr) -> PathBuf {
        let mut path = self.start.path.clone();
        path.extend(self.held.iter().map(|(_, n)| n));
        path.join(name)
    }

    fn top(&self) -> &OwnedFd {
        self.held.last().map_or(&self.start.fd, |(fd, _)| fd)
    }

    /// Goes into the directory `name`, creating it when missing and
    /// `create`.
    fn enter(&mut self, name: &OsStr, create: bool) -> io::Result<Step> {
        loop {
            match rustix::fs::openat(self.top(), name, dir_flags(), Mode::empty()) {
                Ok(fd) => {
                    self.held.push((fd, name.to_owned()));
                    return Ok(Step::Entered);
                }
                Err(Errno::NOENT) if create => {
                    match rustix::fs::mkdirat(self.top(), name, Mode::from_raw_mode(0o755)) {
                        // Made by someone else meanwhile: open it.
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                Err(Errno::NOENT) => return Ok(Step::Missing),
                // A symlink (O_NOFOLLOW) or not a directory: see which.
                Err(Errno::LOOP | Errno::NOTDIR) => match entry_at(self.top(), name)? {
                    Some(e) if e.kind == FileType::Symlink => return Ok(Step::Link),
                    Some(_) => return Err(io::Error::other(NotDir(self.path_of(name)))),
                    // Gone meanwhile: look again.
                    None => {}
                },
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Puts the target of the symlink `name` (in the top directory) first
    /// in line, refusing one outside the root.
    fn expand_link(&mut self, name: &OsStr) -> io::Result<()> {
        self.links += 1;
        if self.links > MAX_LINKS {
            return Err(Errno::LOOP.into());
        }
        let target = rustix::fs::readlinkat(self.top(), name, Vec::new())?;
        let target = PathBuf::from(OsString::from_vec(target.into_bytes()));
        if !target.is_absolute() {
            return self.push_front(&target);
        }
        // Absolute: only to a place under the root, walked from the
        // root's own handle. A walk that starts below the root holds no
        // handle of the root, so it cannot.
        if self.start.depth > 0 {
            return Err(outside());
        }
        let real = fs::canonicalize(&self.start.root)?;
        let rel = target
            .strip_prefix(&real)
            .map_err(|_| outside())?
            .to_owned();
        self.held.clear();
        self.push_front(&rel)
    }

    fn finish(mut self) -> io::Result<Dir> {
        let depth = self.start.depth + self.held.len();
        let mut path = self.start.path.clone();
        path.extend(self.held.iter().map(|(_, n)| n));
        let fd = match self.held.pop() {
            Some((fd, _)) => fd,
            None => self.start.fd.try_clone()?,
        };
        Ok(Dir {
            fd,
            path,
            root: self.start.root.clone(),
            depth,
        })
    }
}

fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

fn entry_at(fd: &OwnedFd, name: &OsStr) -> io::Result<Option<Entry>> {
    match rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Ok(Some(Entry {
            kind: FileType::from_raw_mode(st.st_mode),
            dev: st.st_dev,
            ino: st.st_ino,
            len: st.st_size as u64,
            uid: st.st_uid,
        })),
        Err(Errno::NOENT) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// `path` with symlinks as its last component followed (a configured log
/// may be a link into a dotfiles repository), even to a target that does
/// not exist yet.
fn follow_file_links(path: &Path) -> io::Result<PathBuf> {
    let mut real = path.to_owned();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&real) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = fs::read_link(&real)?;
                real = match real.parent() {
                    Some(parent) if target.is_relative() => parent.join(target),
                    _ => target,
                };
            }
            _ => return Ok(real),
        }
    }
    Err(Errno::LOOP.into())
}

/// A FIFO, socket or device where a file was expected.
#[derive(Debug, thiserror::Error)]
#[error("not a regular file")]
struct NotRegular;

/// The error for a FIFO, socket or device where a file was expected.
pub fn not_regular() -> io::Error {
    io::Error::other(NotRegular)
}

/// Whether `err` is [`not_regular`]'s.
pub fn is_not_regular(err: &io::Error) -> bool {
    err.get_ref().is_some_and(|e| e.is::<NotRegular>())
}

/// Creates `dir` and its parents with mode 0755 (by path: for roots, which
/// are the user's settings).
pub fn create_dirs(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o755);
    builder.create(dir)
}

/// A file over the size [`Dir::read_into`] was asked to read, carried in
/// the `io::Error` it returns; `describe_io` shows its line.
#[derive(Debug, thiserror::Error)]
#[error("larger than the limit of {} MiB", .limit.div_ceil(1 << 20))]
pub struct TooLarge {
    /// The limit, in bytes.
    pub limit: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        let out = tmp.path().join("out");
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::create_dir_all(&out).unwrap();
        (tmp, root, out)
    }

    fn open_root(root: &Path) -> Dir {
        Dir::root(root, false).unwrap().unwrap()
    }

    #[test]
    fn links_out_are_refused_and_nothing_is_made_on_the_way() {
        let (_tmp, root, out) = setup();
        symlink(&out, root.join("abs")).unwrap();
        symlink("../../out", root.join("a/rel")).unwrap();
        let dir = open_root(&root);
        for rel in ["abs/x/f", "a/rel/x/f", "..", "a/../../out/f", "/etc/passwd"] {
            let err = dir.file(Path::new(rel), true).unwrap_err();
            assert!(is_outside(&err), "{rel}: {err}");
        }
        assert_eq!(fs::read_dir(&out).unwrap().count(), 0, "made outside");
    }

    #[test]
    fn links_that_stay_inside_are_followed() {
        let (_tmp, root, _out) = setup();
        symlink("a/b", root.join("short")).unwrap();
        symlink(fs::canonicalize(root.join("a")).unwrap(), root.join("abs")).unwrap();
        symlink("../b/f", root.join("a/b/g")).unwrap();
        let dir = open_root(&root);
        let (d, name) = dir.file(Path::new("short/f"), false).unwrap().unwrap();
        assert_eq!(
            (d.join(&name), name.as_os_str()),
            (root.join("a/b/f"), OsStr::new("f"))
        );
        let (d, _) = dir.file(Path::new("abs/b/f"), false).unwrap().unwrap();
        assert_eq!(d.join("f"), root.join("a/b/f"));
        // A link as the file itself: its target, for reads and writes.
        let (d, name) = dir.file(Path::new("a/b/g"), false).unwrap().unwrap();
        assert_eq!(d.join(&name), root.join("a/b/f"));
    }

    #[test]
    fn a_held_directory_stays_itself_when_its_path_is_swapped() {
        let (_tmp, root, out) = setup();
        let dir = open_root(&root);
        let (held, name) = dir.file(Path::new("a/b/f"), true).unwrap().unwrap();
        // The path now leads out; the handle does not.
        fs::rename(root.join("a/b"), root.join("a/moved")).unwrap();
        symlink(&out, root.join("a/b")).unwrap();
        held.create(&name, Open::Append).unwrap().unwrap();
        assert!(root.join("a/moved/f").exists());
        assert_eq!(fs::read_dir(&out).unwrap().count(), 0);
        // Walked again, it is refused.
        assert!(is_outside(&dir.file(Path::new("a/b/f"), true).unwrap_err()));
    }

    #[test]
    fn missing_directories_are_made_only_when_asked() {
        let (_tmp, root, _out) = setup();
        let dir = open_root(&root);
        assert!(dir.dir(Path::new("x/y"), false).unwrap().is_none());
        assert!(!root.join("x").exists());
        let made = dir.dir(Path::new("x/y"), true).unwrap().unwrap();
        assert!(root.join("x/y").is_dir());
        assert!(made.list().unwrap().is_empty());
        fs::write(root.join("x/file"), "").unwrap();
        let err = dir.dir(Path::new("x/file/z"), true).unwrap_err();
        assert!(
            err.to_string().ends_with("x/file is not a directory"),
            "{err}"
        );
    }

    #[test]
    fn a_child_is_never_reached_through_a_link() {
        let (_tmp, root, out) = setup();
        symlink(&out, root.join("abs")).unwrap();
        symlink("a", root.join("inside")).unwrap();
        fs::write(root.join("file"), "").unwrap();
        let dir = open_root(&root);
        let a = dir.child(OsStr::new("a")).unwrap().unwrap();
        assert!(a.child(OsStr::new("b")).unwrap().is_some());
        assert_eq!(a.join("x"), root.join("a/x"));
        // A link is refused, even one that stays inside.
        for name in ["abs", "inside"] {
            assert!(is_link(&dir.child(OsStr::new(name)).unwrap_err()), "{name}");
        }
        assert!(not_a_dir(&dir.child(OsStr::new("file")).unwrap_err()).is_some());
        assert!(dir.child(OsStr::new("missing")).unwrap().is_none());
        for name in ["..", ".", "a/b", ""] {
            assert!(dir.child(OsStr::new(name)).is_err(), "{name}");
        }
    }

    #[test]
    fn link_loops_end() {
        let (_tmp, root, _out) = setup();
        symlink("l2", root.join("l1")).unwrap();
        symlink("l1", root.join("l2")).unwrap();
        let err = open_root(&root).file(Path::new("l1/f"), false).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ELOOP), "{err}");
    }

    #[test]
    fn opens_never_follow_or_block() {
        let (_tmp, root, out) = setup();
        fs::write(out.join("secret"), "s").unwrap();
        symlink(out.join("secret"), root.join("link")).unwrap();
        let dir = open_root(&root);
        assert!(dir.open(OsStr::new("link"), Open::Read).is_err());
        let status = std::process::Command::new("mkfifo")
            .arg(root.join("fifo"))
            .status()
            .unwrap();
        assert!(status.success());
        let mut buf = Vec::new();
        let err = dir.read_into(OsStr::new("fifo"), &mut buf, 10).unwrap_err();
        assert_eq!(err.to_string(), "not a regular file");
    }

    /// A file over the limit is refused with a typed cause the caller can
    /// find, and the line Go's callers print (through `describe_io`).
    #[test]
    fn a_file_over_the_limit_says_so_typed() {
        let (_tmp, root, _out) = setup();
        fs::write(root.join("big"), vec![b'x'; (1 << 20) + 1]).unwrap();
        let dir = open_root(&root);
        let mut buf = Vec::new();
        let err = dir
            .read_into(OsStr::new("big"), &mut buf, 1 << 20)
            .unwrap_err();
        let typed = err.get_ref().and_then(|e| e.downcast_ref::<TooLarge>());
        assert_eq!(typed.map(|t| t.limit), Some(1 << 20));
        assert_eq!(
            crate::error::describe_io(&err),
            "larger than the limit of 1 MiB"
        );
        assert!(buf.is_empty());
    }
}
