//! A unified diff of two texts, as `diff -u` prints it, for
//! `axe-notes-consolidate --dry-run`. Notes files are usually small (their
//! caps are thousands of characters), but a file is not bound to its cap
//! (a topic written by hand, a sync), so the edit script comes from
//! `similar`, whose cost grows with the lines and the changes, never with
//! lines × lines; the hunks are written here, in `diff -u`'s format.

use std::time::{Duration, Instant};

/// Lines of context around each change.
const CONTEXT: usize = 3;

/// How long the search for the shortest edit script may take: lines
/// moved about in a large file can make it run for hours (and recurse
/// deep enough to overflow the stack). Past it, what is left unsearched
/// is shown removed and added whole, a diff as true, only longer. A file
/// of 20 MiB with a few changes takes well under a second.
const SEARCH: Duration = Duration::from_secs(5);

/// One line of the edit script.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Same(usize, usize),
    Gone(usize),
    Added(usize),
}

/// The unified diff turning `old` into `new`, labelled `a/<path>` and
/// `b/<path>` (`/dev/null` for a side that does not exist); empty when
/// they are the same.
pub fn unified(path: &str, old: Option<&str>, new: Option<&str>) -> String {
    unified_within(path, old, new, Some(SEARCH))
}

/// [`unified`] with the search given `search` (`None`: as long as it
/// takes).
fn unified_within(
    path: &str,
    old: Option<&str>,
    new: Option<&str>,
    search: Option<Duration>,
) -> String {
    // Lines with their ends: a `\r` or a last newline gained or lost is a
    // change, as it is to `diff`.
    let a: Vec<&str> = old.unwrap_or_default().split_inclusive('\n').collect();
    let b: Vec<&str> = new.unwrap_or_default().split_inclusive('\n').collect();
    let ops = script(&a, &b, search);
    if ops.iter().all(|op| matches!(op, Op::Same(..))) && old.is_some() == new.is_some() {
        return String::new();
    }
    let label = |side: &str, there: bool| match there {
        true => format!("{side}/{path}"),
        false => "/dev/null".to_owned(),
    };
    let mut out = format!(
        "--- {}\n+++ {}\n",
        label("a", old.is_some()),
        label("b", new.is_some())
    );
    let changed: Vec<usize> = (0..ops.len())
        .filter(|&i| !matches!(ops[i], Op::Same(..)))
        .collect();
    let mut i = 0;
    while i < changed.len() {
        // A hunk: changes closer than twice the context run together.
        let start = changed[i].saturating_sub(CONTEXT);
        let mut end = changed[i];
        while i + 1 < changed.len() && changed[i + 1] <= end + 2 * CONTEXT + 1 {
            i += 1;
            end = changed[i];
        }
        let end = (end + CONTEXT + 1).min(ops.len());
        let hunk = &ops[start..end];
        let (old_start, new_start) = first_lines(&ops[..start]);
        let old_len = hunk.iter().filter(|o| !matches!(o, Op::Added(_))).count();
        let new_len = hunk.iter().filter(|o| !matches!(o, Op::Gone(_))).count();
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            range(old_start, old_len),
            range(new_start, new_len)
        ));
        for op in hunk {
            let (mark, line) = match *op {
                Op::Same(x, _) => (' ', a[x]),
                Op::Gone(x) => ('-', a[x]),
                Op::Added(y) => ('+', b[y]),
            };
            out.push(mark);
            match line.strip_suffix('\n') {
                Some(line) => {
                    out.push_str(line);
                    out.push('\n');
                }
                None => {
                    out.push_str(line);
                    out.push_str("\n\\ No newline at end of file\n");
                }
            }
        }
        i += 1;
    }
    out
}

/// The lines of each side before a hunk, from 0.
fn first_lines(before: &[Op]) -> (usize, usize) {
    let old = before.iter().filter(|o| !matches!(o, Op::Added(_))).count();
    let new = before.iter().filter(|o| !matches!(o, Op::Gone(_))).count();
    (old, new)
}

/// `start,len` as a hunk header gives it: lines from 1, and an empty
/// range starting at the line before.
fn range(start: usize, len: usize) -> String {
    match len {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{len}", start + 1),
    }
}

