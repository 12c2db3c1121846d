//! Many processes appending to one log while trims run: nothing torn,
//! nothing interleaved, nothing lost.

use std::collections::HashMap;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

use crate::util::{Env, read};

const WRITERS: usize = 8;
const PER_WRITER: usize = 250;
const KEEP: u64 = 40;

/// A result unique to one append, of varying length, with lines that would
/// start a new entry if they were not escaped.
fn result(writer: usize, i: usize) -> String {
    let pad = "x".repeat((writer * 131 + i * 37) % 900);
    format!("writer {writer} entry {i}\n## section\n{pad}\nend {writer}-{i}")
}

/// How `result` is stored: the `## ` line escaped with one space.
fn stored(writer: usize, i: usize) -> String {
    result(writer, i).replace("\n## section\n", "\n ## section\n")
}

#[test]
fn concurrent_appends_and_trims_lose_nothing() {
    let env = Env::new();
    let log = env.root().join("shared.md");
    let append_bin = assert_cmd::cargo::cargo_bin("axe-mem-append");
    let trim_bin = assert_cmd::cargo::cargo_bin("axe-mem-trim");
    let writing = AtomicBool::new(true);

    let (trims, removed) = thread::scope(|s| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (log, bin) = (&log, &append_bin);
                s.spawn(move || {
                    for i in 0..PER_WRITER {
                        let status = Command::new(bin)
                            .arg("--file")
                            .arg(log)
                            .args(["--task", &format!("w{w}-{i}"), "--result", &result(w, i)])
                            .status()
                            .unwrap();
                        assert!(status.success(), "append w{w}-{i}: {status}");
                    }
                })
            })
            .collect();
        let trimmer = s.spawn(|| {
            let (mut trims, mut removed) = (0u64, 0u64);
            while writing.load(Ordering::Relaxed) {
                let out = Command::new(&trim_bin)
                    .arg("--file")
                    .arg(&log)
                    .args(["--keep", &KEEP.to_string(), "--count", "--json"])
                    .output()
                    .unwrap();
                assert!(out.status.success(), "{out:?}");
                let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
                if json["trimmed"] == true {
                    trims += 1;
                    removed += json["removed"].as_u64().expect("counted");
                }
            }
            (trims, removed)
        });
        for w in writers {
            w.join().unwrap();
        }
        writing.store(false, Ordering::Relaxed);
        trimmer.join().unwrap()
    });

    // Parse the log strictly: every entry exactly as it was appended.
    let text = read(&log);
    let mut present: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut count = 0u64;
    for chunk in split_entries(&text) {
        let body = chunk
            .strip_prefix("## ")
            .unwrap()
            .split_once('\n')
            .expect("header line")
            .1
            .strip_prefix("**Task:** w")
            .unwrap_or_else(|| panic!("torn entry: {chunk:?}"));
        let (id, rest) = body.split_once('\n').unwrap();
        let (w, i) = id.split_once('-').unwrap();
        let (w, i): (usize, usize) = (w.parse().unwrap(), i.parse().unwrap());
        assert_eq!(
            rest,
            format!("**Result:** {}\n\n", stored(w, i)),
            "entry w{w}-{i} torn or interleaved"
        );
        present.entry(w).or_default().push(i);
        count += 1;
    }
    assert!(
        text.starts_with("## ") && !text.contains("\n## section"),
        "the log starts with an entry and no result line became a header"
    );

    assert!(trims >= 3, "the trims ran while appending ({trims})");
    assert_eq!(
        count + removed,
        (WRITERS * PER_WRITER) as u64,
        "{count} present + {removed} removed by {trims} trims"
    );
    // A trim only ever drops the oldest entries, so what is left of each
    // writer is its last appends, in order, with no gap.
    for (w, seen) in &present {
        let first = seen[0];
        assert_eq!(
            seen,
            &(first..PER_WRITER).collect::<Vec<_>>(),
            "writer {w} lost an entry in the middle"
        );
    }
}

/// The entries of a log: each from a line starting with `## ` to the next.
fn split_entries(text: &str) -> Vec<&str> {
    let mut starts: Vec<usize> = Vec::new();
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.starts_with("## ") {
            starts.push(at);
        }
        at += line.len();
    }
    assert_eq!(starts.first(), Some(&0), "text before the first entry");
    starts.push(text.len());
    starts.windows(2).map(|w| &text[w[0]..w[1]]).collect()
}
