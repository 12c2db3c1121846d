//! One index file: the notes directories it covers (each with its
//! [`Stamp`] when listed), the notes files (each with the stamp it had
//! when read), their sections (each one's length and file), and for each
//! word the sections that hold it with how often it is in the section's
//! heading and in its body: all BM25F needs, so a search scores from the
//! index without reading the notes.
//!
//! ```text
//! "AXENIX04"  the parts' lengths (8), the dir's checksum, 6 zeros
//!            (8 bytes each)
//! dir:       generation, base, the directories, the files read at every
//!            search, and the checksum of each [`BLOCK`] of the parts
//!            below but postings (varints and bytes)
//! files:     72 bytes a file: stamp, read_at, first section, sections,
//!            name (in names), flags, directory
//! names:     the files' names
//! sections:  8 bytes a section: its length, its file
//! keys:      8 bytes a section: the key of its text (`vectors::key`:
//!            where its vector is kept; 0 for a section of blanks), apart
//!            from the sections, which a search by words reads by the
//!            megabyte and a search by meaning not at all
//! terms:     32 bytes a word, sorted: its text (in texts), where its
//!            postings are, their length and checksum
//! texts:     the words
//! postings:  per word, its sections: (gap << 1 | more) as a varint, and
//!            when `more` the body's and the heading's counts (without
//!            it: once in the body, as most are)
//! "AXENIXOK"
//! ```
//!
//! A search reads only the blocks it needs, each once (the rotating
//! check's slice of the files, the sections of its words' postings), and
//! each word's postings as it asks for them: a gigabyte of notes makes an
//! index of about 190 MB, of which a search reads a few. Nothing read is
//! trusted: the file's length must be what the head says, the
//! directory's checksum must hold, each block's when it is read, each
//! word's postings are checked against their own checksum, and every
//! number is range-checked. Any mismatch is
//! [`Torn`]: the caller rebuilds and never uses what it read.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::sync::OnceLock;

use axe_base::beneath::Stamp;

const MAGIC: &[u8; 8] = b"AXENIX04";
const END: &[u8; 8] = b"AXENIXOK";
/// The parts after the head, in order.
const PARTS: usize = 8;
const DIR: usize = 0;
const FILES: usize = 1;
const NAMES: usize = 2;
const SECTIONS: usize = 3;
const KEYS: usize = 4;
const TERMS: usize = 5;
const TEXTS: usize = 6;
const POSTINGS: usize = 7;
const HEAD: usize = 8 + 8 * PARTS + 8 * (PARTS - 1);
const FILE_LEN: usize = 72;
const SECTION_LEN: usize = 8;
const KEY_LEN: usize = 8;
const TERM_LEN: usize = 32;
/// The parts are read and checked by blocks of this many bytes: a
/// multiple of every record's length, so no record straddles two.
const BLOCK: usize = 288 * 256;

/// A file read at every search, never scored from the index: it has no
/// stamp (a symlink, one being appended to) or could not be read.
pub const SCAN: u32 = 1;
/// A file gone since the base (in a delta only).
pub const GONE: u32 = 2;

/// What a directory of the index lists.
pub const WORLD: u8 = 0;
/// `agents/<name>`: its MEMORY.md alone.
pub const AGENT: u8 = 1;
pub const DAILY: u8 = 2;
/// `agents`: the agents.
pub const AGENTS: u8 = 3;

/// A part's blocks, each read and checked once (`None`: torn); by
/// whichever of the searches sharing the segment asks first (`flight`).
type Blocks = Vec<OnceLock<Option<Box<[u8]>>>>;

/// A section of a word's postings: (section, heading's count, body's
/// count).
pub type Posting = (u32, u32, u32);

/// What is handed each word found: its text and number.
type EachWord<'a> = &'a mut dyn FnMut(&[u8], u32) -> Result<(), Torn>;

/// An index file that is not whole: truncated, garbage, or of another
/// version.
#[derive(Debug)]
pub struct Torn;

/// A notes directory as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    /// Relative to the workspace: `world`, `agents`, `agents/a`,
    /// `agents/a/daily`.
    pub path: String,
    pub kind: u8,
    /// `None`: listed at every search.
    pub stamp: Option<Stamp>,
    pub listed_at: i64,
    /// Its files: `first_file..first_file + files` (in a base), with
    /// their sections and bytes (those read at every search left out).
    pub first_file: u32,
    pub files: u32,
    pub sections: u64,
    pub bytes: u64,
}

/// One notes file as indexed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Relative to the workspace.
    pub path: String,
    pub stamp: Stamp,
    /// When it was read (before the read), in nanoseconds since the
    /// epoch: a file changed in the same instant is read again.
    pub read_at: i64,
    pub first_section: u32,
    pub sections: u32,
    pub flags: u32,
    /// Its directory's number.
    pub dir: u32,
}

impl Entry {
    /// Its name in its directory.
    pub fn name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }
}

/// A word's place in postings.
#[derive(Clone, Copy)]
struct Term {
    at: u64,
    len: u64,
    sum: u64,
}

