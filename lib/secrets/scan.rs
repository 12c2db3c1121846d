//! The one pass over a text that finds what looks like a credential, and
//! the redaction made from it.
//!
//! Bytes, not strings: the run log holds whatever it was given. Every
//! rule starts with a pair of bytes of a small set (a bit looked up per
//! byte), which dismisses nearly every word at its first two bytes, so a
//! text costs little more than reading it. The known keys are looked for
//! apart, each with `memchr::memmem` (SIMD).
//!
//! Boundaries are what keeps ordinary text whole: a token must start
//! where a word starts and be long and random enough (two of lower case,
//! upper case and digits), so `sk-learn`, `Bearer responsibilities`, a
//! sha256 in an `if_match` or `https://example.com/a?b=c` stay as they
//! are. Every range found starts and ends at an ASCII byte, so redacting
//! valid UTF-8 leaves valid UTF-8.

use std::borrow::Cow;
use std::ops::Range;

use memchr::memmem;

use super::kind::Kind;

/// Known keys shorter than this are not looked for: `api_key = "x"` for
/// a local server is no secret, and would mangle every text holding an x.
/// The same bound as the key redaction of provider replies.
pub const MIN_KEY_CHARS: usize = 8;

/// One value found, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub kind: Kind,
    pub range: Range<usize>,
}

/// A text with every value found replaced by its kind's marker, and the
/// kinds replaced, in order. Borrowed when nothing was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redacted<'a> {
    pub text: Cow<'a, [u8]>,
    pub kinds: Vec<Kind>,
}

/// A token known by its prefix: at least `min` token bytes after it.
struct Prefixed {
    prefix: &'static [u8],
    kind: Kind,
    min: usize,
}

/// The prefixed tokens, longer prefixes before the shorter ones they
/// start with (`sk-ant-` before `sk-`).
const PREFIXED: &[Prefixed] = &[
    p(b"sk-ant-", Kind::AnthropicKey, 20),
    p(b"sk-or-", Kind::OpenRouterKey, 20),
    p(b"sk-", Kind::OpenAiKey, 20),
    p(b"sk_live_", Kind::StripeKey, 16),
    p(b"sk_test_", Kind::StripeKey, 16),
    p(b"rk_live_", Kind::StripeKey, 16),
    p(b"ghp_", Kind::GithubToken, 30),
    p(b"gho_", Kind::GithubToken, 30),
    p(b"ghu_", Kind::GithubToken, 30),
    p(b"ghs_", Kind::GithubToken, 30),
    p(b"ghr_", Kind::GithubToken, 30),
    p(b"github_pat_", Kind::GithubToken, 30),
    p(b"glpat-", Kind::GitlabToken, 20),
    p(b"xoxa-", Kind::SlackToken, 10),
    p(b"xoxb-", Kind::SlackToken, 10),
    p(b"xoxp-", Kind::SlackToken, 10),
    p(b"xoxr-", Kind::SlackToken, 10),
    p(b"xoxs-", Kind::SlackToken, 10),
    p(b"AIza", Kind::GoogleApiKey, 30),
    p(b"npm_", Kind::NpmToken, 30),
    p(b"hf_", Kind::HuggingFaceToken, 30),
    p(b"tvly-", Kind::TavilyKey, 20),
];

const fn p(prefix: &'static [u8], kind: Kind, min: usize) -> Prefixed {
    Prefixed { prefix, kind, min }
}

/// What a label says the value after it is.
#[derive(Clone, Copy)]
enum Label {
    Authorization,
    Bearer,
    AwsSecret,
    ApiKey,
    Secret,
}

/// Labels, matched in any case, as whole words.
const LABELS: &[(&[u8], Label)] = &[
    (b"authorization", Label::Authorization),
    (b"bearer", Label::Bearer),
    (b"aws_secret_access_key", Label::AwsSecret),
    (b"secret_access_key", Label::AwsSecret),
    (b"aws_secret_key", Label::AwsSecret),
    (b"secretaccesskey", Label::AwsSecret),
    (b"x-api-key", Label::ApiKey),
    (b"api_key", Label::ApiKey),
    (b"api-key", Label::ApiKey),
    (b"apikey", Label::ApiKey),
    (b"access_token", Label::Secret),
    (b"refresh_token", Label::Secret),
    (b"auth_token", Label::Secret),
    (b"client_secret", Label::Secret),
    (b"secret_key", Label::Secret),
    (b"private_token", Label::Secret),
];