/// The edit script from `a` to `b`, removals before additions at each
/// place: Myers' shortest edit script, by `similar`, in linear memory and
/// with Git's bound on its search, so a file of any size gets a diff of
/// what changed; the search ends within `search`.
///
/// Myers' is called by name, with the hooks `capture_diff_slices_deadline`
/// gives it, so the same script comes out: through that function, which
/// takes the algorithm as a value, the other four were compiled in too,
/// each with its own copies of Myers' (58k lines of LLVM IR, a ninth of
/// the application crate, against 15k now).
fn script(a: &[&str], b: &[&str], search: Option<Duration>) -> Vec<Op> {
    use similar::algorithms::{Capture, Compact, Replace, myers};
    let mut ops = Vec::with_capacity(a.len().max(b.len()));
    let deadline = search.map(|search| Instant::now() + search);
    let mut hook = Compact::new(Replace::new(Capture::new()), a, b);
    // The hooks' error is `Infallible`.
    let Ok(()) = myers::diff_deadline(&mut hook, a, 0..a.len(), b, 0..b.len(), deadline);
    for op in hook.into_inner().into_inner().into_ops() {
        let (tag, old, new) = op.as_tag_tuple();
        match tag {
            similar::DiffTag::Equal => ops.extend(old.zip(new).map(|(i, j)| Op::Same(i, j))),
            _ => {
                ops.extend(old.map(Op::Gone));
                ops.extend(new.map(Op::Added));
            }
        }
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::unified;

    #[test]
    fn a_changed_line_is_a_hunk_with_its_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let new = "a\nb\nc\nd\nE\nf\ng\nh\n";
        assert_eq!(
            unified("m.md", Some(old), Some(new)),
            "--- a/m.md\n+++ b/m.md\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n"
        );
    }

    #[test]
    fn a_new_file_comes_from_dev_null_and_the_same_text_is_no_diff() {
        assert_eq!(
            unified("w.md", None, Some("x\ny\n")),
            "--- /dev/null\n+++ b/w.md\n@@ -0,0 +1,2 @@\n+x\n+y\n"
        );
        assert_eq!(unified("w.md", Some("x\n"), Some("x\n")), "");
    }

    #[test]
    fn far_apart_changes_are_two_hunks() {
        let old: String = (0..20).map(|i| format!("{i}\n")).collect();
        let new = old.replace("2\n", "two\n").replace("17\n", "seventeen\n");
        let diff = unified("m.md", Some(&old), Some(&new));
        assert_eq!(diff.matches("@@ -").count(), 2, "{diff}");
        assert!(diff.contains("-2\n+two\n"));
        assert!(diff.contains("-17\n+seventeen\n"));
    }
}

#[cfg(test)]
mod edges {
    use super::unified;

    #[test]
    fn a_final_newline_gained_or_lost_is_a_change_and_is_said() {
        let diff = unified("m.md", Some("a\nb"), Some("a\nb\n"));
        assert_eq!(
            diff,
            "--- a/m.md\n+++ b/m.md\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"
        );
        let diff = unified("m.md", Some("a\n"), Some("a"));
        assert_eq!(
            diff,
            "--- a/m.md\n+++ b/m.md\n@@ -1 +1 @@\n-a\n+a\n\\ No newline at end of file\n"
        );
    }

    #[test]
    fn crlf_line_ends_changed_are_a_change() {
        let diff = unified("m.md", Some("a\r\nb\r\n"), Some("a\nb\n"));
        assert_eq!(
            diff,
            "--- a/m.md\n+++ b/m.md\n@@ -1,2 +1,2 @@\n-a\r\n-b\r\n+a\n+b\n"
        );
    }

    #[test]
    fn an_empty_file_made_or_emptied() {
        assert_eq!(
            unified("m.md", Some(""), Some("x\n")),
            "--- a/m.md\n+++ b/m.md\n@@ -0,0 +1 @@\n+x\n"
        );
        assert_eq!(
            unified("m.md", Some("x\n"), None),
            "--- a/m.md\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
        );
    }

    /// The peak resident memory of this process, in kB.
    fn peak_kb() -> usize {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    }

