//! What an agent file says of its tools, as data and the checks of it:
//! which built-in tools it may list and the variables they read
//! ([`builtin`]), `[sandbox] engine` ([`sandbox`]), `[[mcp_servers]]`
//! ([`mcp`]).
//!
//! Its own crate, below both the agent file (`axe-agent`, which parses
//! and checks these) and the tools (`axe-tools`, which run them): an
//! agent file needs the names and the types, not the tools, so the two
//! crates build side by side instead of one after the other.

pub mod builtin;
pub mod mcp;
pub mod sandbox;
