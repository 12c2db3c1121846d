//! One index file: the notes files it covers (each with the [`Stamp`] it
//! had when read, and its number of sections), the words they hold, and
//! for each word the files that hold it.
//!
//! ```text
//! "AXENIX01"  dir length  postings length  dir checksum   (8 bytes each)
//! dir:        generation, base, files, words (varints and bytes)
//! postings:   per word, its files as gaps (varints)
//! "AXENIXOK"
//! ```
//!
//! Nothing read from it is trusted: its length must be what the head
//! says, the directory's checksum must hold, and each word's list of files
//! is checked against its own checksum when it is read, so a search reads
//! only the lists of its words, not the whole file. Any mismatch, or a
//! number out of range, is [`Torn`]: the caller rebuilds and never uses
//! what it read.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;

use axe_base::beneath::Stamp;

const MAGIC: &[u8; 8] = b"AXENIX01";
const END: &[u8; 8] = b"AXENIXOK";
const HEAD: usize = 32;

/// An index file that is not whole: truncated, garbage, or of another
/// version.
#[derive(Debug)]
pub struct Torn;

/// One notes file as indexed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Relative to the workspace.
    pub path: String,
    pub stamp: Stamp,
    /// When it was read (before the read), in nanoseconds since the epoch:
    /// a file changed in the same instant as it was read is read again
    /// (see `index`).
    pub read_at: i64,
    /// Its sections, as `scan::count_sections` counts them.
    pub sections: u32,
}

/// A word of the index and where its list of files is.
struct Word {
    text: (usize, usize),
    at: u64,
    len: u32,
    sum: u64,
}

/// An index file, its directory read and checked; lists read on demand.
pub struct Segment {
    pub generation: u64,
    /// For a delta, the generation of the base it goes with; 0 for a base.
    pub base: u64,
    pub files: Vec<Entry>,
    words: Vec<Word>,
    text: Vec<u8>,
    file: File,
    postings_at: u64,
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

/// Reads what [`put`] wrote, every read bounded.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn next(&mut self) -> Result<u64, Torn> {
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

    fn bytes(&mut self) -> Result<(usize, usize), Torn> {
        let len = usize::try_from(self.next()?).map_err(|_| Torn)?;
        let end = self.at.checked_add(len).ok_or(Torn)?;
        if end > self.bytes.len() {
            return Err(Torn);
        }
        let start = self.at;
        self.at = end;
        Ok((start, end))
    }

    fn signed(&mut self) -> Result<i64, Torn> {
        Ok(self.next()? as i64)
    }

    fn small(&mut self) -> Result<u32, Torn> {
        u32::try_from(self.next()?).map_err(|_| Torn)
    }
}

impl Segment {
    /// The index file `file`, checked; [`Torn`] when it is not whole.
    pub fn read(file: File) -> Result<Segment, Torn> {
        let total = file.metadata().map_err(|_| Torn)?.len();
        let mut head = [0u8; HEAD];
        file.read_exact_at(&mut head, 0).map_err(|_| Torn)?;
        let number = |i: usize| {
            let mut b = [0; 8];
            b.copy_from_slice(&head[i * 8..i * 8 + 8]);
            u64::from_le_bytes(b)
        };
        if &head[..8] != MAGIC {
            return Err(Torn);
        }
        let (dir_len, postings_len, sum) = (number(1), number(2), number(3));
        let want = (HEAD as u64 + 8)
            .checked_add(dir_len)
            .and_then(|n| n.checked_add(postings_len))
            .ok_or(Torn)?;
        if want != total {
            return Err(Torn);
        }
        let mut end = [0u8; 8];
        file.read_exact_at(&mut end, total - 8).map_err(|_| Torn)?;
        if &end != END {
            return Err(Torn);
        }
        let mut dir = vec![0u8; usize::try_from(dir_len).map_err(|_| Torn)?];
        file.read_exact_at(&mut dir, HEAD as u64)
            .map_err(|_| Torn)?;
        if checksum(&dir) != sum {
            return Err(Torn);
        }
        let mut r = Reader { bytes: &dir, at: 0 };
        let (generation, base) = (r.next()?, r.next()?);
        let n = r.next()?;
        let mut files = Vec::new();
        for _ in 0..n {
            let (s, e) = r.bytes()?;
            let path = String::from_utf8(dir[s..e].to_vec()).map_err(|_| Torn)?;
            let stamp = Stamp {
                dev: r.next()?,
                ino: r.next()?,
                len: r.next()?,
                mtime_ns: r.signed()?,
                ctime_ns: r.signed()?,
            };
            let (read_at, sections) = (r.signed()?, r.small()?);
            files.push(Entry {
                path,
                stamp,
                read_at,
                sections,
            });
        }
        let n = r.next()?;
        let mut words = Vec::new();
        let mut last: Option<(usize, usize)> = None;
        for _ in 0..n {
            let text = r.bytes()?;
            // Sorted and distinct, or a lookup could miss a word.
            if text.0 == text.1 || last.is_some_and(|(s, e)| dir[s..e] >= dir[text.0..text.1]) {
                return Err(Torn);
            }
            last = Some(text);
            let (at, len, sum) = (r.next()?, r.small()?, r.next()?);
            if at
                .checked_add(u64::from(len))
                .is_none_or(|e| e > postings_len)
            {
                return Err(Torn);
            }
            words.push(Word { text, at, len, sum });
        }
        if r.at != dir.len() {
            return Err(Torn);
        }
        Ok(Segment {
            generation,
            base,
            files,
            words,
            text: dir,
            file,
            postings_at: HEAD as u64 + dir_len,
        })
    }

