//! The vectors of the base index's sections, one row per section in the
//! base's order: what lets a search by meaning score a gigabyte of notes
//! without a lookup per section. Row `s` is section `s` of the base it
//! names (by generation), or empty; a row is used only when its key is
//! the section's key in the index, so a row of another text is never
//! scored.
//!
//! ```text
//! "axe-column 1\n\0\0\0", the model's id (16 bytes), the base's
//! generation, the dimension, the rows (8 bytes each)
//! rows:   the text's key (8 bytes; 0: empty), the scale (f32), and the
//!         vector in bytes (i8, `dim` of them): value = byte * scale
//! sums:   per block of ROWS rows, its checksum (8 bytes)
//! the checksum of the head and the sums (8 bytes)
//! ```
//!
//! Why one byte a number: a search reads every row, and at a gigabyte of
//! notes (1.1 million sections) f32 rows are 1.7 GB against 434 MB; on
//! the judged set (bench/RESULTS.md) the hybrid's recall is unchanged in
//! every category and the vector mode's moves by one question. The
//! column is written
//! whole (a temp file renamed over the old), when the base is built again
//! or when enough vectors wait in the pool (`vectors`); a block found
//! torn leaves its rows empty (embedded again), never trusted.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;

const MAGIC: &[u8; 16] = b"axe-column 1\n\0\0\0";
const HEAD: usize = 16 + 16 + 8 + 8 + 8;
/// Rows a checksum covers: about 100 KB at 384 dimensions.
const ROWS: usize = 256;

/// A row's bytes for `dim` dimensions.
fn row_len(dim: usize) -> usize {
    8 + 4 + dim
}