/// The checksum of `bytes`: FxHash's mixing, 8 bytes at a time, with the
/// length. Not against an attacker (the cache is the user's own), against
/// a torn or overwritten file.
pub fn checksum(bytes: &[u8]) -> u64 {
    const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    let mut h = (bytes.len() as u64).wrapping_mul(K) ^ 0x9e37_79b9_7f4a_7c15;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
    }
    let mut last = [0; 8];
    last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    h = (h.rotate_left(5) ^ u64::from_le_bytes(last)).wrapping_mul(K);
    h ^ (h >> 29)
}

fn put(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push(n as u8 | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn put_stamp(out: &mut Vec<u8>, s: &Stamp) {
    for n in [s.dev, s.ino, s.len, s.mtime_ns as u64, s.ctime_ns as u64] {
        put(out, n);
    }
}

/// Reads what [`put`] wrote, every read bounded.
pub struct Reader<'a> {
    pub bytes: &'a [u8],
    pub at: usize,
}

impl Reader<'_> {
    pub fn next(&mut self) -> Result<u64, Torn> {
        let mut n = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *self.bytes.get(self.at).ok_or(Torn)?;
            self.at += 1;
            n |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(n);
            }
        }
        Err(Torn)
    }

    fn bytes(&mut self) -> Result<&[u8], Torn> {
        let len = usize::try_from(self.next()?).map_err(|_| Torn)?;
        let end = self.at.checked_add(len).ok_or(Torn)?;
        let bytes = self.bytes.get(self.at..end).ok_or(Torn)?;
        self.at = end;
        Ok(bytes)
    }

    fn small(&mut self) -> Result<u32, Torn> {
        u32::try_from(self.next()?).map_err(|_| Torn)
    }

    fn stamp(&mut self) -> Result<Stamp, Torn> {
        Ok(Stamp {
            dev: self.next()?,
            ino: self.next()?,
            len: self.next()?,
            mtime_ns: self.next()? as i64,
            ctime_ns: self.next()? as i64,
        })
    }

    pub fn done(&self) -> bool {
        self.at >= self.bytes.len()
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut x = [0; 4];
    x.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(x)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut x = [0; 8];
    x.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(x)
}

/// Where a segment's bytes are: its file, or memory (the files read
/// again by this search).
enum Source {
    File(File),
    Bytes(Vec<u8>),
}

impl Source {
    fn read(&self, at: u64, len: usize) -> Result<Vec<u8>, Torn> {
        match self {
            Source::File(f) => {
                let mut out = vec![0u8; len];
                f.read_exact_at(&mut out, at).map_err(|_| Torn)?;
                Ok(out)
            }
            Source::Bytes(b) => {
                let at = usize::try_from(at).map_err(|_| Torn)?;
                Ok(b.get(at..at + len).ok_or(Torn)?.to_vec())
            }
        }
    }
}

/// An index file, its head and directories read and checked; the other
/// parts read (and checked) when first asked for.
pub struct Segment {
    pub generation: u64,
    /// For a delta, the generation of the base it goes with; 0 for a base.
    pub base: u64,
    pub dirs: Vec<DirEntry>,
    pub file_count: u32,
    pub section_count: u32,
    pub term_count: u32,
    /// The files read at every search ([`SCAN`]), few.
    pub scan: Vec<u32>,
    source: Source,
    at: [u64; PARTS],
    len: [u64; PARTS],
    /// Per part after the dir, per block: its checksum, and its bytes
    /// once read and checked.
    sums: [Vec<u64>; PARTS - 2],
    blocks: [Blocks; PARTS - 2],
}

impl Segment {
    /// The index file `file`, checked; [`Torn`] when it is not whole.
    pub fn read(file: File) -> Result<Segment, Torn> {
        let total = file.metadata().map_err(|_| Torn)?.len();
        Segment::open(Source::File(file), total)
    }