    /// Whether `file` is the file this was read from.
    pub fn same_file(&self, file: &File) -> bool {
        use std::os::unix::fs::MetadataExt;
        match (self.file.metadata(), file.metadata()) {
            (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
            _ => false,
        }
    }

    pub fn word(&self, i: usize) -> &[u8] {
        let (s, e) = self.words[i].text;
        &self.text[s..e]
    }

    pub fn word_count(&self) -> usize {
        self.words.len()
    }

    /// The words that begin with `key`, as a range of their numbers.
    pub fn beginning(&self, key: &[u8]) -> std::ops::Range<usize> {
        let start = self.words.partition_point(|w| {
            let (s, e) = w.text;
            &self.text[s..e] < key
        });
        let mut end = start;
        while end < self.words.len() && self.word(end).starts_with(key) {
            end += 1;
        }
        start..end
    }

    /// The files that hold word `i`, by their number in `files`, checked.
    pub fn files_of(&self, i: usize, out: &mut Vec<u32>) -> Result<(), Torn> {
        let w = &self.words[i];
        let mut bytes = vec![0u8; w.len as usize];
        self.file
            .read_exact_at(&mut bytes, self.postings_at + w.at)
            .map_err(|_| Torn)?;
        if checksum(&bytes) != w.sum {
            return Err(Torn);
        }
        let mut r = Reader {
            bytes: &bytes,
            at: 0,
        };
        let mut file = 0u64;
        let mut first = true;
        while r.at < bytes.len() {
            let gap = r.next()?;
            file = match first {
                true => gap,
                false => file.checked_add(gap).filter(|_| gap > 0).ok_or(Torn)?,
            };
            first = false;
            if file >= self.files.len() as u64 {
                return Err(Torn);
            }
            out.push(file as u32);
        }
        Ok(())
    }
}

/// An index being made: files added one by one with their words.
#[derive(Default)]
pub struct Builder {
    pub files: Vec<Entry>,
    words: HashMap<Box<[u8]>, Vec<u32>>,
}

impl Builder {
    /// Adds a file; `each` hands its words (folded, repeats allowed) to
    /// the function it is given.
    pub fn add(&mut self, entry: Entry, each: impl FnOnce(&mut dyn FnMut(&[u8]))) {
        let id = self.files.len() as u32;
        self.files.push(entry);
        let words = &mut self.words;
        each(&mut |w: &[u8]| match words.get_mut(w) {
            Some(list) => {
                if list.last() != Some(&id) {
                    list.push(id);
                }
            }
            None => {
                words.insert(w.into(), vec![id]);
            }
        });
    }

    /// Adds the files of `seg` for which `keep` is true, with their words.
    pub fn add_segment(&mut self, seg: &Segment, keep: &[bool]) -> Result<(), Torn> {
        let mut id = vec![u32::MAX; seg.files.len()];
        for (i, entry) in seg.files.iter().enumerate() {
            if keep[i] {
                id[i] = self.files.len() as u32;
                self.files.push(entry.clone());
            }
        }
        let mut list = Vec::new();
        for w in 0..seg.word_count() {
            list.clear();
            seg.files_of(w, &mut list)?;
            let kept = list
                .iter()
                .map(|&f| id[f as usize])
                .filter(|&f| f != u32::MAX);
            let mut kept = kept.peekable();
            if kept.peek().is_some() {
                self.words
                    .entry(seg.word(w).into())
                    .or_default()
                    .extend(kept);
            }
        }
        Ok(())
    }

