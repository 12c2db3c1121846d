//! The safetensors format: an 8-byte little-endian header length, a JSON
//! header naming each tensor's dtype, shape and byte range, then the
//! bytes. Every number in the header is checked against the file's own
//! length before anything is allocated from it.

use std::collections::HashMap;

use serde::Deserialize;

/// The header's longest accepted length: real ones are a few kB.
const MAX_HEADER: u64 = 16 << 20;

#[derive(Deserialize)]
struct Entry {
    dtype: String,
    shape: Vec<u64>,
    data_offsets: [u64; 2],
}

/// A parsed file: tensors by name, over the file's bytes.
pub struct SafeTensors<'a> {
    data: &'a [u8],
    entries: HashMap<String, Entry>,
}

impl<'a> SafeTensors<'a> {
    /// Parses `bytes`, the whole file; the error says what is wrong.
    pub fn parse(bytes: &'a [u8]) -> Result<SafeTensors<'a>, String> {
        let Some((len, rest)) = bytes.split_first_chunk::<8>() else {
            return Err("shorter than a safetensors header".into());
        };
        let len = u64::from_le_bytes(*len);
        if len > MAX_HEADER || len > rest.len() as u64 {
            return Err(format!(
                "bad header: its length ({len} bytes) is past the file's end or over 16 MiB"
            ));
        }
        let (header, data) = rest.split_at(len as usize);
        let raw: HashMap<String, serde_json::Value> = serde_json::from_slice(header)
            .map_err(|e| format!("bad header: not a JSON object of tensors ({e})"))?;
        let mut entries = HashMap::with_capacity(raw.len());
        for (name, value) in raw {
            if name == "__metadata__" {
                continue;
            }
            let entry: Entry = serde_json::from_value(value)
                .map_err(|e| format!("bad header: tensor {name}: {e}"))?;
            let [start, end] = entry.data_offsets;
            if start > end || end > data.len() as u64 {
                return Err(format!(
                    "bad header: tensor {name}'s bytes {start}..{end} are outside the file's {} bytes of data",
                    data.len()
                ));
            }
            entries.insert(name, entry);
        }
        Ok(SafeTensors { data, entries })
    }

    /// The tensor `name` as f32s, checked to have `shape`. F16 and BF16
    /// are widened; other dtypes are refused.
    pub fn f32(&self, name: &str, shape: &[usize]) -> Result<Vec<f32>, String> {
        let entry = self
            .entries
            .get(name)
            .ok_or_else(|| format!("no tensor {name}"))?;
        if entry.shape.len() != shape.len()
            || entry.shape.iter().zip(shape).any(|(&a, &b)| a != b as u64)
        {
            return Err(format!(
                "tensor {name} has shape {:?}, expected {shape:?}",
                entry.shape
            ));
        }
        let count: usize = shape.iter().product();
        let width = match entry.dtype.as_str() {
            "F32" => 4,
            "F16" | "BF16" => 2,
            other => {
                return Err(format!(
                    "tensor {name} is {other}; F32, F16 or BF16 expected"
                ));
            }
        };
        let [start, end] = entry.data_offsets;
        // The shape was checked against the config, the range against the
        // file: the two must now agree.
        if (end - start) != (count as u64).saturating_mul(width) {
            return Err(format!(
                "tensor {name}: {} bytes for {count} {} values",
                end - start,
                entry.dtype
            ));
        }
        let bytes = &self.data[start as usize..end as usize];
        Ok(match entry.dtype.as_str() {
            "F32" => bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
            "BF16" => bytes
                .chunks_exact(2)
                .map(|b| f32::from_bits(u32::from(u16::from_le_bytes([b[0], b[1]])) << 16))
                .collect(),
            _ => bytes
                .chunks_exact(2)
                .map(|b| f16_to_f32(u16::from_le_bytes([b[0], b[1]])))
                .collect(),
        })
    }

    /// Whether a tensor of that name is present.
    pub fn has(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }
}

/// IEEE half to single precision, subnormals and infinities included.
fn f16_to_f32(h: u16) -> f32 {
    let sign = u32::from(h >> 15) << 31;
    let exp = u32::from((h >> 10) & 0x1f);
    let frac = u32::from(h & 0x3ff);
    let bits = match (exp, frac) {
        (0, 0) => sign,
        (0, _) => {
            // Subnormal: value = frac * 2^-24.
            let v = frac as f32 * f32::powi(2.0, -24);
            return if sign != 0 { -v } else { v };
        }
        (0x1f, _) => sign | 0x7f80_0000 | (frac << 13),
        _ => sign | ((exp + 112) << 23) | (frac << 13),
    };
    f32::from_bits(bits)
}

/// A safetensors file of the given F32 tensors: for the tests' tiny
/// model (`crate::tiny`).
pub fn write(tensors: &[(String, Vec<usize>, Vec<f32>)]) -> Vec<u8> {
    let mut header = serde_json::Map::new();
    let mut offset = 0u64;
    for (name, shape, values) in tensors {
        let end = offset + 4 * values.len() as u64;
        header.insert(
            name.clone(),
            serde_json::json!({"dtype": "F32", "shape": shape, "data_offsets": [offset, end]}),
        );
        offset = end;
    }
    let header = serde_json::Value::Object(header).to_string().into_bytes();
    let mut out = Vec::with_capacity(8 + header.len() + offset as usize);
    out.extend_from_slice(&(header.len() as u64).to_le_bytes());
    out.extend_from_slice(&header);
    for (_, _, values) in tensors {
        for v in values {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_headers_are_errors() {
        assert!(SafeTensors::parse(b"123").is_err());
        // A length past the end.
        let mut b = (1u64 << 40).to_le_bytes().to_vec();
        b.extend_from_slice(b"{}");
        assert!(
            SafeTensors::parse(&b)
                .err()
                .unwrap()
                .contains("past the file's end")
        );
        // Offsets past the end.
        let h = br#"{"a":{"dtype":"F32","shape":[1000000000],"data_offsets":[0,4000000000]}}"#;
        let mut b = (h.len() as u64).to_le_bytes().to_vec();
        b.extend_from_slice(h);
        assert!(
            SafeTensors::parse(&b)
                .err()
                .unwrap()
                .contains("outside the file")
        );
        // A shape whose size overflows, over a small range.
        let h = br#"{"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}}"#;
        let mut b = (h.len() as u64).to_le_bytes().to_vec();
        b.extend_from_slice(h);
        let t = SafeTensors::parse(&b).unwrap();
        assert!(t.f32("a", &[2, 2]).unwrap_err().contains("shape"));
    }

    #[test]
    fn round_trip_and_half_precision() {
        let file = write(&[("w".into(), vec![2, 2], vec![1.0, -2.5, 0.0, 3.25])]);
        let t = SafeTensors::parse(&file).unwrap();
        assert_eq!(t.f32("w", &[2, 2]).unwrap(), [1.0, -2.5, 0.0, 3.25]);
        assert!(t.f32("w", &[4]).is_err());
        assert!(t.f32("v", &[4]).is_err());
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x0001), f32::powi(2.0, -24));
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
    }
}