    /// An index made in memory.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Segment, Torn> {
        let total = bytes.len() as u64;
        Segment::open(Source::Bytes(bytes), total)
    }

    fn open(source: Source, total: u64) -> Result<Segment, Torn> {
        if total < (HEAD + 8) as u64 {
            return Err(Torn);
        }
        let head = source.read(0, HEAD)?;
        if &head[..8] != MAGIC {
            return Err(Torn);
        }
        let mut len = [0u64; PARTS];
        let mut at = [0u64; PARTS];
        let mut next = HEAD as u64;
        for i in 0..PARTS {
            len[i] = u64_at(&head, 8 + 8 * i);
            at[i] = next;
            next = next.checked_add(len[i]).ok_or(Torn)?;
        }
        let dir_sum = u64_at(&head, 8 + 8 * PARTS);
        if head[8 + 8 * PARTS + 8..].iter().any(|&b| b != 0) {
            return Err(Torn);
        }
        if next.checked_add(8) != Some(total) {
            return Err(Torn);
        }
        if source.read(total - 8, 8)? != END {
            return Err(Torn);
        }
        let dir = source.read(at[DIR], usize::try_from(len[DIR]).map_err(|_| Torn)?)?;
        if checksum(&dir) != dir_sum {
            return Err(Torn);
        }
        let mut r = Reader { bytes: &dir, at: 0 };
        let (generation, base) = (r.next()?, r.next()?);
        let (file_count, section_count, term_count) = (r.small()?, r.small()?, r.small()?);
        let n = r.next()?;
        let mut dirs = Vec::new();
        for _ in 0..n {
            let path = String::from_utf8(r.bytes()?.to_vec()).map_err(|_| Torn)?;
            let kind = u8::try_from(r.next()?).map_err(|_| Torn)?;
            let stamp = match r.next()? {
                0 => None,
                _ => Some(r.stamp()?),
            };
            let listed_at = r.next()? as i64;
            let (first_file, files) = (r.small()?, r.small()?);
            let (sections, bytes) = (r.next()?, r.next()?);
            if u64::from(first_file) + u64::from(files) > u64::from(file_count) || kind > AGENTS {
                return Err(Torn);
            }
            dirs.push(DirEntry {
                path,
                kind,
                stamp,
                listed_at,
                first_file,
                files,
                sections,
                bytes,
            });
        }
        let n = r.next()?;
        let mut scan = Vec::new();
        for _ in 0..n {
            let f = r.small()?;
            if f >= file_count {
                return Err(Torn);
            }
            scan.push(f);
        }
        let mut sums: [Vec<u64>; PARTS - 2] = Default::default();
        let mut blocks: [Blocks; PARTS - 2] = Default::default();
        for p in 0..PARTS - 2 {
            let n = r.next()?;
            if n != len[p + 1].div_ceil(BLOCK as u64) {
                return Err(Torn);
            }
            for _ in 0..n {
                sums[p].push(r.next()?);
            }
            blocks[p] = (0..n).map(|_| OnceLock::new()).collect();
        }
        if !r.done() {
            return Err(Torn);
        }
        let sized = |part: usize, each: usize, n: u32| len[part] == each as u64 * u64::from(n);
        if !sized(FILES, FILE_LEN, file_count)
            || !sized(SECTIONS, SECTION_LEN, section_count)
            || !sized(KEYS, KEY_LEN, section_count)
            || !sized(TERMS, TERM_LEN, term_count)
        {
            return Err(Torn);
        }
        Ok(Segment {
            generation,
            base,
            dirs,
            file_count,
            section_count,
            term_count,
            scan,
            source,
            at,
            len,
            sums,
            blocks,
        })
    }

    /// Block `b` of part `p`, read and checked once.
    fn block(&self, p: usize, b: usize) -> Result<&[u8], Torn> {
        let cell = self.blocks[p - 1].get(b).ok_or(Torn)?;
        cell.get_or_init(|| {
            let start = (b * BLOCK) as u64;
            let len = (self.len[p] - start).min(BLOCK as u64) as usize;
            let bytes = self.source.read(self.at[p] + start, len).ok()?;
            (checksum(&bytes) == self.sums[p - 1][b]).then(|| bytes.into_boxed_slice())
        })
        .as_deref()
        .ok_or(Torn)
    }

    /// Record `i` of `size` bytes of part `p`.
    fn record(&self, p: usize, i: usize, size: usize) -> Result<&[u8], Torn> {
        let at = i.checked_mul(size).ok_or(Torn)?;
        if (at + size) as u64 > self.len[p] {
            return Err(Torn);
        }
        let block = self.block(p, at / BLOCK)?;
        block.get(at % BLOCK..at % BLOCK + size).ok_or(Torn)
    }

    /// `len` bytes at `at` of part `p`, which may straddle blocks.
    fn bytes(&self, p: usize, at: usize, len: usize) -> Result<std::borrow::Cow<'_, [u8]>, Torn> {
        let end = at.checked_add(len).ok_or(Torn)?;
        if end as u64 > self.len[p] {
            return Err(Torn);
        }
        let (first, last) = (at / BLOCK, end.saturating_sub(1) / BLOCK);
        if len == 0 {
            return Ok(std::borrow::Cow::Borrowed(&[]));
        }
        if first == last {
            let b = self.block(p, first)?;
            return Ok(std::borrow::Cow::Borrowed(&b[at % BLOCK..at % BLOCK + len]));
        }
        let mut out = Vec::with_capacity(len);
        for b in first..=last {
            let bytes = self.block(p, b)?;
            let from = if b == first { at % BLOCK } else { 0 };
            let to = if b == last {
                (end - 1) % BLOCK + 1
            } else {
                bytes.len()
            };
            out.extend_from_slice(bytes.get(from..to).ok_or(Torn)?);
        }
        Ok(std::borrow::Cow::Owned(out))
    }

    /// Whether `file` is the file this was read from.
    pub fn same_file(&self, file: &File) -> bool {
        use std::os::unix::fs::MetadataExt;
        match (&self.source, file.metadata()) {
            (Source::File(f), Ok(b)) => f
                .metadata()
                .is_ok_and(|a| (a.dev(), a.ino()) == (b.dev(), b.ino())),
            _ => false,
        }
    }

    /// File `f`.
    pub fn file(&self, f: u32) -> Result<Entry, Torn> {
        if f >= self.file_count {
            return Err(Torn);
        }
        let r = self.record(FILES, f as usize, FILE_LEN)?;
        let stamp = Stamp {
            dev: u64_at(r, 0),
            ino: u64_at(r, 8),
            len: u64_at(r, 16),
            mtime_ns: u64_at(r, 24) as i64,
            ctime_ns: u64_at(r, 32) as i64,
        };
        let (first_section, sections) = (u32_at(r, 48), u32_at(r, 52));
        if u64::from(first_section) + u64::from(sections) > u64::from(self.section_count) {
            return Err(Torn);
        }
        let (off, len) = (u32_at(r, 56) as usize, u32_at(r, 60) as usize);
        let name = self.bytes(NAMES, off, len)?;
        let dir = u32_at(r, 68);
        let d = self.dirs.get(dir as usize).ok_or(Torn)?;
        let name = std::str::from_utf8(&name).map_err(|_| Torn)?;
        Ok(Entry {
            path: format!("{}/{name}", d.path),
            stamp,
            read_at: u64_at(r, 40) as i64,
            first_section,
            sections,
            flags: u32_at(r, 64),
            dir,
        })
    }

    /// File `f`'s first section, its sections, its flags and its
    /// directory, without the rest of its entry.
    pub fn file_brief(&self, f: u32) -> Result<(u32, u32, u32, u32), Torn> {
        if f >= self.file_count {
            return Err(Torn);
        }
        let r = self.record(FILES, f as usize, FILE_LEN)?;
        let (first, n, dir) = (u32_at(r, 48), u32_at(r, 52), u32_at(r, 68));
        if u64::from(first) + u64::from(n) > u64::from(self.section_count)
            || dir as usize >= self.dirs.len()
        {
            return Err(Torn);
        }
        Ok((first, n, u32_at(r, 64), dir))
    }

    /// The name of file `f`, without the rest of its entry.
    pub fn name(&self, f: u32) -> Result<std::borrow::Cow<'_, [u8]>, Torn> {
        if f >= self.file_count {
            return Err(Torn);
        }
        let r = self.record(FILES, f as usize, FILE_LEN)?;
        let (off, len) = (u32_at(r, 56) as usize, u32_at(r, 60) as usize);
        self.bytes(NAMES, off, len)
    }

    /// The file named `name` in directory `d`, by a binary search (a
    /// base's files are sorted by name within their directory).
    pub fn find(&self, d: usize, name: &str) -> Result<Option<u32>, Torn> {
        let dir = &self.dirs[d];
        let (mut lo, mut hi) = (dir.first_file, dir.first_file + dir.files);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match (*self.name(mid)?).cmp(name.as_bytes()) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(Some(mid)),
            }
        }
        Ok(None)
    }

    /// Section `s`: its length and its file.
    pub fn section(&self, s: u32) -> Result<(u32, u32), Torn> {
        if s >= self.section_count {
            return Err(Torn);
        }
        let b = self.record(SECTIONS, s as usize, SECTION_LEN)?;
        let file = u32_at(b, 4);
        if file >= self.file_count {
            return Err(Torn);
        }
        Ok((u32_at(b, 0), file))
    }

    /// Section `s`'s key: its text's (`vectors::key`), 0 when blank.
    pub fn key(&self, s: u32) -> Result<u64, Torn> {
        if s >= self.section_count {
            return Err(Torn);
        }
        Ok(u64_at(self.record(KEYS, s as usize, KEY_LEN)?, 0))
    }

    fn term(&self, i: u32) -> Result<(std::borrow::Cow<'_, [u8]>, Term), Torn> {
        let r = self.record(TERMS, i as usize, TERM_LEN)?;
        let (off, len) = (u32_at(r, 0) as usize, u32_at(r, 4) as usize);
        let text = self.bytes(TEXTS, off, len)?;
        let term = Term {
            at: u64_at(r, 8),
            len: u64_at(r, 16),
            sum: u64_at(r, 24),
        };
        if term
            .at
            .checked_add(term.len)
            .is_none_or(|e| e > self.len[POSTINGS])
        {
            return Err(Torn);
        }
        Ok((text, term))
    }

    /// The words that begin with `key`, each handed to `each` with its
    /// number.
    pub fn beginning(&self, key: &[u8], each: EachWord) -> Result<(), Torn> {
        let (mut lo, mut hi) = (0, self.term_count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match *self.term(mid)?.0 < *key {
                true => lo = mid + 1,
                false => hi = mid,
            }
        }
        let mut last: Option<std::borrow::Cow<[u8]>> = None;
        for i in lo..self.term_count {
            let (text, _) = self.term(i)?;
            if !text.starts_with(key) {
                break;
            }
            // Sorted and distinct, or a lookup could miss a word.
            if last.as_ref().is_some_and(|l| **l >= *text) {
                return Err(Torn);
            }
            each(&text, i)?;
            last = Some(text);
        }
        Ok(())
    }

    /// The sections that hold word `i`, each handed to `each` with the
    /// word's counts in its heading and its body, checked.
    pub fn postings(&self, i: u32, each: &mut dyn FnMut(u32, u32, u32)) -> Result<(), Torn> {
        let (_, term) = self.term(i)?;
        let bytes = self.source.read(
            self.at[POSTINGS] + term.at,
            usize::try_from(term.len).map_err(|_| Torn)?,
        )?;
        self.decode(&bytes, &term, each)
    }

    /// A word's postings `bytes`, checked against its `term`, each
    /// handed to `each`.
    fn decode(
        &self,
        bytes: &[u8],
        term: &Term,
        each: &mut dyn FnMut(u32, u32, u32),
    ) -> Result<(), Torn> {
        if checksum(bytes) != term.sum {
            return Err(Torn);
        }
        let mut r = Reader { bytes, at: 0 };
        let mut section: Option<u64> = None;
        while !r.done() {
            let v = r.next()?;
            let gap = v >> 1;
            let s = match section {
                None => gap,
                Some(last) => last.checked_add(gap).filter(|_| gap > 0).ok_or(Torn)?,
            };
            if s >= u64::from(self.section_count) {
                return Err(Torn);
            }
            section = Some(s);
            let (body, heading) = match v & 1 {
                0 => (1, 0),
                _ => (r.small()?, r.small()?),
            };
            each(s as u32, heading, body);
        }
        Ok(())
    }

    /// The postings of word `i`, read and checked, to be gone through in
    /// order.
    pub fn postings_of(&self, i: u32) -> Result<Postings, Torn> {
        let (_, term) = self.term(i)?;
        let bytes = self.source.read(
            self.at[POSTINGS] + term.at,
            usize::try_from(term.len).map_err(|_| Torn)?,
        )?;
        if checksum(&bytes) != term.sum {
            return Err(Torn);
        }
        Ok(Postings {
            bytes,
            at: 0,
            last: None,
            sections: self.section_count,
        })
    }

    /// Every word and its postings, for a segment merged into another:
    /// the postings part read in one piece, where a read a word was a
    /// system call a word (some 300 at each search that merged a busy
    /// day's log into the delta).
    fn each_term(&self, each: &mut dyn FnMut(&[u8], &[Posting])) -> Result<(), Torn> {
        let all = self.source.read(
            self.at[POSTINGS],
            usize::try_from(self.len[POSTINGS]).map_err(|_| Torn)?,
        )?;
        let mut list = Vec::new();
        for i in 0..self.term_count {
            let (text, term) = self.term(i)?;
            // term() checked it lies within the part.
            let bytes = &all[term.at as usize..(term.at + term.len) as usize];
            list.clear();
            self.decode(bytes, &term, &mut |s, h, b| list.push((s, h, b)))?;
            each(&text, &list);
        }
        Ok(())
    }
}