    /// Adds the files of `other`, with their words.
    pub fn append(&mut self, other: Builder) {
        let shift = self.files.len() as u32;
        self.files.extend(other.files);
        for (w, files) in other.words {
            self.words
                .entry(w)
                .or_default()
                .extend(files.into_iter().map(|f| f + shift));
        }
    }

    /// The words and each one's files, for a search before this is saved.
    pub fn words(&self) -> impl Iterator<Item = (&[u8], &[u32])> {
        self.words.iter().map(|(w, f)| (&w[..], &f[..]))
    }

    /// Writes the index file to `out`.
    pub fn write(&self, generation: u64, base: u64, out: &mut dyn Write) -> io::Result<()> {
        let mut dir = Vec::new();
        put(&mut dir, generation);
        put(&mut dir, base);
        put(&mut dir, self.files.len() as u64);
        for f in &self.files {
            put_bytes(&mut dir, f.path.as_bytes());
            let s = f.stamp;
            for n in [s.dev, s.ino, s.len, s.mtime_ns as u64, s.ctime_ns as u64] {
                put(&mut dir, n);
            }
            put(&mut dir, f.read_at as u64);
            put(&mut dir, u64::from(f.sections));
        }
        let mut words: Vec<(&[u8], &Vec<u32>)> =
            self.words.iter().map(|(w, f)| (&w[..], f)).collect();
        words.sort_unstable_by(|a, b| a.0.cmp(b.0));
        put(&mut dir, words.len() as u64);
        let mut postings = Vec::new();
        let mut list = Vec::new();
        for (word, files) in words {
            list.clear();
            let mut last = None;
            // Lists merged from two segments may be out of order.
            let mut sorted = files.clone();
            sorted.sort_unstable();
            sorted.dedup();
            for &f in &sorted {
                put(&mut list, u64::from(f - last.unwrap_or(0)));
                last = Some(f);
            }
            put_bytes(&mut dir, word);
            put(&mut dir, postings.len() as u64);
            put(&mut dir, list.len() as u64);
            put(&mut dir, checksum(&list));
            postings.extend_from_slice(&list);
        }
        let mut head = Vec::with_capacity(HEAD);
        head.extend_from_slice(MAGIC);
        head.extend_from_slice(&(dir.len() as u64).to_le_bytes());
        head.extend_from_slice(&(postings.len() as u64).to_le_bytes());
        head.extend_from_slice(&checksum(&dir).to_le_bytes());
        out.write_all(&head)?;
        out.write_all(&dir)?;
        out.write_all(&postings)?;
        out.write_all(END)
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
        for (n, text) in [
            (1, "deploy canary deploy"),
            (2, "rollback"),
            (3, "canary x"),
        ] {
            let entry = Entry {
                path: format!("world/t{n}.md"),
                stamp: stamp(n),
                read_at: 99,
                sections: n as u32,
            };
            b.add(entry, |each| {
                text.split(' ').for_each(|w| each(w.as_bytes()))
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

    #[test]
    fn what_is_written_is_read_back() {
        let seg = read(&built()).unwrap();
        assert_eq!((seg.generation, seg.base, seg.files.len()), (42, 0, 3));
        assert_eq!(seg.files[1].stamp, stamp(2));
        assert_eq!(seg.files[2].sections, 3);
        let canary = seg.beginning(b"canary");
        assert_eq!(canary.len(), 1);
        let mut files = Vec::new();
        seg.files_of(canary.start, &mut files).unwrap();
        assert_eq!(files, [0, 2]);
        assert_eq!(seg.beginning(b"c").len(), 1);
        assert_eq!(seg.beginning(b"").len(), 4);
        assert_eq!(seg.beginning(b"zz").len(), 0);
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
            // A flipped byte in a word's list shows when the list is read.
            let whole = read(&bad).and_then(|seg| {
                let mut files = Vec::new();
                (0..seg.word_count()).try_for_each(|w| seg.files_of(w, &mut files))
            });
            assert!(whole.is_err(), "byte {at}");
        }
    }
}
