//! A stand-in model for the bench (bench/run's hybrid rows): the tiny
//! model's kind (random weights, a vocabulary that spells words letter by
//! letter), as wide as all-MiniLM-L6-v2 (384 numbers a vector) but one
//! layer deep and cut at 32 tokens, so that a gigabyte of notes (1.1
//! million sections) is embedded in minutes, not the 10 hours
//! all-MiniLM-L6-v2 takes on the bench's machine. Its vectors mean
//! nothing; a search's cost past the embedding (a vector a section read
//! and scored) is the real model's.
//!
//!     cargo run --release -p axe-embed --example standin -- DIR

use axe_embed::tiny::{Shape, write_shaped};

const STANDIN: Shape = Shape {
    hidden: 384,
    layers: 1,
    heads: 6,
    intermediate: 384,
    positions: 64,
    max_tokens: 32,
};

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: standin DIR");
        std::process::exit(2);
    };
    if let Err(e) = write_shaped(dir.as_ref(), 7, axe_embed::Pooling::Mean, &STANDIN) {
        eprintln!("standin: {dir}: {e}");
        std::process::exit(1);
    }
}