/// A word's postings, read one at a time: (section, heading's count,
/// body's count).
pub struct Postings {
    bytes: Vec<u8>,
    at: usize,
    last: Option<u64>,
    sections: u32,
}

impl Postings {
    pub fn next(&mut self) -> Result<Option<(u32, u32, u32)>, Torn> {
        let mut r = Reader {
            bytes: &self.bytes,
            at: self.at,
        };
        if r.done() {
            return Ok(None);
        }
        let v = r.next()?;
        let gap = v >> 1;
        let s = match self.last {
            None => gap,
            Some(last) => last.checked_add(gap).filter(|_| gap > 0).ok_or(Torn)?,
        };
        if s >= u64::from(self.sections) {
            return Err(Torn);
        }
        let (body, heading) = match v & 1 {
            0 => (1, 0),
            _ => (r.small()?, r.small()?),
        };
        self.at = r.at;
        self.last = Some(s);
        Ok(Some((s as u32, heading, body)))
    }
}

/// The words of one section being added: (word, heading) pairs.
#[derive(Default)]
struct Pending {
    words: Vec<(u32, bool)>,
}

/// An index being made: directories and files added one by one with the
/// words of their sections.
#[derive(Default)]
pub struct Builder {
    pub dirs: Vec<DirEntry>,
    pub files: Vec<Entry>,
    sections: Vec<(u32, u32, u64)>,
    ids: HashMap<Box<[u8]>, u32>,
    texts: Vec<Box<[u8]>>,
    /// Per word: its postings, encoded as they are added, and the last
    /// section added.
    lists: Vec<(Vec<u8>, Option<u32>)>,
    pending: Pending,
}

