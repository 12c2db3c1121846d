//! BERT's encoder run forward in f32: embeddings (word + position +
//! token type, LayerNorm), then each layer's self-attention and GELU
//! feed-forward, each followed by a residual LayerNorm; then pooling.
//!
//! A batch is packed, not padded: the texts' tokens are stacked into one
//! matrix for the linear layers (all of the heavy work), and attention
//! runs per text over its own tokens only. That is what a padded batch
//! with an attention mask computes, without the padding's work.

use crate::matmul::{block, linear, pack, threads};
use crate::{Pooling, safetensors::SafeTensors};

/// The hyper-parameters a forward pass needs (from `config.json`).
#[derive(Debug, Clone)]
pub struct Config {
    pub vocab: usize,
    pub hidden: usize,
    pub layers: usize,
    pub heads: usize,
    pub intermediate: usize,
    pub positions: usize,
    pub types: usize,
    pub eps: f32,
}

struct Linear {
    /// The weight packed for the kernel (`matmul::pack`).
    w: Vec<f32>,
    b: Vec<f32>,
    inp: usize,
    out: usize,
}

impl Linear {
    fn forward(&self, x: &[f32], n: usize) -> Vec<f32> {
        linear(x, &self.w, &self.b, n, self.inp, self.out)
    }
}

struct Norm {
    g: Vec<f32>,
    b: Vec<f32>,
}

struct Layer {
    q: Linear,
    k: Linear,
    v: Linear,
    o: Linear,
    norm1: Norm,
    up: Linear,
    down: Linear,
    norm2: Norm,
}

pub struct Bert {
    cfg: Config,
    words: Vec<f32>,
    positions: Vec<f32>,
    types: Vec<f32>,
    norm: Norm,
    layers: Vec<Layer>,
}

impl Bert {
    /// The weights named as a BertModel's state dict (with or without a
    /// `bert.` before every name), each checked for its shape.
    pub fn load(t: &SafeTensors, cfg: Config) -> Result<Bert, String> {
        let prefix = if t.has("embeddings.word_embeddings.weight") {
            ""
        } else {
            "bert."
        };
        let get = |name: &str, shape: &[usize]| t.f32(&format!("{prefix}{name}"), shape);
        let h = cfg.hidden;
        // Old checkpoints name LayerNorm's parameters gamma and beta.
        let norm = |name: &str| -> Result<Norm, String> {
            let g = get(&format!("{name}.weight"), &[h])
                .or_else(|_| get(&format!("{name}.gamma"), &[h]))?;
            let b = get(&format!("{name}.bias"), &[h])
                .or_else(|_| get(&format!("{name}.beta"), &[h]))?;
            Ok(Norm { g, b })
        };
        let lin = |name: &str, inp: usize, out: usize| -> Result<Linear, String> {
            Ok(Linear {
                w: pack(&get(&format!("{name}.weight"), &[out, inp])?, inp, out),
                b: get(&format!("{name}.bias"), &[out])?,
                inp,
                out,
            })
        };
        let mut layers = Vec::with_capacity(cfg.layers);
        for i in 0..cfg.layers {
            let p = format!("encoder.layer.{i}");
            layers.push(Layer {
                q: lin(&format!("{p}.attention.self.query"), h, h)?,
                k: lin(&format!("{p}.attention.self.key"), h, h)?,
                v: lin(&format!("{p}.attention.self.value"), h, h)?,
                o: lin(&format!("{p}.attention.output.dense"), h, h)?,
                norm1: norm(&format!("{p}.attention.output.LayerNorm"))?,
                up: lin(&format!("{p}.intermediate.dense"), h, cfg.intermediate)?,
                down: lin(&format!("{p}.output.dense"), cfg.intermediate, h)?,
                norm2: norm(&format!("{p}.output.LayerNorm"))?,
            });
        }
        Ok(Bert {
            words: get("embeddings.word_embeddings.weight", &[cfg.vocab, h])?,
            positions: get("embeddings.position_embeddings.weight", &[cfg.positions, h])?,
            types: get("embeddings.token_type_embeddings.weight", &[cfg.types, h])?,
            norm: norm("embeddings.LayerNorm")?,
            layers,
            cfg,
        })
    }