/// The schemes of an `Authorization:` value, in lower case.
const SCHEMES: &[&[u8]] = &[
    b"basic",
    b"bearer",
    b"token",
    b"digest",
    b"apikey",
    b"key",
    b"negotiate",
    b"ntlm",
    b"dpop",
    b"aws4-hmac-sha256",
];

/// The pairs of bytes a rule may start with, as a bitset: the first two
/// of each prefix, of each label (in any case, and after the `_` that
/// ends a longer name: `MY_API_KEY`), `AK` and `AS` of AWS key ids, `--`
/// of a PEM block, `:/` of `://`. One lookup dismisses nearly every word.
const STARTS: [u64; 1024] = {
    let mut t = [0u64; 1024];
    let mut i = 0;
    while i < PREFIXED.len() {
        let p = PREFIXED[i].prefix;
        set(&mut t, p[0], p[1]);
        i += 1;
    }
    let mut i = 0;
    while i < LABELS.len() {
        let l = LABELS[i].0;
        let firsts = [l[0].to_ascii_lowercase(), l[0].to_ascii_uppercase()];
        let seconds = [l[1].to_ascii_lowercase(), l[1].to_ascii_uppercase()];
        let mut a = 0;
        while a < 2 {
            set(&mut t, b'_', firsts[a]);
            let mut b = 0;
            while b < 2 {
                set(&mut t, firsts[a], seconds[b]);
                b += 1;
            }
            a += 1;
        }
        i += 1;
    }
    set(&mut t, b'A', b'K');
    set(&mut t, b'A', b'S');
    set(&mut t, b'-', b'-');
    set(&mut t, b':', b'/');
    t
};

const fn set(t: &mut [u64; 1024], a: u8, b: u8) {
    let pair = (a as usize) << 8 | b as usize;
    t[pair >> 6] |= 1 << (pair & 63);
}

/// Whether a rule may start with `a` then `b`.
fn starts(a: u8, b: u8) -> bool {
    let pair = (a as usize) << 8 | b as usize;
    STARTS[pair >> 6] >> (pair & 63) & 1 == 1
}

/// Everything in `text` that looks like a credential, and every
/// occurrence of the `known` keys (those of at least [`MIN_KEY_CHARS`]),
/// in order, overlapping finds merged into one.
pub fn find(text: &[u8], known: &[&str]) -> Vec<Found> {
    let mut found = Vec::new();
    // What was found is skipped whole: it holds nothing more to find (a
    // labelled value is named by a token it is, see `labelled`), and so a
    // text of many starts is still read once, a private key cut off at
    // the end or a long header value included.
    let mut past = 0;
    // Nothing is found in less than two bytes.
    for (i, pair) in text.windows(2).enumerate() {
        if i >= past
            && starts(pair[0], pair[1])
            && let Some(f) = at(text, i)
        {
            past = f.range.end;
            found.push(f);
        }
    }
    for key in known.iter().filter(|k| k.chars().count() >= MIN_KEY_CHARS) {
        let len = key.len();
        found.extend(memmem::find_iter(text, key.as_bytes()).map(|at| Found {
            kind: Kind::ProviderKey,
            range: at..at + len,
        }));
    }
    merge(found)
}

/// `text` with what [`find`] finds replaced by markers.
pub fn redact<'a>(text: &'a [u8], known: &[&str]) -> Redacted<'a> {
    let found = find(text, known);
    if found.is_empty() {
        return Redacted {
            text: Cow::Borrowed(text),
            kinds: Vec::new(),
        };
    }
    let mut out = Vec::with_capacity(text.len());
    let mut last = 0;
    for f in &found {
        out.extend_from_slice(&text[last..f.range.start]);
        out.extend_from_slice(f.kind.marker().as_bytes());
        last = f.range.end;
    }
    out.extend_from_slice(&text[last..]);
    Redacted {
        text: Cow::Owned(out),
        kinds: found.into_iter().map(|f| f.kind).collect(),
    }
}

/// Sorts `found` and merges overlapping finds, keeping the better name.
fn merge(mut found: Vec<Found>) -> Vec<Found> {
    found.sort_by_key(|f| (f.range.start, std::cmp::Reverse(f.range.end)));
    let mut merged: Vec<Found> = Vec::with_capacity(found.len());
    for f in found {
        match merged.last_mut() {
            Some(last) if f.range.start < last.range.end => {
                last.range.end = last.range.end.max(f.range.end);
                last.kind = last.kind.better(f.kind);
            }
            _ => merged.push(f),
        }
    }
    merged
}

