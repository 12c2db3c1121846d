//! The whole model against an independent computation: the tiny model's
//! tensors run through a textbook BERT in f64 (a padded batch with an
//! attention mask, erf by its series), checked vector by vector.

use std::collections::HashMap;

use crate::{EmbedError, Model, Pooling, tiny};

type Tensors = HashMap<String, Vec<f64>>;

fn erf_series(x: f64) -> f64 {
    // erf x = 2/√π Σ (-1)^n x^(2n+1) / (n! (2n+1)), plenty of terms for |x| < 6.
    let mut sum = 0.0;
    let mut term = x;
    for n in 0..200 {
        sum += term / (2 * n + 1) as f64;
        term *= -x * x / (n + 1) as f64;
    }
    (2.0 / std::f64::consts::PI.sqrt() * sum).clamp(-1.0, 1.0)
}

fn layer_norm(x: &mut [f64], g: &[f64], b: &[f64]) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    for i in 0..x.len() {
        x[i] = (x[i] - mean) / (var + 1e-12).sqrt() * g[i] + b[i];
    }
}

fn linear(t: &Tensors, name: &str, x: &[f64], out: usize) -> Vec<f64> {
    let w = &t[&format!("{name}.weight")];
    let b = &t[&format!("{name}.bias")];
    let inp = x.len();
    (0..out)
        .map(|o| b[o] + (0..inp).map(|i| w[o * inp + i] * x[i]).sum::<f64>())
        .collect()
}

/// The batch padded to its longest text with [PAD] (id 0), the padding
/// masked out of attention and pooling, as transformers does it.
fn reference(t: &Tensors, batch: &[Vec<u32>], pooling: Pooling) -> Vec<Vec<f64>> {
    let h = tiny::HIDDEN;
    let d = h / tiny::HEADS;
    let len = batch.iter().map(Vec::len).max().unwrap();
    let mut out = Vec::new();
    for ids in batch {
        let mask: Vec<bool> = (0..len).map(|p| p < ids.len()).collect();
        let mut x: Vec<Vec<f64>> = (0..len)
            .map(|p| {
                let id = ids.get(p).copied().unwrap_or(0) as usize;
                let mut v: Vec<f64> = (0..h)
                    .map(|i| {
                        t["embeddings.word_embeddings.weight"][id * h + i]
                            + t["embeddings.position_embeddings.weight"][p * h + i]
                            + t["embeddings.token_type_embeddings.weight"][i]
                    })
                    .collect();
                layer_norm(
                    &mut v,
                    &t["embeddings.LayerNorm.weight"],
                    &t["embeddings.LayerNorm.bias"],
                );
                v
            })
            .collect();
        for l in 0..tiny::LAYERS {
            let p = format!("encoder.layer.{l}");
            let q: Vec<_> = x
                .iter()
                .map(|v| linear(t, &format!("{p}.attention.self.query"), v, h))
                .collect();
            let k: Vec<_> = x
                .iter()
                .map(|v| linear(t, &format!("{p}.attention.self.key"), v, h))
                .collect();
            let vv: Vec<_> = x
                .iter()
                .map(|v| linear(t, &format!("{p}.attention.self.value"), v, h))
                .collect();
            let mut ctx = vec![vec![0.0; h]; len];
            for head in 0..tiny::HEADS {
                for i in 0..len {
                    let scores: Vec<f64> = (0..len)
                        .map(|j| {
                            let s: f64 = (0..d)
                                .map(|c| q[i][head * d + c] * k[j][head * d + c])
                                .sum();
                            s / (d as f64).sqrt() + if mask[j] { 0.0 } else { -1e9 }
                        })
                        .collect();
                    let max = scores.iter().cloned().fold(f64::MIN, f64::max);
                    let e: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
                    let sum: f64 = e.iter().sum();
                    for c in 0..d {
                        ctx[i][head * d + c] =
                            (0..len).map(|j| e[j] / sum * vv[j][head * d + c]).sum();
                    }
                }
            }
            for i in 0..len {
                let mut a = linear(t, &format!("{p}.attention.output.dense"), &ctx[i], h);
                a.iter_mut().zip(&x[i]).for_each(|(a, x)| *a += x);
                layer_norm(
                    &mut a,
                    &t[&format!("{p}.attention.output.LayerNorm.weight")],
                    &t[&format!("{p}.attention.output.LayerNorm.bias")],
                );
                let u: Vec<f64> = linear(
                    t,
                    &format!("{p}.intermediate.dense"),
                    &a,
                    tiny::INTERMEDIATE,
                )
                .into_iter()
                .map(|v| 0.5 * v * (1.0 + erf_series(v / 2f64.sqrt())))
                .collect();
                let mut o = linear(t, &format!("{p}.output.dense"), &u, h);
                o.iter_mut().zip(&a).for_each(|(o, a)| *o += a);
                layer_norm(
                    &mut o,
                    &t[&format!("{p}.output.LayerNorm.weight")],
                    &t[&format!("{p}.output.LayerNorm.bias")],
                );
                x[i] = o;
            }
        }
        let mut v = match pooling {
            Pooling::Cls => x[0].clone(),
            Pooling::Mean => (0..h)
                .map(|c| (0..ids.len()).map(|p| x[p][c]).sum::<f64>() / ids.len() as f64)
                .collect(),
        };
        let norm = v.iter().map(|a| a * a).sum::<f64>().sqrt();
        v.iter_mut().for_each(|a| *a /= norm);
        out.push(v);
    }
    out
}