impl Builder {
    /// The number of a directory, added when new.
    pub fn dir(&mut self, d: DirEntry) -> u32 {
        match self.dirs.iter().position(|x| x.path == d.path) {
            Some(i) => {
                self.dirs[i] = d;
                i as u32
            }
            None => {
                self.dirs.push(d);
                (self.dirs.len() - 1) as u32
            }
        }
    }

    /// Adds a file of directory `entry.dir` (its sections and words set
    /// here), and `sections` with their lengths, then gives
    /// `each` a way to hand over a word (folded, with whether it is in
    /// the heading) and end a section (with its length).
    pub fn add(&mut self, mut entry: Entry, text: impl FnOnce(&mut Adder)) {
        entry.first_section = self.sections.len() as u32;
        let file = self.files.len() as u32;
        let mut adder = Adder {
            builder: self,
            file,
        };
        text(&mut adder);
        entry.sections = self.sections.len() as u32 - entry.first_section;
        let d = &mut self.dirs[entry.dir as usize];
        if entry.flags & (SCAN | GONE) == 0 {
            d.sections += u64::from(entry.sections);
            d.bytes += entry.stamp.len;
        }
        d.files += 1;
        self.files.push(entry);
    }

    fn end_section(&mut self, file: u32, len: u32, key: u64) {
        let s = self.sections.len() as u32;
        self.sections.push((len, file, key));
        let mut words = std::mem::take(&mut self.pending.words);
        words.sort_unstable();
        let mut i = 0;
        while i < words.len() {
            let id = words[i].0;
            let (mut heading, mut body) = (0u32, 0u32);
            while i < words.len() && words[i].0 == id {
                match words[i].1 {
                    true => heading += 1,
                    false => body += 1,
                }
                i += 1;
            }
            let (list, last) = &mut self.lists[id as usize];
            let gap = u64::from(s - last.unwrap_or(0));
            *last = Some(s);
            if (body, heading) == (1, 0) {
                put(list, gap << 1);
            } else {
                put(list, gap << 1 | 1);
                put(list, u64::from(body));
                put(list, u64::from(heading));
            }
        }
        words.clear();
        self.pending.words = words;
    }

