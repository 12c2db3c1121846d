//! A sentence-transformers folder read and checked: `config.json`,
//! `tokenizer.json`, `model.safetensors`, and the optional
//! `modules.json`, `<pooling>/config.json` and `sentence_bert_config.json`.

use std::io::Read;
use std::path::Path;

use serde::Deserialize;

use crate::bert::{Bert, Config};
use crate::safetensors::SafeTensors;
use crate::tokenizer::Tokenizer;
use crate::{EmbedError, Model, Pooling};

/// The largest JSON file accepted (a tokenizer.json is about 0.5-2 MB).
const MAX_JSON: u64 = 64 << 20;
/// The largest weights file accepted (bge-large is 1.3 GB).
const MAX_WEIGHTS: u64 = 4 << 30;

/// `path`'s bytes, refused when it is not a regular file or is over `max`
/// bytes; never more than `max` + 1 bytes are read, whatever the file
/// claims meanwhile.
fn read(path: &Path, max: u64) -> Result<Vec<u8>, EmbedError> {
    let fail = |error| EmbedError::Read {
        file: path.to_path_buf(),
        error,
    };
    let file = std::fs::File::open(path).map_err(fail)?;
    let meta = file.metadata().map_err(fail)?;
    if !meta.is_file() {
        return Err(EmbedError::invalid(path, "not a regular file"));
    }
    if meta.len() > max {
        return Err(EmbedError::invalid(
            path,
            format!("{} bytes, over the {max} accepted", meta.len()),
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max + 1).read_to_end(&mut bytes).map_err(fail)?;
    if bytes.len() as u64 > max {
        return Err(EmbedError::invalid(path, "grew past the size accepted"));
    }
    Ok(bytes)
}

fn json<T: for<'de> Deserialize<'de>>(path: &Path, bytes: &[u8]) -> Result<T, EmbedError> {
    serde_json::from_slice(bytes).map_err(|e| EmbedError::invalid(path, format!("bad JSON: {e}")))
}

#[derive(Deserialize)]
struct BertConfig {
    model_type: Option<String>,
    vocab_size: usize,
    hidden_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    intermediate_size: usize,
    max_position_embeddings: usize,
    #[serde(default = "two")]
    type_vocab_size: usize,
    #[serde(default = "eps")]
    layer_norm_eps: f64,
    #[serde(default = "gelu")]
    hidden_act: String,
    position_embedding_type: Option<String>,
}

fn two() -> usize {
    2
}

fn eps() -> f64 {
    1e-12
}

fn gelu() -> String {
    "gelu".into()
}

#[derive(Deserialize)]
struct Module {
    path: String,
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize)]
struct PoolingConfig {
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
    #[serde(default)]
    pooling_mode_mean_sqrt_len_tokens: bool,
}

#[derive(Deserialize)]
struct SentenceBertConfig {
    max_seq_length: Option<usize>,
}

pub fn load(dir: &Path) -> Result<Model, EmbedError> {
    let mut id = ring::digest::Context::new(&ring::digest::SHA256);
    let mut hashed = |name: &str, bytes: &[u8]| {
        id.update(name.as_bytes());
        id.update(&(bytes.len() as u64).to_le_bytes());
        id.update(bytes);
    };

    let path = dir.join("config.json");
    let bytes = read(&path, MAX_JSON)?;
    hashed("config.json", &bytes);
    let cfg = config(&path, json(&path, &bytes)?)?;

    let path = dir.join("tokenizer.json");
    let bytes = read(&path, MAX_JSON)?;
    hashed("tokenizer.json", &bytes);
    let tokenizer =
        Tokenizer::from_json(&bytes, cfg.vocab).map_err(|e| EmbedError::invalid(&path, e))?;

    // The pooling: modules.json names its folder; without one, a plain
    // BERT folder is mean-pooled, as sentence-transformers does.
    let mut pooling = Pooling::Mean;
    let path = dir.join("modules.json");
    if path.exists() {
        let bytes = read(&path, MAX_JSON)?;
        hashed("modules.json", &bytes);
        let modules: Vec<Module> = json(&path, &bytes)?;
        for m in &modules {
            let known = [
                "sentence_transformers.models.Transformer",
                "sentence_transformers.models.Pooling",
                "sentence_transformers.models.Normalize",
            ];
            if !known.contains(&m.kind.as_str()) {
                return Err(EmbedError::invalid(
                    &path,
                    format!(
                        "module {} is not supported (only Transformer, Pooling, Normalize)",
                        m.kind
                    ),
                ));
            }
        }
        if let Some(m) = modules.iter().find(|m| m.kind.ends_with(".Pooling")) {
            if m.path.split(['/', '\\']).any(|c| c == ".." || c.is_empty()) {
                return Err(EmbedError::invalid(
                    &path,
                    "a module path leaves the folder",
                ));
            }
            let path = dir.join(&m.path).join("config.json");
            let bytes = read(&path, MAX_JSON)?;
            hashed("pooling", &bytes);
            let p: PoolingConfig = json(&path, &bytes)?;
            pooling = match (
                p.pooling_mode_cls_token,
                p.pooling_mode_mean_tokens,
                p.pooling_mode_max_tokens || p.pooling_mode_mean_sqrt_len_tokens,
            ) {
                (true, false, false) => Pooling::Cls,
                (false, true, false) => Pooling::Mean,
                _ => {
                    return Err(EmbedError::invalid(
                        &path,
                        "only CLS or mean pooling, alone, is supported",
                    ));
                }
            };
        }
    }

    let mut max_tokens = cfg.positions;
    let path = dir.join("sentence_bert_config.json");
    if path.exists() {
        let bytes = read(&path, MAX_JSON)?;
        hashed("sentence_bert_config.json", &bytes);
        let s: SentenceBertConfig = json(&path, &bytes)?;
        if let Some(n) = s.max_seq_length {
            max_tokens = max_tokens.min(n);
        }
    }
    if max_tokens < 2 {
        return Err(EmbedError::invalid(
            &path,
            "max_seq_length leaves no room for [CLS] and [SEP]",
        ));
    }

    let path = dir.join("model.safetensors");
    let bytes = read(&path, MAX_WEIGHTS)?;
    hashed("model.safetensors", &bytes);
    let tensors = SafeTensors::parse(&bytes).map_err(|e| EmbedError::invalid(&path, e))?;
    let bert = Bert::load(&tensors, cfg).map_err(|e| EmbedError::invalid(&path, e))?;
    debug_assert!(max_tokens <= bert.max_positions());

    let digest = id.finish();
    let id = digest.as_ref()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Ok(Model {
        tokenizer,
        bert,
        pooling,
        max_tokens,
        id,
    })
}

/// The hyper-parameters, each within bounds no real BERT passes, so that
/// nothing computed from them overflows before the weights are checked
/// against the file.
fn config(path: &Path, c: BertConfig) -> Result<Config, EmbedError> {
    let bad = |what: String| Err(EmbedError::invalid(path, what));
    if let Some(t) = &c.model_type
        && !matches!(t.as_str(), "bert")
    {
        return bad(format!("model_type {t:?} is not supported (only bert)"));
    }
    if c.hidden_act != "gelu" {
        return bad(format!(
            "hidden_act {:?} is not supported (only gelu)",
            c.hidden_act
        ));
    }
    if c.position_embedding_type
        .as_deref()
        .is_some_and(|p| p != "absolute")
    {
        return bad("only absolute position embeddings are supported".into());
    }
    for (name, value, max) in [
        ("vocab_size", c.vocab_size, 1 << 20),
        ("hidden_size", c.hidden_size, 1 << 13),
        ("num_hidden_layers", c.num_hidden_layers, 128),
        ("num_attention_heads", c.num_attention_heads, 256),
        ("intermediate_size", c.intermediate_size, 1 << 15),
        (
            "max_position_embeddings",
            c.max_position_embeddings,
            1 << 14,
        ),
        ("type_vocab_size", c.type_vocab_size, 1 << 10),
    ] {
        if value == 0 || value > max {
            return bad(format!("{name} is {value}, outside 1..={max}"));
        }
    }
    if !c.hidden_size.is_multiple_of(c.num_attention_heads) {
        return bad(format!(
            "hidden_size {} is not a multiple of num_attention_heads {}",
            c.hidden_size, c.num_attention_heads
        ));
    }
    if !(c.layer_norm_eps.is_finite() && c.layer_norm_eps > 0.0) {
        return bad("layer_norm_eps is not a positive number".into());
    }
    Ok(Config {
        vocab: c.vocab_size,
        hidden: c.hidden_size,
        layers: c.num_hidden_layers,
        heads: c.num_attention_heads,
        intermediate: c.intermediate_size,
        positions: c.max_position_embeddings,
        types: c.type_vocab_size,
        eps: c.layer_norm_eps as f32,
    })
}
