//! Who may reach which memory: the tokens file of `axe-mcp --tokens`, a
//! TOML list of `[[token]]` entries, each a name, the SHA-256 of the
//! token (the token itself is never stored), the agents it reaches
//! (`["a", "b"]` or `"*"`) and whether it only reads.

use std::io::Read;
use std::path::Path;

use serde::Deserialize;

use axe_base::error::{Error, Result};
use axe_memory::hash::sha256_hex;

/// One entry of the file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Token {
    pub name: String,
    pub sha256: String,
    pub agents: Agents,
    #[serde(default)]
    pub read_only: bool,
}

/// The agents a token reaches.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Agents {
    /// `"*"`: every agent.
    Every(String),
    Some(Vec<String>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    token: Vec<Token>,
}

/// The tokens a server takes.
#[derive(Debug)]
pub struct Tokens(Vec<Token>);

impl Tokens {
    /// Reads the tokens file at `path`: a malformed one is an error, as
    /// is an entry whose digest or agents cannot be right.
    pub fn load(path: &Path) -> Result<Tokens> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Config(format!("tokens file {}: {e}", path.display())))?;
        let file: File = toml::from_str(&text).map_err(|e| {
            Error::Config(format!("tokens file {}: {}", path.display(), e.message()))
        })?;
        for t in &file.token {
            let bad = |why: &str| {
                Error::Config(format!(
                    "tokens file {}: token \"{}\": {why}",
                    path.display(),
                    t.name
                ))
            };
            if t.sha256.len() != 64 || !t.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(bad("sha256 is not 64 hex digits"));
            }
            if matches!(&t.agents, Agents::Every(s) if s != "*") {
                return Err(bad("agents is a list of names or \"*\""));
            }
        }
        Ok(Tokens(file.token))
    }

    /// The entry a bearer `token` matches: its digest is compared, so no
    /// comparison's time says anything of the token.
    pub fn find(&self, token: &str) -> Option<&Token> {
        let digest = sha256_hex(token.as_bytes());
        self.0
            .iter()
            .find(|t| t.sha256.eq_ignore_ascii_case(&digest))
    }
}

impl Token {
    /// Whether this token reaches `agent`'s memory.
    pub fn reaches(&self, agent: &str) -> bool {
        match &self.agents {
            Agents::Every(_) => true,
            Agents::Some(names) => names.iter().any(|n| n == agent),
        }
    }
}

/// `N` random bytes from the kernel.
pub fn random<const N: usize>() -> std::io::Result<[u8; N]> {
    let mut bytes = [0u8; N];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes)
}
