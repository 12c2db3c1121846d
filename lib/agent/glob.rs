//! Glob patterns of an agent's `files`: Go's `filepath.Match` syntax for
//! each path segment (`*`, `?`, `[a-z]`, `[^a-z]`, `\` escapes), plus `**`
//! as a whole segment for any number of directories.
//!
//! A pattern is split at `/` and cleaned the way Go's `filepath.Join`
//! cleaned it (`.` and empty segments dropped, `..` removing the segment
//! before it), so a leading `/` still means "inside the workdir". A
//! pattern whose `..` climbs above the workdir can match nothing in it.

/// A compiled pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct Pattern {
    pub segments: Vec<Segment>,
    /// `..` went above the start: nothing inside the workdir matches.
    pub escapes: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Segment {
    /// A name without wildcards: looked up, not listed.
    Literal(String),
    /// A name with wildcards, matched against directory listings.
    Wild(Wild),
    /// `**`: zero or more directories.
    Any,
}

/// One segment's wildcard pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct Wild(Vec<Token>);

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Char(char),
    /// `?`
    One,
    /// `*`
    Star,
    /// `[...]` or `[^...]`
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

/// The pattern was malformed; Go's `filepath.ErrBadPattern`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("syntax error in pattern")]
pub struct BadPattern;

impl Pattern {
    pub fn new(pattern: &str) -> Result<Pattern, BadPattern> {
        let mut segments = Vec::new();
        let mut escapes = false;
        for part in pattern.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    if segments.pop().is_none() {
                        escapes = true;
                    }
                }
                "**" => segments.push(Segment::Any),
                _ if !part.contains(['*', '?', '[', '\\']) => {
                    segments.push(Segment::Literal(part.to_owned()))
                }
                _ => segments.push(Segment::Wild(Wild::new(part)?)),
            }
        }
        Ok(Pattern { segments, escapes })
    }
}

impl Wild {
    fn new(segment: &str) -> Result<Wild, BadPattern> {
        let mut tokens = Vec::new();
        let mut chars = segment.chars().peekable();
        while let Some(c) = chars.next() {
            tokens.push(match c {
                '*' => Token::Star,
                '?' => Token::One,
                '\\' => Token::Char(chars.next().ok_or(BadPattern)?),
                '[' => {
                    let negated = chars.next_if_eq(&'^').is_some();
                    let mut ranges = Vec::new();
                    loop {
                        if !ranges.is_empty() && chars.next_if_eq(&']').is_some() {
                            break;
                        }
                        let lo = class_char(&mut chars)?;
                        let hi = if chars.next_if_eq(&'-').is_some() {
                            class_char(&mut chars)?
                        } else {
                            lo
                        };
                        ranges.push((lo, hi));
                    }
                    Token::Class { negated, ranges }
                }
                c => Token::Char(c),
            });
        }
        Ok(Wild(tokens))
    }

    /// Whether `name` (one path segment) matches.
    pub fn matches(&self, name: &str) -> bool {
        let name: Vec<char> = name.chars().collect();
        let tokens = &self.0;
        let (mut t, mut n) = (0, 0);
        // Where to resume after the last `*`: (token after it, name index).
        let mut resume: Option<(usize, usize)> = None;
        while n < name.len() {
            match tokens.get(t) {
                Some(Token::Star) => {
                    resume = Some((t + 1, n));
                    t += 1;
                    continue;
                }
                Some(tok) if tok.accepts(name[n]) => {
                    t += 1;
                    n += 1;
                    continue;
                }
                _ => {}
            }
            match resume {
                Some((rt, rn)) => {
                    t = rt;
                    n = rn + 1;
                    resume = Some((rt, rn + 1));
                }
                None => return false,
            }
        }
        tokens[t..].iter().all(|tok| *tok == Token::Star)
    }
}

impl Token {
    fn accepts(&self, c: char) -> bool {
        match self {
            Token::Char(x) => *x == c,
            Token::One => true,
            Token::Star => false,
            Token::Class { negated, ranges } => {
                ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != *negated
            }
        }
    }
}

/// One character of a class, as Go's `getEsc`: `-` and `]` must be
/// escaped, and the class must go on after it.
fn class_char(chars: &mut std::iter::Peekable<std::str::Chars>) -> Result<char, BadPattern> {
    let c = match chars.next() {
        None | Some('-' | ']') => return Err(BadPattern),
        Some('\\') => chars.next().ok_or(BadPattern)?,
        Some(c) => c,
    };
    if chars.peek().is_none() {
        return Err(BadPattern);
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wild(p: &str) -> Wild {
        Wild::new(p).unwrap()
    }

    #[test]
    fn segments_match_like_go_filepath_match() {
        let cases = [
            ("*.rs", "main.rs", true),
            ("*.rs", "main.rs.bak", false),
            ("*", ".hidden", true),
            ("a*b*c", "abc", true),
            ("a*b*c", "axxbyyc", true),
            ("a*b*c", "axxbyy", false),
            ("*x", "xxx", true),
            ("?", "é", true),
            ("??", "é", false),
            ("[a-c]at", "bat", true),
            ("[a-c]at", "rat", false),
            ("[^a-c]at", "rat", true),
            ("[^a-c]at", "cat", false),
            ("[\\]]", "]", true),
            ("\\*", "*", true),
            ("\\*", "x", false),
            ("*[0-9]", "file7", true),
        ];
        for (p, name, want) in cases {
            assert_eq!(wild(p).matches(name), want, "{p} vs {name}");
        }
    }

    #[test]
    fn malformed_patterns_are_rejected() {
        for p in ["[", "[]", "[^]", "[a-]", "[-a]", "a\\", "[a", "[a-b"] {
            assert_eq!(Wild::new(p), Err(BadPattern), "{p}");
        }
    }

    #[test]
    fn patterns_are_cleaned_like_filepath_join() {
        let p = Pattern::new("/src/./a/../**/*.rs").unwrap();
        assert!(!p.escapes);
        assert_eq!(p.segments.len(), 3);
        assert_eq!(p.segments[0], Segment::Literal("src".into()));
        assert_eq!(p.segments[1], Segment::Any);
        assert!(Pattern::new("../x").unwrap().escapes);
        assert!(!Pattern::new("a/../x").unwrap().escapes);
    }
}