    fn word(&mut self, w: &[u8], heading: bool) {
        let id = match self.ids.get(w) {
            Some(&id) => id,
            None => {
                let id = self.texts.len() as u32;
                self.ids.insert(w.into(), id);
                self.texts.push(w.into());
                self.lists.push((Vec::new(), None));
                id
            }
        };
        self.pending.words.push((id, heading));
    }

    /// Adds the files of `seg` for which `keep` is true, with their
    /// sections and words, under this builder's directories of the same
    /// paths.
    pub fn add_segment(&mut self, seg: &Segment, keep: &[bool]) -> Result<(), Torn> {
        // Old section -> new, for the files kept.
        let mut moved: Vec<u32> = vec![u32::MAX; seg.section_count as usize];
        for (f, &k) in keep.iter().enumerate() {
            if !k {
                continue;
            }
            let mut e = seg.file(f as u32)?;
            let d = &seg.dirs[e.dir as usize];
            e.dir = self.dir_numbered(d);
            let first = self.sections.len() as u32;
            let file = self.files.len() as u32;
            for s in e.first_section..e.first_section + e.sections {
                moved[s as usize] = self.sections.len() as u32;
                self.sections.push((seg.section(s)?.0, file, seg.key(s)?));
            }
            e.first_section = first;
            let dir = &mut self.dirs[e.dir as usize];
            if e.flags & (SCAN | GONE) == 0 {
                dir.sections += u64::from(e.sections);
                dir.bytes += e.stamp.len;
            }
            dir.files += 1;
            self.files.push(e);
        }
        for d in &seg.dirs {
            self.dir_numbered(d);
        }
        let mut result = Ok(());
        seg.each_term(&mut |text, list| {
            for &(s, heading, body) in list {
                let to = moved[s as usize];
                if to == u32::MAX {
                    continue;
                }
                // Added in order of the old sections, which is the new
                // order: a word's list stays sorted.
                self.pending.words.clear();
                let id = match self.ids.get(text) {
                    Some(&id) => id,
                    None => {
                        self.word(text, false);
                        self.pending.words.clear();
                        (self.texts.len() - 1) as u32
                    }
                };
                let (list, last) = &mut self.lists[id as usize];
                if last.is_some_and(|l| l >= to) {
                    result = Err(Torn);
                    return;
                }
                let gap = u64::from(to - last.unwrap_or(0));
                *last = Some(to);
                if (body, heading) == (1, 0) {
                    put(list, gap << 1);
                } else {
                    put(list, gap << 1 | 1);
                    put(list, u64::from(body));
                    put(list, u64::from(heading));
                }
            }
        })?;
        result
    }

    /// The number here of a directory like `d` (its counts left at 0;
    /// its stamp is `d`'s, the later one).
    fn dir_numbered(&mut self, d: &DirEntry) -> u32 {
        match self.dirs.iter().position(|x| x.path == d.path) {
            Some(i) => {
                let x = &mut self.dirs[i];
                (x.kind, x.stamp, x.listed_at) = (d.kind, d.stamp, d.listed_at);
                i as u32
            }
            None => {
                self.dirs.push(DirEntry {
                    first_file: 0,
                    files: 0,
                    sections: 0,
                    bytes: 0,
                    ..d.clone()
                });
                (self.dirs.len() - 1) as u32
            }
        }
    }

