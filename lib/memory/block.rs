//! A block of memory for a prompt, filled item by item within a budget of
//! characters: the one rule every budgeted block follows (the state's
//! Session Memory block and the context over every kind).
//!
//! Items are offered most wanted first. Each goes in if it fits, with the
//! headings it needs that are not shown yet; one that does not fit is left
//! out and later, smaller ones may still go in, so nothing is hidden just
//! because something larger came before it. The text never passes the
//! budget by a character, and every item left out is listed.

use std::borrow::Cow;

/// One item of a block, or one left out of it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Part<'a> {
    /// What kind of memory it is: `task`, `error`, `decision`, `fact`,
    /// `memory`, `log`, `world` or `daily`.
    pub kind: &'static str,
    /// What it is: a state item's line, a file's path, a run's time.
    pub item: Cow<'a, str>,
    /// The characters it adds (or would have added) where it came.
    /// `None` for a file left out unread: its size alone shows it could
    /// not fit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chars: Option<usize>,
    /// The size of a file left out unread.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
}

impl Part<'_> {
    /// The part with its item copied, to outlive what it was read from.
    pub fn into_owned(self) -> Part<'static> {
        Part {
            item: Cow::Owned(self.item.into_owned()),
            ..self
        }
    }
}

/// A block being filled.
#[derive(Debug, Default)]
pub struct Block<'a> {
    budget: usize,
    /// The block so far; empty when nothing fitted.
    pub text: String,
    used: usize,
    /// Headings already in `text`.
    shown: Vec<&'static str>,
    /// Whether `included` and `left_out` are kept.
    listing: bool,
    pub included: Vec<Part<'a>>,
    pub left_out: Vec<Part<'a>>,
}

/// Where an item goes: the heading of its section (`# Title\n`, a blank
/// line put before it when the block already has text), and within the
/// section the heading of its group, written as given.
#[derive(Debug, Clone, Copy)]
pub struct Place {
    pub section: &'static str,
    pub group: &'static str,
}

impl<'a> Block<'a> {
    /// A block that keeps only its text: a large store leaves out
    /// thousands of items, and listing them is for those who ask.
    pub fn new(budget: usize) -> Block<'a> {
        Block {
            budget,
            ..Block::default()
        }
    }

    /// A block that lists what went in and what was left out.
    pub fn listing(budget: usize) -> Block<'a> {
        Block {
            listing: true,
            ..Block::new(budget)
        }
    }

    /// The characters still free.
    pub fn room(&self) -> usize {
        self.budget - self.used
    }

    /// The characters of the text.
    pub fn chars(&self) -> usize {
        self.used
    }

    /// Offers one item at `place`, its text the concatenation of `parts`
    /// (so an item left out is counted, never copied). Returns whether it
    /// went in.
    pub fn offer(
        &mut self,
        place: Place,
        kind: &'static str,
        item: Cow<'a, str>,
        parts: &[&str],
    ) -> bool {
        let (section, group) = (place.section, place.group);
        let new_section = !section.is_empty() && !self.shown.contains(&section);
        let new_group = !group.is_empty() && (new_section || !self.shown.contains(&group));
        let gap = new_section && !self.text.is_empty();
        let headings = [(gap, "\n"), (new_section, section), (new_group, group)];
        let heads = headings.iter().filter(|(new, _)| *new).map(|(_, h)| h);
        let cost: usize = heads.clone().chain(parts).map(|s| s.chars().count()).sum();
        let part = self.listing.then_some(Part {
            kind,
            item,
            chars: Some(cost),
            bytes: None,
        });
        let fits = cost <= self.room();
        if fits {
            self.used += cost;
            for s in heads.chain(parts) {
                self.text.push_str(s);
            }
            for heading in [(new_section, section), (new_group, group)] {
                if let (true, h) = heading {
                    self.shown.push(h);
                }
            }
            self.included.extend(part);
        } else {
            self.left_out.extend(part);
        }
        fits
    }

    /// Lists a file left out without reading it: at `bytes` bytes it holds
    /// at least `bytes / 4` characters, more than [`Block::room`].
    pub fn skip_file(&mut self, kind: &'static str, path: Cow<'a, str>, bytes: u64) {
        if !self.listing {
            return;
        }
        self.left_out.push(Part {
            kind,
            item: path,
            chars: None,
            bytes: Some(bytes),
        });
    }

    /// Whether a file of `bytes` bytes could fit: UTF-8 spends at most 4
    /// bytes on a character, so one of more than 4 bytes for each
    /// character of room cannot.
    pub fn could_fit(&self, bytes: u64) -> bool {
        bytes / 4 <= self.room() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Place = Place {
        section: "# A\n",
        group: "",
    };
    const B: Place = Place {
        section: "# B\n",
        group: "## g\n",
    };

    fn offer(b: &mut Block, place: Place, text: &str) -> bool {
        b.offer(place, "fact", Cow::Owned(text.to_owned()), &[text])
    }

    #[test]
    fn headings_come_once_and_sections_are_apart() {
        let mut b = Block::listing(100);
        assert!(offer(&mut b, A, "1\n"));
        assert!(offer(&mut b, B, "2\n"));
        assert!(offer(&mut b, B, "3\n"));
        assert!(offer(&mut b, A, "4\n"));
        assert_eq!(b.text, "# A\n1\n\n# B\n## g\n2\n3\n4\n");
        assert_eq!(b.chars(), b.text.chars().count());
        let costs: Vec<usize> = b.included.iter().map(|p| p.chars.unwrap()).collect();
        assert_eq!(costs, [6, 12, 2, 2]);
    }

    #[test]
    fn a_left_out_item_does_not_hide_smaller_ones_nor_show_its_heading() {
        let mut b = Block::listing(12);
        assert!(offer(&mut b, A, "1\n"));
        assert!(!offer(&mut b, B, "too long\n"));
        assert!(offer(&mut b, A, "éé\n"));
        assert!(!offer(&mut b, B, "x\n"), "the heading counts");
        assert_eq!(b.text, "# A\n1\néé\n");
        assert_eq!(b.left_out.len(), 2);
        assert_eq!(b.room(), 3);
        assert!(b.could_fit(12) && !b.could_fit(16));
    }
}
