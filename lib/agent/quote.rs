//! Strings as TOML writes them, for the scaffold: quoted so they read
//! back exactly.

/// A TOML basic string. Go pasted the name between quotes unescaped; a
/// name with a quote then made a file that did not parse.
pub fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        push_escaped(&mut out, c);
    }
    out.push('"');
    out
}

/// `s` as a TOML string that reads back exactly: a multi-line basic
/// string when it has line breaks, so a persona in the file reads as it
/// was typed, else [`toml_string`]. TOML drops the newline right after
/// the opening `"""`, not the text's own first newline. Newlines and tabs
/// stay as they are; a CR is escaped, since a parser may read CRLF as LF.
pub(super) fn toml_text(s: &str) -> String {
    if !s.contains('\n') {
        return toml_string(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    out.push_str("\"\"\"\n");
    for c in s.chars() {
        match c {
            '\n' | '\t' => out.push(c),
            c => push_escaped(&mut out, c),
        }
    }
    out.push_str("\"\"\"");
    out
}

/// `c` as it goes inside a TOML basic string: every quote escaped (so no
/// `"""` can end a multi-line one), backslashes and control characters
/// too.
fn push_escaped(out: &mut String, c: char) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
        c => out.push(c),
    }
}