    /// Writes the index file to `out`. For [`Segment::find`], the files
    /// must have been added directory by directory, by name.
    pub fn write(mut self, generation: u64, base: u64, out: &mut dyn Write) -> io::Result<()> {
        // A directory's files are its range only when they were added
        // together (a base); a delta is looked up by path.
        for d in &mut self.dirs {
            d.files = 0;
        }
        let mut first = vec![u32::MAX; self.dirs.len()];
        for (i, f) in self.files.iter().enumerate() {
            let d = f.dir as usize;
            if first[d] == u32::MAX {
                first[d] = i as u32;
            }
            self.dirs[d].files += 1;
        }
        for (d, f) in self.dirs.iter_mut().zip(first) {
            d.first_file = if f == u32::MAX { 0 } else { f };
        }
        let mut files = Vec::with_capacity(self.files.len() * FILE_LEN);
        let mut names = Vec::new();
        for f in &self.files {
            let s = f.stamp;
            for n in [s.dev, s.ino, s.len, s.mtime_ns as u64, s.ctime_ns as u64] {
                files.extend_from_slice(&n.to_le_bytes());
            }
            files.extend_from_slice(&(f.read_at as u64).to_le_bytes());
            let name = f.name().as_bytes();
            for n in [
                f.first_section,
                f.sections,
                names.len() as u32,
                name.len() as u32,
                f.flags,
                f.dir,
            ] {
                files.extend_from_slice(&n.to_le_bytes());
            }
            names.extend_from_slice(name);
        }
        let mut sections = Vec::with_capacity(self.sections.len() * SECTION_LEN);
        let mut keys = Vec::with_capacity(self.sections.len() * KEY_LEN);
        for &(len, file, key) in &self.sections {
            sections.extend_from_slice(&len.to_le_bytes());
            sections.extend_from_slice(&file.to_le_bytes());
            keys.extend_from_slice(&key.to_le_bytes());
        }
        let mut by_text: Vec<u32> = (0..self.texts.len() as u32).collect();
        by_text.sort_unstable_by(|&a, &b| self.texts[a as usize].cmp(&self.texts[b as usize]));
        let mut terms = Vec::with_capacity(by_text.len() * TERM_LEN);
        let mut texts = Vec::new();
        let mut postings_len = 0u64;
        for &id in &by_text {
            let text = &self.texts[id as usize];
            let list = &self.lists[id as usize].0;
            terms.extend_from_slice(&(texts.len() as u32).to_le_bytes());
            terms.extend_from_slice(&(text.len() as u32).to_le_bytes());
            terms.extend_from_slice(&postings_len.to_le_bytes());
            terms.extend_from_slice(&(list.len() as u64).to_le_bytes());
            terms.extend_from_slice(&checksum(list).to_le_bytes());
            texts.extend_from_slice(text);
            postings_len += list.len() as u64;
        }
        let mut dir = Vec::new();
        put(&mut dir, generation);
        put(&mut dir, base);
        put(&mut dir, self.files.len() as u64);
        put(&mut dir, self.sections.len() as u64);
        put(&mut dir, self.texts.len() as u64);
        put(&mut dir, self.dirs.len() as u64);
        for d in &self.dirs {
            put_bytes(&mut dir, d.path.as_bytes());
            put(&mut dir, u64::from(d.kind));
            match &d.stamp {
                Some(s) => {
                    put(&mut dir, 1);
                    put_stamp(&mut dir, s);
                }
                None => put(&mut dir, 0),
            }
            put(&mut dir, d.listed_at as u64);
            put(&mut dir, u64::from(d.first_file));
            put(&mut dir, u64::from(d.files));
            put(&mut dir, d.sections);
            put(&mut dir, d.bytes);
        }
        let scan: Vec<usize> = (0..self.files.len())
            .filter(|&f| self.files[f].flags & SCAN != 0)
            .collect();
        put(&mut dir, scan.len() as u64);
        for f in scan {
            put(&mut dir, f as u64);
        }
        for part in [&files, &names, &sections, &keys, &terms, &texts] {
            put(&mut dir, part.len().div_ceil(BLOCK) as u64);
            for block in part.chunks(BLOCK) {
                put(&mut dir, checksum(block));
            }
        }
        let parts: [&[u8]; PARTS - 1] = [&dir, &files, &names, &sections, &keys, &terms, &texts];
        let mut head = Vec::with_capacity(HEAD);
        head.extend_from_slice(MAGIC);
        for p in parts {
            head.extend_from_slice(&(p.len() as u64).to_le_bytes());
        }
        head.extend_from_slice(&postings_len.to_le_bytes());
        head.extend_from_slice(&checksum(&dir).to_le_bytes());
        head.extend_from_slice(&[0; 8 * (PARTS - 2)]);
        out.write_all(&head)?;
        for p in parts {
            out.write_all(p)?;
        }
        for &id in &by_text {
            out.write_all(&self.lists[id as usize].0)?;
        }
        out.write_all(END)
    }

    /// Written to memory and read back: a segment of what was added.
    pub fn into_segment(self) -> Result<Segment, Torn> {
        let mut out = Vec::new();
        self.write(0, 0, &mut out).map_err(|_| Torn)?;
        Segment::from_bytes(out)
    }
}

/// Hands a file's words to its [`Builder`].
pub struct Adder<'a> {
    builder: &'a mut Builder,
    file: u32,
}

