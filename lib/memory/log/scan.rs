//! Finding entry headers (`## ` at the start of a line) in a log.
//!
//! Both directions treat the file as if a newline stood before its first
//! byte, so a header at offset 0 and one after a `\n` are found by the same
//! search for `\n## `. Forward counting streams the file through a fixed
//! buffer; the backward search reads blocks from the end and stops as soon as
//! it has what it needs, so its cost follows what is asked for, not the size
//! of the file.

use std::fs::File;
use std::io::{self, Read};

use memchr::memmem::FinderRev;

/// A newline followed by [`super::entry::HEADER`].
const NEEDLE: &[u8] = b"\n## ";
/// Bytes of one match that can hang over a block boundary.
const OVERLAP: usize = NEEDLE.len() - 1;
/// Forward reads: large enough that the syscalls vanish next to the search.
const FORWARD_BLOCK: usize = 256 * 1024;
/// Backward reads: a few typical entries, so `--last 10` reads one block.
const BACKWARD_BLOCK: usize = 64 * 1024;

/// How many lines of `reader` start with `## `.
///
/// This is `axe-mem-count`'s whole cost, so it searches for the one rare
/// byte `#` (a single-byte SIMD search, faster than the four-byte needle
/// whose newline and space are common) and looks at its neighbours.
pub fn count_headers(mut reader: impl Read) -> io::Result<u64> {
    let mut buf = vec![0u8; FORWARD_BLOCK + OVERLAP];
    // The virtual newline before the first byte.
    buf[0] = b'\n';
    let mut kept = 1;
    let mut count = 0u64;
    loop {
        let n = match reader.read(&mut buf[kept..]) {
            Ok(0) => return Ok(count),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let hay = &buf[..kept + n];
        // A `#` whose match would run past the end is counted in the next
        // round, when it is among the carried-over bytes; one at index 0 of
        // those was already looked at, so nothing is counted twice.
        count += memchr::memchr_iter(b'#', hay)
            .filter(|&i| {
                i >= 1 && i + 2 < hay.len() && hay[i - 1] == b'\n' && &hay[i + 1..i + 3] == b"# "
            })
            .count() as u64;
        let filled = hay.len();
        kept = OVERLAP.min(filled);
        buf.copy_within(filled - kept..filled, 0);
    }
}

/// [`count_headers`] for a log already in memory.
pub fn count_in(bytes: &[u8]) -> u64 {
    u64::from(bytes.starts_with(b"## ")) + memchr::memmem::find_iter(bytes, b"\n## ").count() as u64
}

/// The entries of a log (or part of one) in memory, in file order: each
/// from its header to the next. Text before the first header is not an
/// entry.
pub fn entries(bytes: &[u8]) -> Vec<&[u8]> {
    let mut starts: Vec<usize> = memchr::memmem::find_iter(bytes, NEEDLE)
        .map(|i| i + 1)
        .collect();
    if bytes.starts_with(&NEEDLE[1..]) {
        starts.insert(0, 0);
    }
    let ends = starts.iter().skip(1).copied().chain([bytes.len()]);
    starts
        .iter()
        .zip(ends)
        .map(|(&s, e)| &bytes[s..e])
        .collect()
}

/// The offsets of the last `n` headers among the first `len` bytes of
/// `file`, latest first. Fewer are returned when the file has fewer.
pub fn last_headers(file: &File, len: u64, n: usize) -> io::Result<Vec<u64>> {
    let finder = FinderRev::new(NEEDLE);
    let mut found = Vec::with_capacity(n.min(1024));
    // One extra byte in front for the virtual newline, and room behind for
    // the start of the block after this one.
    let mut buf = vec![0u8; 1 + BACKWARD_BLOCK + OVERLAP];
    let mut end = len;
    let mut next = [0u8; OVERLAP];
    let mut next_len = 0;
    while end > 0 && found.len() < n {
        let start = end.saturating_sub(BACKWARD_BLOCK as u64);
        let block = (end - start) as usize;
        // Where file offset `start` lands in `buf`: after the virtual
        // newline for the first block of the file, at 1 otherwise too, so
        // indexing is the same; byte 0 is only searched at the file start.
        buf[0] = b'\n';
        read_exact_at(file, &mut buf[1..1 + block], start)?;
        buf[1 + block..1 + block + next_len].copy_from_slice(&next[..next_len]);
        let from = if start == 0 { 0 } else { 1 };
        let hay = &buf[from..1 + block + next_len];
        for i in finder.rfind_iter(hay) {
            // `i + from` is the index in `buf` of the newline; the header
            // starts one byte later, at file offset `start + i + from`.
            found.push(start + (i + from) as u64);
            if found.len() == n {
                break;
            }
        }
        next_len = OVERLAP.min(block);
        next[..next_len].copy_from_slice(&buf[1..1 + next_len]);
        end = start;
    }
    Ok(found)
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(windows)]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
    use std::os::windows::fs::FileExt;
    while !buf.is_empty() {
        match file.seek_read(buf, offset) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Every header offset, found the slow obvious way.
    fn naive(data: &[u8]) -> Vec<u64> {
        let mut out = Vec::new();
        let mut at = 0;
        for line in data.split_inclusive(|&b| b == b'\n') {
            if line.starts_with(b"## ") {
                out.push(at as u64);
            }
            at += line.len();
        }
        out
    }

    fn file_with(data: &[u8]) -> (tempfile::NamedTempFile, File) {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(data).unwrap();
        let file = File::open(f.path()).unwrap();
        (f, file)
    }

    fn check(data: &[u8]) {
        let expected = naive(data);
        let ends = expected
            .iter()
            .skip(1)
            .map(|&e| e as usize)
            .chain([data.len()]);
        let split: Vec<&[u8]> = expected
            .iter()
            .zip(ends)
            .map(|(&s, e)| &data[s as usize..e])
            .collect();
        assert_eq!(entries(data), split);
        assert_eq!(count_headers(data).unwrap(), expected.len() as u64);
        assert_eq!(count_in(data), expected.len() as u64);
        let (_keep, file) = file_with(data);
        for n in [0, 1, 2, 3, expected.len(), expected.len() + 1] {
            let got = last_headers(&file, data.len() as u64, n).unwrap();
            let want: Vec<u64> = expected.iter().rev().take(n).copied().collect();
            assert_eq!(got, want, "n = {n}");
        }
    }

    #[test]
    fn small_cases() {
        check(b"");
        check(b"## a");
        check(b"## a\n");
        check(b"x## a\n## b\n");
        check(b"pre\n\n## a\nbody\n\n## b\n## c\n#\n##\n## ");
        check(b"\n## \n## \n## ");
        check(b"no headers at all\n");
    }

    #[test]
    fn headers_across_block_boundaries() {
        // Put a header at every position around both block sizes.
        for block in [BACKWARD_BLOCK, FORWARD_BLOCK] {
            for shift in 0..6 {
                let mut data = vec![b'x'; block - 3 + shift];
                data.extend_from_slice(b"\n## one\nbody\n");
                data.extend(vec![b'y'; block]);
                data.extend_from_slice(b"\n## two\n");
                check(&data);
            }
        }
    }

    #[test]
    fn many_entries_spanning_many_blocks() {
        let mut data = b"preamble\n".to_vec();
        for i in 0..20_000 {
            data.extend_from_slice(format!("## {i}\n**Task:** t\n**Result:** r\n\n").as_bytes());
        }
        check(&data);
    }

    #[test]
    fn only_the_first_len_bytes_are_searched() {
        let data = b"## a\n## b\n## c\n";
        let (_keep, file) = file_with(data);
        assert_eq!(last_headers(&file, 10, 5).unwrap(), vec![5, 0]);
    }
}
