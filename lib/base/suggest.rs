//! "Did you mean": the known name nearest to what was typed.

/// The candidate nearest to `typed` by edit distance; the first of equals.
pub fn closest<'a>(typed: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .enumerate()
        .min_by_key(|&(i, c)| (edit_distance(typed, c), i))
        .map(|(_, c)| c)
}

/// Levenshtein distance, for suggestions among a handful of short names.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diag + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(above + 1);
            diag = above;
        }
    }
    row[b.len()]
}

/// The candidate near enough to `typed` to be what was meant: at most two
/// edits away, or a third of its length for long names.
pub fn near<'a>(typed: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    closest(typed, candidates).filter(|c| edit_distance(typed, c) <= 2.max(c.len() / 3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distances() {
        assert_eq!(edit_distance("json", "json"), 0);
        assert_eq!(edit_distance("jsn", "json"), 1);
        assert_eq!(edit_distance("lats", "last"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn near_names_only() {
        assert_eq!(
            near("reviwer", ["reviewer", "summarizer"]),
            Some("reviewer")
        );
        assert_eq!(near("zzzzzz", ["reviewer", "summarizer"]), None);
    }
}
