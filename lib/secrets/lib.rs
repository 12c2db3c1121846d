//! Secrets stay out of memory: a scanner for values that look like
//! credentials (the keys this process knows, `sk-…`, AWS access keys,
//! bearer tokens and `Authorization:` values, PEM private keys, GitHub,
//! Slack and other prefixed tokens, passwords in URLs), and the policy
//! every memory write applies before its text reaches a file: each value
//! replaced by a marker naming its kind, `[redacted: github token]`.
//!
//! `scan` is the one pass ([`find`], [`redact`]); `kind` names what it
//! finds; `policy` says whether a write redacts and with which keys
//! ([`Secrets`]) and reports what it did ([`Redaction`]).

mod kind;
mod policy;
mod scan;
#[cfg(test)]
mod tests;

pub use kind::Kind;
pub use policy::{Place, Redaction, Secrets, at, lines};
pub use scan::{Found, MIN_KEY_CHARS, Redacted, find, redact};