    pub fn hidden(&self) -> usize {
        self.cfg.hidden
    }

    pub fn max_positions(&self) -> usize {
        self.cfg.positions
    }

    /// One pooled unit vector per text of token ids (each already cut to
    /// the position limit; ids already checked against the vocabulary).
    pub fn embed(&self, texts: &[Vec<u32>], pooling: Pooling) -> Vec<Vec<f32>> {
        let h = self.cfg.hidden;
        let n: usize = texts.iter().map(Vec::len).sum();
        let mut x = Vec::with_capacity(n * h);
        for ids in texts {
            for (pos, &id) in ids.iter().enumerate() {
                let w = &self.words[id as usize * h..][..h];
                let p = &self.positions[pos * h..][..h];
                // Every token is of type 0: one text, no pair.
                let t = &self.types[..h];
                x.extend((0..h).map(|i| w[i] + p[i] + t[i]));
            }
        }
        layer_norm(&mut x, &self.norm, h, self.cfg.eps);
        let lens: Vec<usize> = texts.iter().map(Vec::len).collect();
        for layer in &self.layers {
            x = self.layer(layer, x, &lens);
        }
        let mut out = Vec::with_capacity(texts.len());
        let mut start = 0;
        for &len in &lens {
            let rows = &x[start * h..(start + len) * h];
            let mut v = vec![0.0f32; h];
            match pooling {
                Pooling::Cls => v.copy_from_slice(&rows[..h]),
                Pooling::Mean => {
                    for row in rows.chunks_exact(h) {
                        for (a, b) in v.iter_mut().zip(row) {
                            *a += b;
                        }
                    }
                    let len = len.max(1) as f32;
                    v.iter_mut().for_each(|a| *a /= len);
                }
            }
            normalize(&mut v);
            out.push(v);
            start += len;
        }
        out
    }

    fn layer(&self, l: &Layer, x: Vec<f32>, lens: &[usize]) -> Vec<f32> {
        let h = self.cfg.hidden;
        let n = x.len() / h;
        let q = l.q.forward(&x, n);
        let k = l.k.forward(&x, n);
        let v = l.v.forward(&x, n);
        let ctx = self.attention(&q, &k, &v, lens);
        let mut a = l.o.forward(&ctx, n);
        a.iter_mut().zip(&x).for_each(|(a, x)| *a += x);
        layer_norm(&mut a, &l.norm1, h, self.cfg.eps);
        let mut u = l.up.forward(&a, n);
        u.iter_mut().for_each(|v| *v = gelu(*v));
        let mut d = l.down.forward(&u, n);
        d.iter_mut().zip(&a).for_each(|(d, a)| *d += a);
        layer_norm(&mut d, &l.norm2, h, self.cfg.eps);
        d
    }

    /// softmax(Q Kᵀ / √d) V per head, per text over its own tokens; the
    /// (text, head) pairs shared among the machine's threads.
    fn attention(&self, q: &[f32], k: &[f32], v: &[f32], lens: &[usize]) -> Vec<f32> {
        let h = self.cfg.hidden;
        let heads = self.cfg.heads;
        let mut jobs = Vec::with_capacity(lens.len() * heads);
        let mut start = 0;
        for &len in lens {
            for head in 0..heads {
                jobs.push((start, len, head));
            }
            start += len;
        }
        let run = |jobs: &[(usize, usize, usize)]| -> Vec<(usize, usize, usize, Vec<f32>)> {
            jobs.iter()
                .map(|&(start, len, head)| (start, len, head, self.head(q, k, v, start, len, head)))
                .collect()
        };
        let threads = threads().min(jobs.len()).max(1);
        let done: Vec<_> = if threads == 1 || q.len() < 1 << 14 {
            run(&jobs)
        } else {
            let per = jobs.len().div_ceil(threads);
            std::thread::scope(|s| {
                let parts: Vec<_> = jobs
                    .chunks(per)
                    .map(|part| s.spawn(move || run(part)))
                    .collect();
                // A thread that panicked: its heads are computed here.
                parts
                    .into_iter()
                    .zip(jobs.chunks(per))
                    .flat_map(|(p, part)| p.join().unwrap_or_else(|_| run(part)))
                    .collect()
            })
        };
        let d = h / heads;
        let mut ctx = vec![0.0f32; q.len()];
        for (start, len, head, out) in done {
            for t in 0..len {
                let row = (start + t) * h + head * d;
                ctx[row..row + d].copy_from_slice(&out[t * d..(t + 1) * d]);
            }
        }
        ctx
    }