    #[test]
    fn two_large_texts_with_nothing_in_common_cost_no_lines_times_lines_table() {
        // 6000 × 6000 lines: a table of every pair would be 144 MB.
        let old: String = (0..6000).map(|i| format!("old {i}\n")).collect();
        let new: String = (0..6000).map(|i| format!("new {i}\n")).collect();
        let before = peak_kb();
        let diff = unified("m.md", Some(&old), Some(&new));
        let grew = peak_kb().saturating_sub(before);
        assert!(grew < 48 * 1024, "the diff took {grew} kB more at its peak");
        assert_eq!(diff.lines().filter(|l| l.starts_with('-')).count(), 6001);
        assert_eq!(diff.lines().filter(|l| l.starts_with('+')).count(), 6001);
        assert!(
            diff.contains("@@ -1,6000 +1,6000 @@\n-old 0\n"),
            "{}",
            &diff[..200]
        );
    }

    #[test]
    fn a_large_text_with_one_line_changed_is_one_small_hunk() {
        let old: String = (0..20000).map(|i| format!("line {i}\n")).collect();
        let new = old.replace("line 10000\n", "changed\n");
        let diff = unified("m.md", Some(&old), Some(&new));
        assert_eq!(
            diff,
            "--- a/m.md\n+++ b/m.md\n@@ -9998,7 +9998,7 @@\n line 9997\n line 9998\n line 9999\n-line 10000\n+changed\n line 10001\n line 10002\n line 10003\n"
        );
    }
}

#[cfg(test)]
mod large {
    use super::unified_within;

    #[test]
    fn a_20_mib_file_changed_at_both_ends_is_two_small_hunks() {
        // Changes this far apart leave a middle of a million lines on each
        // side, whose every pair no table could hold: the diff is still
        // the two lines that changed, not the whole file removed and added.
        // No deadline, so that a slow machine cannot cut the search short:
        // what is tested is that no size makes it give up.
        let old: String = (0..1_700_000).map(|i| format!("line {i:07}\n")).collect();
        assert!(old.len() >= 20 << 20, "{}", old.len());
        let new = old
            .replace("line 0000004\n", "four\n")
            .replace("line 1699995\n", "almost the last\n");
        let diff = unified_within("m.md", Some(&old), Some(&new), None);
        assert!(diff.len() < 1000, "a diff of {} bytes", diff.len());
        assert_eq!(
            diff,
            "--- a/m.md\n+++ b/m.md\n\
             @@ -2,7 +2,7 @@\n line 0000001\n line 0000002\n line 0000003\n-line 0000004\n+four\n line 0000005\n line 0000006\n line 0000007\n\
             @@ -1699993,7 +1699993,7 @@\n line 1699992\n line 1699993\n line 1699994\n-line 1699995\n+almost the last\n line 1699996\n line 1699997\n line 1699998\n"
        );
    }
}

#[cfg(test)]
mod hard {
    use std::time::{Duration, Instant};

    use super::unified;

    #[test]
    fn a_large_file_whose_lines_are_all_moved_still_diffs_in_moments() {
        // Every line kept but in another order: the hardest input for an
        // edit script, where a search for the shortest could run for hours.
        let n: u64 = 300_000;
        let old: String = (0..n).map(|i| format!("line {i}\n")).collect();
        let new: String = (0..n)
            .map(|i| format!("line {}\n", (i * 7919 + 13) % n))
            .collect();
        let start = Instant::now();
        let diff = unified("m.md", Some(&old), Some(&new));
        let took = start.elapsed();
        // The search's 5 s, and the rest of the work on a loaded machine.
        assert!(took < Duration::from_secs(60), "the diff took {took:?}");
        let count = |mark: char| diff.lines().filter(|l| l.starts_with(mark)).count();
        // Both sides have as many lines, so as many go as come, and with
        // the headers (`---`, `+++`) at least one of each.
        assert!(
            diff.starts_with("--- a/m.md\n+++ b/m.md\n@@ -"),
            "{}",
            &diff[..100]
        );
        assert!(count('-') > 1, "{took:?}");
        assert_eq!(count('-'), count('+'), "{took:?}");
        eprintln!("took {took:?}");
    }
}
