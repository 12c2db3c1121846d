//! git's conflict markers in memory text. A line git takes for one in a
//! memory file stops every `axe-sync` for good (it commits nothing that
//! holds a pair, as a person's unfinished `git merge` would), and a sync
//! refuses such a file when it arrives from another machine. So no write
//! of axe puts one there: reflect, learn_fact, remember and the run log
//! keep each marker line of what they are given one space in
//! ([`neutralise`]). Neutralised rather than refused, for every path
//! alike: a run's answer logged after the fact cannot be asked again, a
//! model that read a conflict is right to note it, and one space in
//! renders as the same markdown, so nothing is lost. Every marker line is
//! moved, paired or not, since a lone `<<<<<<<` in one entry and a lone
//! `>>>>>>>` in the next make a pair in the file. Idempotent: a recalled
//! text written back is written as it is.

use std::borrow::Cow;

/// Whether `line` (without its `\n`) starts with git's marker `mark`
/// (seven `<` or `>`) as a merge writes it: alone, or followed by a
/// space (and the side's label), a tab or the `\r` of a CRLF file.
fn starts(line: &[u8], mark: &[u8; 7]) -> bool {
    line.starts_with(mark) && matches!(line.get(7), None | Some(b' ' | b'\t' | b'\r'))
}

/// Whether `line` is a conflict marker that opens (`<<<<<<<`) or closes
/// (`>>>>>>>`) a conflict.
pub fn is_marker(line: &[u8]) -> bool {
    starts(line, b"<<<<<<<") || starts(line, b">>>>>>>")
}

/// An opening marker line followed later by a closing one, each alone or
/// followed by a space, as the pre-commit hook `axe-sync init` installs
/// matches them: what an unresolved `git merge` leaves, which `axe-sync`
/// never commits or merges in. (`=======` alone is a markdown heading
/// underline, so it is not enough.) [`is_marker`] takes a few more lines
/// (a tab or a CRLF's `\r` after the marker), so a neutralised text is
/// clear of this rule and of any stricter one.
pub fn has_conflict_markers(bytes: &[u8]) -> bool {
    let strict = |line: &[u8], mark: &[u8; 7]| {
        line.starts_with(mark) && matches!(line.get(7), None | Some(b' '))
    };
    let mut opened = false;
    for line in bytes.split(|&b| b == b'\n') {
        if strict(line, b"<<<<<<<") {
            opened = true;
        } else if opened && strict(line, b">>>>>>>") {
            return true;
        }
    }
    false
}

/// `text` with every marker line ([`is_marker`]) one space in; as it is
/// (borrowed) when it has none.
pub fn neutralise(text: &[u8]) -> Cow<'_, [u8]> {
    // Most texts hold neither run of seven: one quick search each.
    let holds = |mark: &[u8]| memchr::memmem::find(text, mark).is_some();
    if !holds(b"<<<<<<<") && !holds(b">>>>>>>") {
        return Cow::Borrowed(text);
    }
    let marked = |line: &[u8]| is_marker(line.strip_suffix(b"\n").unwrap_or(line));
    if !text.split_inclusive(|&b| b == b'\n').any(marked) {
        return Cow::Borrowed(text);
    }
    let mut out = Vec::with_capacity(text.len() + 8);
    for line in text.split_inclusive(|&b| b == b'\n') {
        if marked(line) {
            out.push(b' ');
        }
        out.extend_from_slice(line);
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_lines_go_one_space_in_and_nothing_else_moves() {
        let text =
            b"a\n<<<<<<< ours\nx\n=======\ny\n>>>>>>> theirs\n<<<<<<<\n>>>>>>>\r\n>>>>>>>\t1";
        let out = neutralise(text);
        assert_eq!(
            &*out,
            b"a\n <<<<<<< ours\nx\n=======\ny\n >>>>>>> theirs\n <<<<<<<\n >>>>>>>\r\n >>>>>>>\t1"
        );
        assert!(has_conflict_markers(text));
        assert!(!has_conflict_markers(&out));
        assert_eq!(&*neutralise(&out), &*out, "idempotent");
        for same in [
            &b"Title\n=======\n"[..],
            b"<<<<<<<< eight\n",
            b">>>>>>>x\n",
            b"> quoted\n",
            b" <<<<<<< in already\n",
            b"",
        ] {
            assert!(matches!(neutralise(same), Cow::Borrowed(_)), "{same:?}");
        }
    }

    #[test]
    fn a_conflict_is_an_opening_then_a_closing_marker() {
        assert!(has_conflict_markers(
            b"a\n<<<<<<< ours\nx\n=======\ny\n>>>>>>> theirs\n"
        ));
        assert!(has_conflict_markers(b"<<<<<<<\n>>>>>>>"));
        assert!(!has_conflict_markers(b"Title\n=======\n\ntext\n"));
        assert!(!has_conflict_markers(b">>>>>>> alone\n<<<<<<< after\n"));
    }
}
