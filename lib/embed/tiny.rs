//! A tiny BERT with random weights, written as a sentence-transformers
//! folder: what the tests (this crate's and the search's) load, so that
//! they exercise every file and every step without a real model. Its
//! vectors mean nothing; its vocabulary spells English letter by letter.

use std::path::Path;

use crate::Pooling;
use crate::safetensors;

/// Its hyper-parameters.
pub const HIDDEN: usize = 16;
pub const LAYERS: usize = 2;
pub const HEADS: usize = 2;
pub const INTERMEDIATE: usize = 32;
pub const POSITIONS: usize = 64;
/// Its `max_seq_length`: texts are cut to 24 tokens.
pub const MAX_TOKENS: usize = 24;

/// The hyper-parameters of a model of this kind: [`TINY`] for the tests;
/// the bench writes a wider one (`examples/standin.rs`).
#[derive(Clone, Copy)]
pub struct Shape {
    pub hidden: usize,
    pub layers: usize,
    pub heads: usize,
    pub intermediate: usize,
    pub positions: usize,
    pub max_tokens: usize,
}

pub const TINY: Shape = Shape {
    hidden: HIDDEN,
    layers: LAYERS,
    heads: HEADS,
    intermediate: INTERMEDIATE,
    positions: POSITIONS,
    max_tokens: MAX_TOKENS,
};

/// Words it has whole; anything else is spelled in letters (`##x`).
const WORDS: &[&str] = &[
    "the", "a", "on", "in", "of", "and", "to", "is", "we", "deploy", "hike", "sunday", "maya",
    "note", "search", "##s", "##ed", "##ing",
];

/// Its vocabulary, in id order.
pub fn vocab() -> Vec<String> {
    let mut v: Vec<String> = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for c in ('a'..='z').chain('0'..='9') {
        v.push(c.to_string());
        v.push(format!("##{c}"));
    }
    for c in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~".chars() {
        v.push(c.to_string());
    }
    v.extend(WORDS.iter().map(|s| s.to_string()));
    v
}

/// Random weights in (-scale, scale), the same for the same seed.
struct Random(u64);

impl Random {
    fn next(&mut self, scale: f32) -> f32 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let r = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40;
        (r as f32 / (1u64 << 24) as f32 * 2.0 - 1.0) * scale
    }

    fn tensor(&mut self, shape: &[usize], scale: f32, around: f32) -> Vec<f32> {
        (0..shape.iter().product::<usize>())
            .map(|_| around + self.next(scale))
            .collect()
    }
}

/// The tensors of the tiny model for `seed`, by name, shape and values.
pub fn tensors(seed: u64) -> Vec<(String, Vec<usize>, Vec<f32>)> {
    tensors_of(seed, &TINY)
}

/// The tensors of a model of `shape` for `seed`.
pub fn tensors_of(seed: u64, shape: &Shape) -> Vec<(String, Vec<usize>, Vec<f32>)> {
    let mut r = Random(seed | 1);
    let h = shape.hidden;
    let mut t = Vec::new();
    let mut add = |name: &str, shape: Vec<usize>, scale: f32, around: f32, r: &mut Random| {
        let v = r.tensor(&shape, scale, around);
        t.push((name.to_string(), shape, v));
    };
    add(
        "embeddings.word_embeddings.weight",
        vec![vocab().len(), h],
        1.0,
        0.0,
        &mut r,
    );
    add(
        "embeddings.position_embeddings.weight",
        vec![shape.positions, h],
        0.5,
        0.0,
        &mut r,
    );
    add(
        "embeddings.token_type_embeddings.weight",
        vec![2, h],
        0.5,
        0.0,
        &mut r,
    );
    add("embeddings.LayerNorm.weight", vec![h], 0.2, 1.0, &mut r);
    add("embeddings.LayerNorm.bias", vec![h], 0.2, 0.0, &mut r);
    for i in 0..shape.layers {
        let p = format!("encoder.layer.{i}");
        for (name, out, inp) in [
            ("attention.self.query", h, h),
            ("attention.self.key", h, h),
            ("attention.self.value", h, h),
            ("attention.output.dense", h, h),
            ("intermediate.dense", shape.intermediate, h),
            ("output.dense", h, shape.intermediate),
        ] {
            add(
                &format!("{p}.{name}.weight"),
                vec![out, inp],
                0.5,
                0.0,
                &mut r,
            );
            add(&format!("{p}.{name}.bias"), vec![out], 0.2, 0.0, &mut r);
        }
        for name in ["attention.output.LayerNorm", "output.LayerNorm"] {
            add(&format!("{p}.{name}.weight"), vec![h], 0.2, 1.0, &mut r);
            add(&format!("{p}.{name}.bias"), vec![h], 0.2, 0.0, &mut r);
        }
    }
    t
}

/// Writes the tiny model for `seed` into `dir` (made if missing): every
/// file a sentence-transformers folder has, `pooling` as asked.
pub fn write(dir: &Path, seed: u64, pooling: Pooling) -> std::io::Result<()> {
    write_shaped(dir, seed, pooling, &TINY)
}

/// Writes a model of `shape` for `seed` into `dir`, as [`write`] does.
pub fn write_shaped(dir: &Path, seed: u64, pooling: Pooling, shape: &Shape) -> std::io::Result<()> {
    std::fs::create_dir_all(dir.join("1_Pooling"))?;
    let config = serde_json::json!({
        "architectures": ["BertModel"], "model_type": "bert", "hidden_act": "gelu",
        "vocab_size": vocab().len(), "hidden_size": shape.hidden,
        "num_hidden_layers": shape.layers, "num_attention_heads": shape.heads,
        "intermediate_size": shape.intermediate, "max_position_embeddings": shape.positions, "type_vocab_size": 2,
        "layer_norm_eps": 1e-12, "position_embedding_type": "absolute",
    });
    std::fs::write(dir.join("config.json"), config.to_string())?;
    let vocab: serde_json::Map<String, serde_json::Value> = vocab()
        .into_iter()
        .enumerate()
        .map(|(i, w)| (w, i.into()))
        .collect();
    let tokenizer = serde_json::json!({
        "version": "1.0",
        "normalizer": {"type": "BertNormalizer", "clean_text": true,
            "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
        "model": {"type": "WordPiece", "unk_token": "[UNK]",
            "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
            "vocab": vocab},
    });
    std::fs::write(dir.join("tokenizer.json"), tokenizer.to_string())?;
    let modules = serde_json::json!([
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
    ]);
    std::fs::write(dir.join("modules.json"), modules.to_string())?;
    let pool = serde_json::json!({
        "word_embedding_dimension": shape.hidden,
        "pooling_mode_cls_token": pooling == Pooling::Cls,
        "pooling_mode_mean_tokens": pooling == Pooling::Mean,
    });
    std::fs::write(dir.join("1_Pooling/config.json"), pool.to_string())?;
    let sbert = serde_json::json!({"max_seq_length": shape.max_tokens, "do_lower_case": false});
    std::fs::write(dir.join("sentence_bert_config.json"), sbert.to_string())?;
    std::fs::write(
        dir.join("model.safetensors"),
        safetensors::write(&tensors_of(seed, shape)),
    )
}
