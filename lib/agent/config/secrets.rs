//! The credentials memory keeps out (the providers' and tools' keys, from
//! the environment and the file) and every environment variable that
//! changes where axe's calls go.

use axe_memory::secrets::Secrets;

use super::{Config, load};
use crate::Agents;

/// Google's other name for a Gemini key, which other tools read: a
/// secret in memory wherever it is set, though axe reads `GEMINI_API_KEY`.
const OTHER_KEYS: [&str; 1] = ["GOOGLE_API_KEY"];

/// Every environment variable that changes where axe's calls go, what
/// they trust or send: the providers' keys and base URLs, the network's
/// proxies and roots, the built-in tools'. Tests clear them all.
pub fn variables() -> Vec<String> {
    axe_llm::variables()
        .chain(axe_net::variables().map(str::to_owned))
        .chain(axe_tool_settings::builtin::variables().map(str::to_owned))
        .chain(OTHER_KEYS.map(str::to_owned))
        .collect()
}

/// What memory writes of an agent whose `[memory] redact` is `agent`
/// (`None` when unset or for no agent) do with credentials, with
/// config.toml read here. A config.toml that cannot be read leaves
/// redaction on, without its keys: the command at hand does not use it,
/// and is not stopped by it.
pub fn secrets(agents: &Agents, agent: Option<bool>) -> Secrets {
    load(agents).unwrap_or_default().secrets(agent, Vec::new())
}

impl Config {
    /// The redaction policy of an agent whose `[memory] redact` is `agent`
    /// under this config: the agent's setting, else this file's, else on.
    /// The keys are the providers' from the environment and the file, and
    /// `resolved` (a run's, `api_key_cmd` output included).
    pub fn secrets(&self, agent: Option<bool>, resolved: Vec<String>) -> Secrets {
        let mut keys = resolved;
        keys.extend(self.keys());
        Secrets::of(agent, self.memory.redact, keys)
    }

    /// The keys of the environment and of this file.
    pub fn keys(&self) -> Vec<String> {
        let mut keys = Vec::new();
        let env = axe_llm::key_vars()
            .chain(axe_tool_settings::builtin::KEY_VARS)
            .chain(OTHER_KEYS)
            .filter_map(|var| std::env::var(var).ok());
        keys.extend(env.map(|k| k.trim().to_owned()));
        // A proxy's password, which axe sends as Proxy-Authorization.
        keys.extend(axe_net::proxy_secrets());
        keys.extend(self.file_keys().map(str::to_owned));
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The variables are the ones each part reads, gathered from them: a
    /// provider, proxy or tool added there is cleared by the tests too.
    #[test]
    fn the_variables_are_gathered_from_what_reads_them() {
        let all = variables();
        for provider in axe_llm::names() {
            let p = axe_llm::parse_model(&format!("{provider}/m")).unwrap().0;
            assert!(all.contains(&p.base_url_env()), "{provider}");
            assert!(!p.needs_key() || all.iter().any(|v| v == p.key_env()));
        }
        for var in ["HTTPS_PROXY", "no_proxy", "SSL_CERT_FILE", "TAVILY_API_KEY"] {
            assert!(all.iter().any(|v| v == var), "{var}");
        }
    }
}