impl Adder<'_> {
    pub fn word(&mut self, w: &[u8], heading: bool) {
        self.builder.word(w, heading);
    }

    /// Ends a section of `len` bytes whose text has `key`.
    pub fn end_section(&mut self, len: usize, key: u64) {
        self.builder.end_section(self.file, len as u32, key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stamp(n: u64) -> Stamp {
        Stamp {
            dev: 1,
            ino: n,
            len: 10 * n,
            mtime_ns: -5,
            ctime_ns: 7,
        }
    }

    fn built() -> Vec<u8> {
        let mut b = Builder::default();
        b.dir(DirEntry {
            path: "world".into(),
            kind: WORLD,
            stamp: Some(stamp(9)),
            listed_at: 3,
            first_file: 0,
            files: 0,
            sections: 0,
            bytes: 0,
        });
        for (n, text) in [
            (1, "deploy canary deploy|#canary"),
            (2, "rollback"),
            (3, "canary x"),
        ] {
            let entry = Entry {
                path: format!("world/t{n}.md"),
                stamp: stamp(n),
                read_at: 99,
                first_section: 0,
                sections: 0,
                flags: 0,
                dir: 0,
            };
            b.add(entry, |add| {
                for section in text.split('|') {
                    for w in section.split(' ') {
                        match w.strip_prefix('#') {
                            Some(w) => add.word(w.as_bytes(), true),
                            None => add.word(w.as_bytes(), false),
                        }
                    }
                    add.end_section(section.len(), section.len() as u64);
                }
            });
        }
        let mut out = Vec::new();
        b.write(42, 0, &mut out).unwrap();
        out
    }

    fn read(bytes: &[u8]) -> Result<Segment, Torn> {
        let tmp = tempfile::tempfile().unwrap();
        tmp.write_all_at(bytes, 0).unwrap();
        Segment::read(tmp)
    }

    type Words = Vec<(Vec<u8>, Vec<Posting>)>;

    fn all(seg: &Segment) -> Result<Words, Torn> {
        let mut out = Vec::new();
        let mut ids = Vec::new();
        seg.beginning(b"", &mut |t, i| {
            ids.push((t.to_vec(), i));
            Ok(())
        })?;
        for (t, i) in ids {
            let mut list = Vec::new();
            seg.postings(i, &mut |s, h, b| list.push((s, h, b)))?;
            out.push((t, list));
        }
        for f in 0..seg.file_count {
            seg.file(f)?;
        }
        for s in 0..seg.section_count {
            seg.section(s)?;
            seg.key(s)?;
        }
        Ok(out)
    }

    #[test]
    fn what_is_written_is_read_back() {
        let seg = read(&built()).unwrap();
        assert_eq!((seg.generation, seg.base, seg.file_count), (42, 0, 3));
        assert_eq!(seg.file(1).unwrap().stamp, stamp(2));
        assert_eq!(seg.file(0).unwrap().sections, 2);
        assert_eq!(seg.file(2).unwrap().path, "world/t3.md");
        assert_eq!(seg.find(0, "t2.md").unwrap(), Some(1));
        assert_eq!(seg.find(0, "t4.md").unwrap(), None);
        assert_eq!(seg.dirs[0].sections, 4);
        let words = all(&seg).unwrap();
        let canary = words.iter().find(|(t, _)| t == b"canary").unwrap();
        // Section 0 once in the body, section 1 once in the heading,
        // section 3 (file 3's) once in the body.
        assert_eq!(canary.1, [(0, 0, 1), (1, 1, 0), (3, 0, 1)]);
        let deploy = words.iter().find(|(t, _)| t == b"deploy").unwrap();
        assert_eq!(deploy.1, [(0, 0, 2)]);
        assert_eq!(seg.section(3).unwrap(), (8, 2));
        // The test's keys are the sections' lengths.
        assert_eq!(seg.key(3).unwrap(), 8);
        assert_eq!(seg.key(0).unwrap(), seg.section(0).unwrap().0 as u64);
        assert!(seg.key(4).is_err());
        let mut n = 0;
        seg.beginning(b"c", &mut |_, _| {
            n += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(n, 1);
    }

    #[test]
    fn any_change_of_any_byte_or_length_is_torn() {
        let good = built();
        for cut in 0..good.len() {
            assert!(read(&good[..cut]).is_err(), "cut at {cut}");
        }
        for at in 0..good.len() {
            let mut bad = good.clone();
            bad[at] ^= 0x41;
            let whole = read(&bad).and_then(|seg| all(&seg).map(|_| ()));
            assert!(whole.is_err(), "byte {at}");
            // A merge reads every part too, its postings in one piece.
            let merged = read(&bad)
                .and_then(|seg| Builder::default().add_segment(&seg, &[true, true, true]));
            assert!(merged.is_err(), "byte {at}, merged");
        }
    }

    #[test]
    fn a_segment_merged_into_another_keeps_what_it_is_told() {
        let seg = read(&built()).unwrap();
        let mut b = Builder::default();
        b.add_segment(&seg, &[true, false, true]).unwrap();
        let merged = b.into_segment().unwrap();
        assert_eq!(merged.file_count, 2);
        assert_eq!(merged.file(1).unwrap().path, "world/t3.md");
        let words = all(&merged).unwrap();
        let canary = words.iter().find(|(t, _)| t == b"canary").unwrap();
        assert_eq!(canary.1, [(0, 0, 1), (1, 1, 0), (2, 0, 1)]);
        assert!(words.iter().all(|(t, _)| t != b"rollback"));
        assert_eq!(merged.dirs[0].sections, 3);
    }
}