const TEXTS: &[&str] = &[
    "We deploy on Sunday.",
    "Maya hikes",
    "",
    "a much longer note that runs past the tiny model's limit of twenty four tokens, so it is cut",
    "Ünïcödé, 中文 and punctuation!?",
];

fn check(pooling: Pooling) {
    let dir = tempfile::tempdir().unwrap();
    tiny::write(dir.path(), 42, pooling).unwrap();
    let model = Model::load(dir.path()).unwrap();
    assert_eq!(model.dim(), tiny::HIDDEN);
    assert_eq!(model.max_tokens(), tiny::MAX_TOKENS);
    let t: Tensors = tiny::tensors(42)
        .into_iter()
        .map(|(n, _, v)| (n, v.into_iter().map(f64::from).collect()))
        .collect();
    let ids: Vec<Vec<u32>> = TEXTS.iter().map(|s| model.tokenize(s)).collect();
    assert_eq!(ids[3].len(), tiny::MAX_TOKENS);
    assert_eq!(ids[2], [2, 3]);
    let want = reference(&t, &ids, pooling);
    let got = model.embed(TEXTS);
    // And one by one: a text's vector does not depend on its batch.
    let alone: Vec<Vec<f32>> = TEXTS.iter().map(|s| model.embed(&[s]).remove(0)).collect();
    for ((g, w), a) in got.iter().zip(&want).zip(&alone) {
        for ((g, w), a) in g.iter().zip(w).zip(a) {
            assert!((*g as f64 - w).abs() < 1e-4, "{g} vs {w}");
            assert!((g - a).abs() < 1e-5);
        }
    }
    // Different texts, different vectors: the model is not degenerate.
    assert!((got[0][0] - got[1][0]).abs() > 1e-3 || (got[0][1] - got[1][1]).abs() > 1e-3);
}

#[test]
fn mean_pooled_vectors_match_a_textbook_bert() {
    check(Pooling::Mean);
}

#[test]
fn cls_pooled_vectors_match_a_textbook_bert() {
    check(Pooling::Cls);
}

#[test]
fn the_id_follows_the_files() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    tiny::write(a.path(), 1, Pooling::Mean).unwrap();
    tiny::write(b.path(), 2, Pooling::Mean).unwrap();
    let (ma, mb) = (
        Model::load(a.path()).unwrap(),
        Model::load(b.path()).unwrap(),
    );
    assert_eq!(ma.id().len(), 16);
    assert_ne!(ma.id(), mb.id());
    assert_eq!(ma.id(), Model::load(a.path()).unwrap().id());
}