/// The value starting at (or labelled at) `i`, if any.
fn at(text: &[u8], i: usize) -> Option<Found> {
    match text[i] {
        b':' => return url_password(text, i),
        b'-' => return private_key(text, i),
        // The end of a name such as `MY_API_KEY=` or `MY_SECRET_ACCESS_KEY`.
        b'_' => {
            return labelled(text, i + 1)
                .filter(|f| matches!(f.kind, Kind::ApiKey | Kind::Secret | Kind::AwsSecretKey));
        }
        _ => {}
    }
    // Not within a word or a token: so each token is read from its start
    // only, and the text once.
    if i > 0 && is_token(text[i - 1]) {
        return None;
    }
    token(text, i).or_else(|| labelled(text, i))
}

/// A token known by its shape (a prefix, an AWS key id) at `i`.
fn token(text: &[u8], i: usize) -> Option<Found> {
    let rest = &text[i..];
    if let Some(p) = PREFIXED.iter().find(|p| rest.starts_with(p.prefix)) {
        let body = i + p.prefix.len();
        let end = body + run(&text[body..], is_token);
        if end - body >= p.min && random(&text[body..end]) {
            return Some(Found {
                kind: p.kind,
                range: i..end,
            });
        }
    }
    aws_access_key(text, i)
}

/// `AKIA` or `ASIA` and 16 upper-case letters or digits: exactly 20.
fn aws_access_key(text: &[u8], i: usize) -> Option<Found> {
    let key = text.get(i..i + 20)?;
    let ok = (key.starts_with(b"AKIA") || key.starts_with(b"ASIA"))
        && key[4..]
            .iter()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        && !text.get(i + 20).is_some_and(|&b| is_word(b));
    ok.then(|| Found {
        kind: Kind::AwsAccessKey,
        range: i..i + 20,
    })
}

/// The value after a label at `i`.
fn labelled(text: &[u8], i: usize) -> Option<Found> {
    let rest = &text[i..];
    let (name, label) = LABELS.iter().find(|(name, _)| {
        rest.len() >= name.len() && rest[..name.len()].eq_ignore_ascii_case(name)
    })?;
    let after = i + name.len();
    if text.get(after).is_some_and(|&b| is_word(b) || b == b'-') {
        return None;
    }
    let (kind, range) = match label {
        Label::Bearer => {
            let start = after + run(&text[after..], is_blank);
            (start > after).then_some(())?;
            (Kind::BearerToken, credential(text, start, 16)?)
        }
        Label::AwsSecret => {
            let start = value_start(text, after)?;
            let len = run(&text[start..], |b| {
                b.is_ascii_alphanumeric() || b == b'/' || b == b'+'
            });
            (len == 40 && random(&text[start..start + len])).then_some(())?;
            (Kind::AwsSecretKey, start..start + len)
        }
        Label::ApiKey | Label::Secret => {
            let start = value_start(text, after)?;
            let kind = match label {
                Label::ApiKey => Kind::ApiKey,
                _ => Kind::Secret,
            };
            (kind, credential(text, start, 16)?)
        }
        Label::Authorization => authorization(text, after)?,
    };
    // A value that is a token of a known shape has that token's name.
    let kind = token(text, range.start)
        .filter(|t| t.range.end <= range.end)
        .map_or(kind, |t| t.kind);
    Some(Found { kind, range })
}

/// Where the value after a label starts: past a closing quote, blanks,
/// `:` or `=`, blanks and an opening quote (`KEY=v`, `key: v`,
/// `"key": "v"`).
fn value_start(text: &[u8], mut at: usize) -> Option<usize> {
    if matches!(text.get(at), Some(b'"' | b'\'')) {
        at += 1;
    }
    at += run(&text[at..], is_blank);
    if !matches!(text.get(at), Some(b':' | b'=')) {
        return None;
    }
    at += 1;
    at += run(&text[at..], is_blank);
    if matches!(text.get(at), Some(b'"' | b'\'')) {
        at += 1;
    }
    Some(at)
}

/// A credential at `start`: `min` or more of the bytes tokens are made of
/// (base64 and JWTs included, `=` only as padding at the end) with a
/// letter and a digit in them.
///
/// Read to its end, however long: a bound would keep the rest of a long
/// one (a JWT's signature is its end). None is needed for speed either: a
/// value ends where the label of another could begin its own (a blank, a
/// `:` or `=`, a quote, the line's end), so values never overlap and a
/// text is still read once (`repeated_starts_cost_one_pass`). The same
/// holds for header values and URL passwords.
fn credential(text: &[u8], start: usize, min: usize) -> Option<Range<usize>> {
    let body = run(&text[start..], |b| {
        is_token(b) || matches!(b, b'.' | b'~' | b'+' | b'/')
    });
    let len = body
        + run(
            &text[start + body..(start + body + 2).min(text.len())],
            |b| b == b'=',
        );
    let value = &text[start..start + len];
    let mixed = value.iter().any(u8::is_ascii_digit) && value.iter().any(u8::is_ascii_alphabetic);
    (len >= min && mixed).then_some(start..start + len)
}

