//! Embedding throughput (bench/embed runs it): sections of a note's
//! usual length embedded one at a time and 32 at a time.
//!
//!     cargo run --release -p axe-embed --example throughput -- MODEL_DIR [SECTIONS]

use std::time::Instant;

/// About 80 words, 100-odd tokens: a section of a notes file as
/// remember and the imports write them.
const SECTION: &str = "Deployed the billing service to staging after the migration \
    finished; the database upgrade took forty minutes because the index on \
    invoices was rebuilt. Maya found that the retry loop in the webhook handler \
    doubled some charges when the queue backed up, so we added an idempotency \
    key and a test that replays the same event twice. Next: watch the error \
    rate over the weekend, then roll out to production on Tuesday if it stays \
    under one percent.";

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(dir) = args.next() else {
        eprintln!("usage: throughput MODEL_DIR [SECTIONS]");
        std::process::exit(2);
    };
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(64);
    let t = Instant::now();
    let model = match axe_embed::Model::load(std::path::Path::new(&dir)) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    println!(
        "load: {:.2} s; id {}; {} tokens a section",
        t.elapsed().as_secs_f64(),
        model.id(),
        model.tokenize(SECTION).len()
    );
    // Each section a little different, as real ones are.
    let texts: Vec<String> = (0..n).map(|i| format!("{SECTION} ({i})")).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    for batch in [1usize, 32] {
        let t = Instant::now();
        for chunk in refs.chunks(batch) {
            std::hint::black_box(model.embed(chunk));
        }
        let s = t.elapsed().as_secs_f64();
        println!(
            "batch {batch:>2}: {:.1} sections/s ({n} in {s:.2} s)",
            n as f64 / s
        );
    }
}