/// The checksum of `bytes`: four lanes of the index's (`segment::checksum`)
/// mixing, so that a search checking 440 MB of rows is not held up by one
/// chain of multiplies.
pub fn checksum(bytes: &[u8]) -> u64 {
    const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    let mut lanes = [
        (bytes.len() as u64).wrapping_mul(K) ^ 0x9e37_79b9_7f4a_7c15,
        1,
        2,
        3,
    ];
    let mut chunks = bytes.chunks_exact(32);
    for chunk in &mut chunks {
        for (lane, word) in lanes.iter_mut().zip(chunk.chunks_exact(8)) {
            let mut w = [0; 8];
            w.copy_from_slice(word);
            *lane = (lane.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
        }
    }
    let mut h = lanes[0];
    for lane in &lanes[1..] {
        h = (h.rotate_left(5) ^ lane).wrapping_mul(K);
    }
    h ^ super::segment::checksum(chunks.remainder())
}

/// Quantizes a vector to bytes: its scale and values.
pub fn quantize(v: &[f32], out: &mut Vec<u8>) -> f32 {
    let max = v.iter().fold(0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 { max / 127.0 } else { 0.0 };
    for &x in v {
        let q = if scale > 0.0 {
            (x / scale).round()
        } else {
            0.0
        };
        out.push(q.clamp(-127.0, 127.0) as i8 as u8);
    }
    scale
}

/// A query made ready for [`dot`]: its numbers as i16, and their scale.
pub struct Query {
    values: Vec<i16>,
    scale: f32,
}

impl Query {
    /// At most 2^14 a number, so that 384 products of it with a byte
    /// (at most 127) sum within an i32.
    pub fn new(q: &[f32]) -> Query {
        let max = q.iter().fold(0f32, |m, x| m.max(x.abs()));
        let scale = if max > 0.0 { max / 16383.0 } else { 1.0 };
        Query {
            values: q.iter().map(|&x| (x / scale).round() as i16).collect(),
            scale,
        }
    }
}

/// The dot product of the query with a row's bytes of `scale`: in
/// integers, which the baseline x86-64 vectorizes (`pmaddwd`) where f32
/// from bytes it does not (a search of 1.1 million rows went from 0.30
/// to 0.20 s with this and `meaning::Best`'s shortcut); the query's
/// rounding moves a cosine by less than 1e-4.
pub fn dot(q: &Query, bytes: &[u8], scale: f32) -> f32 {
    let sum: i32 = q
        .values
        .iter()
        .zip(bytes)
        .map(|(&a, &b)| i32::from(a) * i32::from(b as i8))
        .sum();
    sum as f32 * q.scale * scale
}

/// A column opened for reading: its head checked, its rows read a block
/// at a time as asked for, each block checked once.
pub struct Column {
    file: File,
    pub generation: u64,
    pub rows: usize,
    dim: usize,
    sums: Vec<u64>,
    /// The block in `bytes`, if any, and whether it was whole.
    block: Option<(usize, bool)>,
    bytes: Vec<u8>,
    /// A block was found torn: the column should be written again.
    pub torn: bool,
}

impl Column {
    /// The column in `file` of model `id` with `dim` dimensions, if its
    /// head and sums are whole.
    pub fn open(file: File, id: &[u8; 16], dim: usize) -> Option<Column> {
        let len = file.metadata().ok()?.len();
        let mut head = [0u8; HEAD];
        file.read_exact_at(&mut head, 0).ok()?;
        if &head[..16] != MAGIC || &head[16..32] != id {
            return None;
        }
        let number = |at: usize| u64::from_le_bytes(head[at..at + 8].try_into().unwrap_or([0; 8]));
        let (generation, d, rows) = (number(32), number(40), number(48));
        if d != dim as u64 {
            return None;
        }
        let rows = usize::try_from(rows).ok()?;
        let blocks = rows.div_ceil(ROWS);
        // The length is checked before anything is allocated by it.
        let body = rows.checked_mul(row_len(dim))?;
        let want = HEAD
            .checked_add(body)?
            .checked_add(blocks.checked_mul(8)?)?
            + 8;
        if want as u64 != len {
            return None;
        }
        let mut tail = vec![0u8; blocks * 8 + 8];
        file.read_exact_at(&mut tail, (HEAD + body) as u64).ok()?;
        let (sums_bytes, sum) = tail.split_at(blocks * 8);
        let mut whole = head.to_vec();
        whole.extend_from_slice(sums_bytes);
        if checksum(&whole).to_le_bytes() != sum {
            return None;
        }
        let sums = sums_bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect();
        Some(Column {
            file,
            generation,
            rows,
            dim,
            sums,
            block: None,
            bytes: Vec::new(),
            torn: false,
        })
    }

    /// Row `r`: its key, scale and bytes; None when past the end or in a
    /// torn block. Cheapest asked for in order.
    pub fn row(&mut self, r: usize) -> Option<(u64, f32, &[u8])> {
        if r >= self.rows {
            return None;
        }
        let b = r / ROWS;
        if self.block.map(|(at, _)| at) != Some(b) {
            let len = row_len(self.dim);
            let n = ROWS.min(self.rows - b * ROWS);
            self.bytes.resize(n * len, 0);
            let whole = self
                .file
                .read_exact_at(&mut self.bytes, (HEAD + b * ROWS * len) as u64)
                .is_ok()
                && checksum(&self.bytes) == self.sums[b];
            self.torn |= !whole;
            self.block = Some((b, whole));
        }
        if self.block != Some((b, true)) {
            return None;
        }
        let len = row_len(self.dim);
        let at = (r - b * ROWS) * len;
        let row = &self.bytes[at..at + len];
        let key = u64::from_le_bytes(row[..8].try_into().ok()?);
        let scale = f32::from_le_bytes(row[8..12].try_into().ok()?);
        Some((key, scale, &row[12..]))
    }
}

/// Writes a column of `rows` rows to `out`: `row(r, buf)` puts row `r`'s
/// bytes (as [`Column::row`] gives them: key, scale, values) in `buf`, or
/// nothing for an empty row.
pub fn write(
    out: &mut dyn Write,
    id: &[u8; 16],
    generation: u64,
    dim: usize,
    rows: usize,
    row: &mut dyn FnMut(usize, &mut Vec<u8>),
) -> io::Result<()> {
    let len = row_len(dim);
    let mut head = Vec::with_capacity(HEAD);
    head.extend_from_slice(MAGIC);
    head.extend_from_slice(id);
    for n in [generation, dim as u64, rows as u64] {
        head.extend_from_slice(&n.to_le_bytes());
    }
    out.write_all(&head)?;
    let mut sums = Vec::new();
    let mut block = Vec::with_capacity(ROWS * len);
    for start in (0..rows).step_by(ROWS) {
        block.clear();
        for r in start..rows.min(start + ROWS) {
            let at = block.len();
            row(r, &mut block);
            // An empty row, or one not of this length, is zeros.
            if block.len() != at + len {
                block.truncate(at);
                block.resize(at + len, 0);
            }
        }
        sums.extend_from_slice(&checksum(&block).to_le_bytes());
        out.write_all(&block)?;
    }
    out.write_all(&sums)?;
    head.extend_from_slice(&sums);
    out.write_all(&checksum(&head).to_le_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(rows: usize) -> Vec<u8> {
        let mut out = Vec::new();
        write(&mut out, b"0123456789abcdef", 7, 3, rows, &mut |r, buf| {
            if r % 3 != 1 {
                buf.extend_from_slice(&(r as u64 + 1).to_le_bytes());
                let scale = quantize(&[r as f32, -1.0, 0.5], &mut Vec::new());
                buf.extend_from_slice(&scale.to_le_bytes());
                quantize(&[r as f32, -1.0, 0.5], buf);
            }
        })
        .unwrap();
        out
    }

    fn open(bytes: &[u8]) -> Option<Column> {
        let file = tempfile::tempfile().unwrap();
        file.write_all_at(bytes, 0).unwrap();
        Column::open(file, b"0123456789abcdef", 3)
    }

    #[test]
    fn rows_written_are_read_back_and_a_torn_block_is_empty() {
        let bytes = column(600);
        let mut c = open(&bytes).unwrap();
        assert_eq!((c.generation, c.rows), (7, 600));
        for r in [0, 5, 255, 257, 599] {
            let (key, scale, v) = c.row(r).unwrap();
            assert_eq!(key, r as u64 + 1);
            let back = dot(&Query::new(&[1.0, 0.0, 0.0]), v, scale);
            assert!(
                (back - r as f32).abs() <= r as f32 / 100.0 + 0.01,
                "{back} {r}"
            );
        }
        assert_eq!(c.row(1).unwrap().0, 0);
        assert!(c.row(600).is_none());
        assert!(!c.torn);
        // Another model, dimension, or any byte of the head or sums.
        let file = tempfile::tempfile().unwrap();
        file.write_all_at(&bytes, 0).unwrap();
        assert!(Column::open(file, b"another-model-id", 3).is_none());
        for at in [20, 33, 41, 49, bytes.len() - 20, bytes.len() - 1] {
            let mut b = bytes.clone();
            b[at] ^= 1;
            assert!(open(&b).is_none(), "{at}");
        }
        assert!(open(&bytes[..bytes.len() - 1]).is_none());
        // A row's byte: only its block is lost.
        let mut b = bytes.clone();
        b[HEAD + 300 * row_len(3) + 9] ^= 1;
        let mut c = open(&b).unwrap();
        assert!(c.row(300).is_none() && c.row(256).is_none());
        assert!(c.torn);
        assert_eq!(c.row(0).unwrap().0, 1);
        assert_eq!(c.row(599).unwrap().0, 600);
        // A count of rows that would allocate without bound.
        let mut huge = bytes.clone();
        huge[48..56].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(open(&huge).is_none());
    }

    #[test]
    fn a_byte_vector_keeps_the_cosine() {
        let a: Vec<f32> = (0..384)
            .map(|i| ((i * 37 % 101) as f32 - 50.0) / 400.0)
            .collect();
        let b: Vec<f32> = (0..384)
            .map(|i| ((i * 53 % 97) as f32 - 48.0) / 380.0)
            .collect();
        let exact: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let mut bytes = Vec::new();
        let scale = quantize(&b, &mut bytes);
        assert!((dot(&Query::new(&a), &bytes, scale) - exact).abs() < 0.01 * exact.abs().max(0.1));
    }
}