/// The credential of an `Authorization` header whose name ends at
/// `after`: what follows a known scheme (8 bytes at least; a bearer
/// token with `Bearer`), or a value that is one credential on its own.
fn authorization(text: &[u8], after: usize) -> Option<(Kind, Range<usize>)> {
    let start = value_start(text, after)?;
    // Schemes are short: no need to read a long word to the end.
    let near = &text[start..(start + 32).min(text.len())];
    let word = run(near, |b| !is_blank(b) && !is_end(b));
    let scheme = &text[start..start + word];
    if SCHEMES.iter().any(|s| scheme.eq_ignore_ascii_case(s)) {
        let cred = start + word + run(&text[start + word..], is_blank);
        let len = run(&text[cred..], |b| !is_end(b));
        let value = text[cred..cred + len].trim_ascii_end();
        let kind = match scheme.eq_ignore_ascii_case(b"bearer") {
            true => Kind::BearerToken,
            false => Kind::Authorization,
        };
        return (value.len() >= 8).then_some((kind, cred..cred + value.len()));
    }
    Some((Kind::Authorization, credential(text, start, 16)?))
}

/// A PEM private-key block starting at `i`, to its `-----END ...-----`
/// line, or to the end of the text when the end was cut off.
fn private_key(text: &[u8], i: usize) -> Option<Found> {
    const BEGIN: &[u8] = b"-----BEGIN ";
    const DASHES: &[u8] = b"-----";
    if !text[i..].starts_with(BEGIN) {
        return None;
    }
    let label_start = i + BEGIN.len();
    let line = &text[label_start..(label_start + 100).min(text.len())];
    let label_len = memmem::find(&line[..run(line, |b| b != b'\n')], DASHES)?;
    let label = &text[label_start..label_start + label_len];
    if !(label.ends_with(b"PRIVATE KEY") || label.ends_with(b"PRIVATE KEY BLOCK")) {
        return None;
    }
    let body = label_start + label_len + DASHES.len();
    let end = memmem::find(&text[body..], b"-----END ")
        .and_then(|e| {
            let tail = body + e + 9;
            memmem::find(&text[tail..(tail + 100).min(text.len())], DASHES)
                .map(|d| tail + d + DASHES.len())
        })
        .unwrap_or(text.len());
    Some(Found {
        kind: Kind::PrivateKey,
        range: i..end,
    })
}

/// The password of `scheme://user:password@host` whose `:` of `://` is
/// at `i`.
fn url_password(text: &[u8], i: usize) -> Option<Found> {
    let start = i + 3;
    if !text[i..].starts_with(b"://") {
        return None;
    }
    let len = run(&text[start..], |b| {
        !matches!(b, b'/' | b'?' | b'#' | b'@' | b'"' | b'\'' | b'<' | b'>')
            && !is_blank(b)
            && !is_end(b)
    });
    if text.get(start + len) != Some(&b'@') {
        return None;
    }
    let colon = memchr::memchr(b':', &text[start..start + len])?;
    let password = start + colon + 1..start + len;
    (!password.is_empty()).then_some(Found {
        kind: Kind::UrlPassword,
        range: password,
    })
}

/// How many bytes at the start of `text` satisfy `keep`.
fn run(text: &[u8], keep: impl Fn(u8) -> bool) -> usize {
    text.iter().position(|&b| !keep(b)).unwrap_or(text.len())
}

/// Two of lower case, upper case and digits: a generated token, not a
/// hyphenated word.
fn random(token: &[u8]) -> bool {
    let lower = token.iter().any(u8::is_ascii_lowercase);
    let upper = token.iter().any(u8::is_ascii_uppercase);
    let digit = token.iter().any(u8::is_ascii_digit);
    usize::from(lower) + usize::from(upper) + usize::from(digit) >= 2
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn is_token(b: u8) -> bool {
    is_word(b) || b == b'-'
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// What ends a header value: the line, or the quote around it.
fn is_end(b: u8) -> bool {
    matches!(b, b'\n' | b'\r' | b'"' | b'\'')
}