    /// One head of one text: its context vectors, len x d.
    fn head(
        &self,
        q: &[f32],
        k: &[f32],
        v: &[f32],
        start: usize,
        len: usize,
        head: usize,
    ) -> Vec<f32> {
        let h = self.cfg.hidden;
        let d = h / self.cfg.heads;
        let scale = 1.0 / (d as f32).sqrt();
        let mut qh = vec![0.0f32; len * d];
        let mut kh = vec![0.0f32; len * d];
        // V transposed (d x len) so the product is rows by rows again.
        let mut vt = vec![0.0f32; d * len];
        for t in 0..len {
            let row = (start + t) * h + head * d;
            qh[t * d..(t + 1) * d].copy_from_slice(&q[row..row + d]);
            kh[t * d..(t + 1) * d].copy_from_slice(&k[row..row + d]);
            for c in 0..d {
                vt[c * len + t] = v[row + c];
            }
        }
        let mut scores = vec![0.0f32; len * len];
        block(&qh, &kh, &mut scores, d, len);
        for row in scores.chunks_exact_mut(len) {
            row.iter_mut().for_each(|s| *s *= scale);
            softmax(row);
        }
        let mut out = vec![0.0f32; len * d];
        block(&scores, &vt, &mut out, len, d);
        out
    }
}

fn layer_norm(x: &mut [f32], norm: &Norm, h: usize, eps: f32) {
    for row in x.chunks_exact_mut(h) {
        let mean = row.iter().sum::<f32>() / h as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / h as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for ((v, g), b) in row.iter_mut().zip(&norm.g).zip(&norm.b) {
            *v = (*v - mean) * inv * g + b;
        }
    }
}

fn softmax(row: &mut [f32]) {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for s in row.iter_mut() {
        *s = (*s - max).exp();
        sum += *s;
    }
    row.iter_mut().for_each(|s| *s /= sum);
}

/// GELU as BERT defines it, with erf (not the tanh approximation).
fn gelu(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x / std::f32::consts::SQRT_2))
}

/// erf to about 1e-7: Numerical Recipes' Chebyshev fit of erfc
/// (fractional error under 1.2e-7 everywhere), evaluated in f64; std has
/// no stable erf.
pub fn erf(x: f32) -> f32 {
    let x = f64::from(x);
    let t = 1.0 / (1.0 + 0.5 * x.abs());
    let y = t
        * (-x * x - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    (if x >= 0.0 { 1.0 - y } else { y - 1.0 }) as f32
}

/// Scales `v` to length 1 (a zero vector stays zero).
pub fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|a| a * a).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|a| *a /= norm);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn erf_is_close() {
        // Values from the literature (erf(0.5), erf(1), erf(2), erf(-0.3)).
        for (x, want) in [
            (0.0, 0.0),
            (0.5, 0.520_499_877_8),
            (1.0, 0.842_700_792_9),
            (2.0, 0.995_322_265_0),
            (-0.3, -0.328_626_759_5),
        ] {
            assert!(
                (super::erf(x as f32) as f64 - want).abs() < 3e-7,
                "erf({x})"
            );
        }
    }
}
