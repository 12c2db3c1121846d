//! Sentence embeddings from a local sentence-transformers folder, in pure
//! Rust: its WordPiece tokenizer (`tokenizer.json`), its BERT
//! (`config.json`, `model.safetensors`) run forward in f32, and its
//! pooling (`modules.json`, `1_Pooling/config.json`, `2_Normalize`).
//! Made for all-MiniLM-L6-v2 (mean pooling) and bge-small-en-v1.5 (CLS).
//!
//! Nothing is fetched: the files come from the folder given, and
//! everything in them is checked before it is trusted (sizes against the
//! file's length, shapes against the config), so a hostile folder is a
//! one-line [`EmbedError`], never a panic or an unbounded allocation.

mod bert;
mod files;
mod matmul;
mod safetensors;
pub mod tiny;
mod tokenizer;

use std::path::{Path, PathBuf};

use tokenizer::Tokenizer;

/// What is wrong with a model folder: the file and what, on one line.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// A file could not be read (missing, unreadable, not a file).
    #[error("embedding model: cannot read {}: {error}", .file.display())]
    Read {
        file: PathBuf,
        error: std::io::Error,
    },
    /// A file was read but its contents are not what a model needs.
    #[error("embedding model: {}: {what}", .file.display())]
    Invalid { file: PathBuf, what: String },
}

impl EmbedError {
    fn invalid(file: &Path, what: impl Into<String>) -> EmbedError {
        EmbedError::Invalid {
            file: file.to_path_buf(),
            what: what.into(),
        }
    }
}

/// How a text's token vectors become one vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    /// The mean over its tokens (all-MiniLM-L6-v2).
    Mean,
    /// The first token's, `[CLS]` (bge-small-en-v1.5).
    Cls,
}

/// A loaded model: ready to embed.
pub struct Model {
    tokenizer: Tokenizer,
    bert: bert::Bert,
    pooling: Pooling,
    /// Longest input in tokens, `[CLS]` and `[SEP]` included.
    max_tokens: usize,
    id: String,
}

/// Texts run forward together, at most: bounds the memory a call takes
/// (activations grow with the batch), not the number of texts.
const BATCH: usize = 32;

impl Model {
    /// Loads the sentence-transformers folder `dir`.
    pub fn load(dir: &Path) -> Result<Model, EmbedError> {
        files::load(dir)
    }

    /// One unit vector per text, in order. An empty text embeds as
    /// `[CLS] [SEP]`; a long one is cut at the model's length limit.
    pub fn embed(&self, texts: &[&str]) -> Vec<Vec<f32>> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(BATCH) {
            let ids: Vec<Vec<u32>> = chunk
                .iter()
                .map(|t| self.tokenizer.encode(t, self.max_tokens))
                .collect();
            out.extend(self.bert.embed(&ids, self.pooling));
        }
        out
    }

    /// The token ids a text is run with (`[CLS] ... [SEP]`, cut to the
    /// length limit): what the tests compare with the reference tokenizer.
    pub fn tokenize(&self, text: &str) -> Vec<u32> {
        self.tokenizer.encode(text, self.max_tokens)
    }

    /// The length of every vector.
    pub fn dim(&self) -> usize {
        self.bert.hidden()
    }

    /// A short id of the model's files (16 hex digits of the SHA-256 of
    /// all of them): vectors made under one id are never reused under
    /// another.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The longest input in tokens.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }
}

#[cfg(test)]
mod tests;