fn error(dir: &std::path::Path) -> String {
    match Model::load(dir) {
        Err(e) => {
            let s = e.to_string();
            assert!(!s.contains('\n'), "{s}");
            s
        }
        Ok(_) => panic!("loaded"),
    }
}

#[test]
fn a_bad_folder_is_one_line_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    assert!(error(d).contains("config.json"));
    tiny::write(d, 3, Pooling::Mean).unwrap();

    // A missing weights file.
    std::fs::remove_file(d.join("model.safetensors")).unwrap();
    let e = error(d);
    assert!(
        e.contains("cannot read") && e.contains("model.safetensors"),
        "{e}"
    );

    // A header claiming more than the file holds.
    let mut bytes = (u64::MAX).to_le_bytes().to_vec();
    bytes.extend_from_slice(b"{}");
    std::fs::write(d.join("model.safetensors"), &bytes).unwrap();
    assert!(error(d).contains("bad header"));

    // A tensor of the wrong shape.
    let mut t2 = tiny::tensors(3);
    t2[0].1 = vec![t2[0].1[0] - 1, t2[0].1[1]];
    let keep = t2[0].2.len() - tiny::HIDDEN;
    t2[0].2.truncate(keep);
    std::fs::write(d.join("model.safetensors"), crate::safetensors::write(&t2)).unwrap();
    let e = error(d);
    assert!(
        e.contains("model.safetensors") && e.contains("word_embeddings") && e.contains("shape"),
        "{e}"
    );

    // A truncated file: the last tensor's bytes are gone.
    let whole = crate::safetensors::write(&tiny::tensors(3));
    std::fs::write(d.join("model.safetensors"), &whole[..whole.len() - 10]).unwrap();
    assert!(error(d).contains("outside the file"));

    // A config whose sizes would overflow or allocate without bound.
    std::fs::write(d.join("model.safetensors"), &whole).unwrap();
    let cfg = std::fs::read_to_string(d.join("config.json")).unwrap();
    std::fs::write(
        d.join("config.json"),
        cfg.replace("\"hidden_size\":16", "\"hidden_size\":1000000000000"),
    )
    .unwrap();
    let e = error(d);
    assert!(
        e.contains("config.json") && e.contains("hidden_size"),
        "{e}"
    );
    std::fs::write(d.join("config.json"), "[").unwrap();
    assert!(error(d).contains("bad JSON"));
    std::fs::write(d.join("config.json"), &cfg).unwrap();

    // A tokenizer naming ids past the vocabulary.
    let tok = std::fs::read_to_string(d.join("tokenizer.json")).unwrap();
    std::fs::write(
        d.join("tokenizer.json"),
        tok.replace("\"[MASK]\":4", "\"[MASK]\":4000000"),
    )
    .unwrap();
    let e = error(d);
    assert!(
        e.contains("tokenizer.json") && e.contains("past the model"),
        "{e}"
    );
    std::fs::write(d.join("tokenizer.json"), &tok).unwrap();

    // A pooling folder outside the model's.
    let modules = std::fs::read_to_string(d.join("modules.json")).unwrap();
    std::fs::write(
        d.join("modules.json"),
        modules.replace("\"1_Pooling\"", "\"../x\""),
    )
    .unwrap();
    assert!(error(d).contains("leaves the folder"));
    std::fs::write(d.join("modules.json"), &modules).unwrap();

    // A directory where a file should be.
    std::fs::remove_file(d.join("tokenizer.json")).unwrap();
    std::fs::create_dir(d.join("tokenizer.json")).unwrap();
    assert!(matches!(
        Model::load(d),
        Err(EmbedError::Invalid { .. } | EmbedError::Read { .. })
    ));
    std::fs::remove_dir(d.join("tokenizer.json")).unwrap();
    std::fs::write(d.join("tokenizer.json"), &tok).unwrap();
    assert!(Model::load(d).is_ok());
}
