//! A unified diff of two texts, as `diff -u` prints it, for
//! `axe-notes-consolidate --dry-run`. Notes files are small (their caps
//! are thousands of characters), so the longest common subsequence of
//! their lines, a table of lines × lines, is plenty; no crate needed.

/// Lines of context around each change.
const CONTEXT: usize = 3;

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
    let a: Vec<&str> = old.unwrap_or_default().lines().collect();
    let b: Vec<&str> = new.unwrap_or_default().lines().collect();
    let ops = script(&a, &b);
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
            let line = match *op {
                Op::Same(x, _) => format!(" {}", a[x]),
                Op::Gone(x) => format!("-{}", a[x]),
                Op::Added(y) => format!("+{}", b[y]),
            };
            out.push_str(&line);
            out.push('\n');
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

/// The edit script from `a` to `b` through their longest common
/// subsequence, removals before additions at each place.
fn script(a: &[&str], b: &[&str]) -> Vec<Op> {
    let (n, m) = (a.len(), b.len());
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = match a[i] == b[j] {
                true => lcs[i + 1][j + 1] + 1,
                false => lcs[i + 1][j].max(lcs[i][j + 1]),
            };
        }
    }
    let (mut i, mut j, mut ops) = (0, 0, Vec::new());
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push(Op::Same(i, j));
            i += 1;
            j += 1;
        } else if j == m || (i < n && lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(Op::Gone(i));
            i += 1;
        } else {
            ops.push(Op::Added(j));
            j += 1;
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
