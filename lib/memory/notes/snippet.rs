//! What a search result shows of its section: the heading, and the line
//! of the first match, cut down around the match when it is long.

/// The most characters of a line shown; a longer one is cut.
const WIDTH: usize = 160;
/// How many characters before the match a cut line keeps, at most.
const BEFORE: usize = 50;

/// The heading of a section whose first line is `first`, without its
/// `#`s; none for the text before a file's first heading.
pub fn heading(first: &str) -> Option<String> {
    first
        .starts_with('#')
        .then(|| first.trim_start_matches('#').trim().to_owned())
}

/// `line`, or when it is longer than [`WIDTH`] characters, about that
/// many around byte `at` (where the match begins), cut between words,
/// with `…` where something was cut.
pub fn snippet(line: &str, at: usize) -> String {
    if line.chars().count() <= WIDTH {
        return line.to_owned();
    }
    let at = floor(line, at.min(line.len()));
    let mut start = line[..at]
        .char_indices()
        .rev()
        .nth(BEFORE - 1)
        .map_or(0, |(i, _)| i);
    // Not in the middle of a word: from the next one on.
    if start > 0
        && let Some((i, c)) = line[start..at]
            .char_indices()
            .find(|(_, c)| c.is_whitespace())
    {
        start += i + c.len_utf8();
    }
    let mut end = line[start..]
        .char_indices()
        .nth(WIDTH)
        .map_or(line.len(), |(i, _)| start + i);
    if end < line.len()
        && let Some((i, _)) = line[at..end]
            .char_indices()
            .rev()
            .find(|(_, c)| c.is_whitespace())
        && i > 0
    {
        end = at + i;
    }
    format!(
        "{}{}{}",
        if start > 0 { "…" } else { "" },
        line[start..end].trim(),
        if end < line.len() { "…" } else { "" }
    )
}

/// The start of the character `at` is in.
fn floor(text: &str, mut at: usize) -> usize {
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_lose_their_marks() {
        assert_eq!(heading("## 10:00").as_deref(), Some("10:00"));
        assert_eq!(heading("#Deploys ").as_deref(), Some("Deploys"));
        assert_eq!(heading("Deploys"), None);
    }

    #[test]
    fn long_lines_are_cut_around_the_match_between_words() {
        assert_eq!(snippet("short line", 6), "short line");
        let words: Vec<String> = (0..100).map(|i| format!("wörd{i}")).collect();
        let line = words.join(" ");
        let at = line.find("wörd50").unwrap();
        let cut = snippet(&line, at);
        assert!(cut.starts_with("…wörd4"), "{cut}");
        assert!(cut.ends_with("…"), "{cut}");
        assert!(cut.contains("wörd50"), "{cut}");
        assert!(cut.chars().count() <= WIDTH + 2, "{cut}");
        // Each end at a whole word.
        let inner = cut.trim_matches('…');
        assert!(
            inner.split(' ').all(|w| words.contains(&w.to_owned())),
            "{cut}"
        );
        // A match at the start keeps the start; one at the end, the end.
        let first = snippet(&line, 0);
        assert!(
            first.starts_with("wörd0 ") && first.ends_with('…'),
            "{first}"
        );
        let last = snippet(&line, line.find("wörd99").unwrap());
        assert!(last.starts_with('…') && last.ends_with("wörd99"), "{last}");
        // A line with no space at all is still cut, inside a character
        // never.
        let solid = "é".repeat(300);
        let cut = snippet(&solid, 301);
        assert_eq!(cut.trim_matches('…').chars().count(), WIDTH, "{cut}");
    }
}
