//! Where a provider's calls go: its base URL (from the environment, then
//! the file, then the provider's default), checked before any call, with
//! its key; and [`Endpoints`], each resolved once.

use std::sync::Mutex;

use axe_base::error::{Error, Result};
use axe_base::lock::Recover;
use axe_llm::{Endpoint, Provider};

use super::Config;

impl Config {
    /// Where to send `provider`'s calls: base URL and key from the
    /// environment, then this file.
    pub fn endpoint(&self, provider: Provider) -> Result<Endpoint> {
        let env = |k: &str| std::env::var(k).ok();
        let base_url = self.base_url(provider, &env);
        let (shown, userinfo) = without_userinfo(&base_url);
        if userinfo {
            // The password is the part never to print.
            return Err(BaseUrl::UserInfo { shown, provider }.into());
        }
        check_base_url(provider, &base_url)?;
        let api_key = match self.api_key(provider, &env) {
            // A server of the user's own (llama.cpp, vLLM) often takes no
            // key: send none rather than make one up. The hosted APIs
            // still need one before anything is sent.
            Err(Error::MissingKey { .. }) if base_url != provider.default_base_url() => {
                String::new()
            }
            other => other?,
        };
        Ok(Endpoint {
            provider,
            base_url,
            api_key,
        })
    }

    /// [`Config::endpoint`] for a call to `model`, whose missing key may
    /// be a missing base URL ([`Config::unserved`]).
    pub fn endpoint_for(&self, provider: Provider, model: &str) -> Result<Endpoint> {
        self.endpoint(provider)
            .map_err(|e| self.unserved(e, provider, model))
    }

    /// `e`, unless it is a missing key for a `model` the provider's hosted
    /// API does not serve (`openai/qwen2.5-7b-instruct`, as at a server of
    /// the user's own): what is missing then is that server's address,
    /// not the hosted API's key, and the message names what to set.
    pub fn unserved(&self, e: Error, provider: Provider, model: &str) -> Error {
        if !matches!(e.as_reported(), Error::MissingKey { .. }) || provider.hosts(model) {
            return e;
        }
        let file = match self.path.as_os_str().is_empty() {
            true => "config.toml".to_owned(),
            false => self.path.display().to_string(),
        };
        let name = provider.name();
        Error::Config(format!(
            "base URL for provider \"{name}\" is not configured: \"{model}\" is no model of its hosted API ({}), so set {}, or base_url under [providers.{name}] in {file}, to your server's address (http://localhost:8080/v1); {} is only for the hosted API",
            provider.default_base_url(),
            provider.base_url_env(),
            provider.key_env()
        ))
    }

    /// The base URL for `provider`, without a trailing slash.
    pub fn base_url(&self, provider: Provider, env: &dyn Fn(&str) -> Option<String>) -> String {
        let var = provider.base_url_env();
        let url = env(&var)
            .filter(|v| !v.is_empty())
            .or_else(|| Some(self.section(provider).base_url).filter(|v| !v.is_empty()))
            .unwrap_or_else(|| provider.default_base_url().to_owned());
        url.trim_end_matches('/').to_owned()
    }
}

/// The endpoints of one config, each resolved once: an `api_key_cmd` runs
/// once per provider, however many agents a run or a gc uses it for.
pub struct Endpoints {
    config: Config,
    known: Mutex<Vec<Endpoint>>,
}

impl Endpoints {
    pub fn new(config: Config) -> Endpoints {
        Endpoints {
            config,
            known: Mutex::new(Vec::new()),
        }
    }

    /// The file's settings.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The keys resolved so far (an `api_key_cmd`'s output included).
    pub fn resolved_keys(&self) -> Vec<String> {
        let known = self.known.lock().recover();
        known.iter().map(|e| e.api_key.clone()).collect()
    }

    /// [`Endpoints::get`] for a call to `model` ([`Config::unserved`]).
    pub fn get_for(&self, provider: Provider, model: &str) -> Result<Endpoint> {
        self.get(provider)
            .map_err(|e| self.config.unserved(e, provider, model))
    }

    /// Where to send `provider`'s calls, with its key.
    pub fn get(&self, provider: Provider) -> Result<Endpoint> {
        let mut known = self.known.lock().recover();
        if let Some(e) = known.iter().find(|e| e.provider == provider) {
            return Ok(e.clone());
        }
        let endpoint = self.config.endpoint(provider)?;
        known.push(endpoint.clone());
        Ok(endpoint)
    }
}

/// Refuses, before any call, a base URL no call could go to: one
/// without a scheme (`localhost:8080`), with one axe does not speak, or
/// with a query string or fragment, which the path would be added after.
/// The query is not shown: a key may be in it.
fn check_base_url(provider: Provider, url: &str) -> Result<()> {
    // Every message shows the URL up to its query.
    let query = url.find(['?', '#']);
    let shown = &url[..query.unwrap_or(url.len())];
    let Some((scheme, _)) = shown.split_once("://") else {
        let shown = shown.to_owned();
        return Err(BaseUrl::NoScheme { shown, provider }.into());
    };
    // In lower case, as the HTTP library reads it.
    if scheme != "http" && scheme != "https" {
        let shown = shown.to_owned();
        return Err(BaseUrl::Scheme { shown, provider }.into());
    }
    if query.is_some() {
        let shown = shown.to_owned();
        return Err(BaseUrl::Query { shown, provider }.into());
    }
    Ok(())
}

/// A base URL no call could go to, refused before any call (a config
/// error, exit 2); `shown` is the URL without its password and query,
/// where a key could be.
#[derive(Debug, thiserror::Error)]
pub enum BaseUrl {
    #[error(
        "base URL {shown} for provider \"{}\" has a user name or password in it, which axe does not send: remove it and put the key in {} or api_key",
        provider.name(),
        provider.key_env()
    )]
    UserInfo { shown: String, provider: Provider },
    #[error(
        "base URL \"{shown}\" for provider \"{}\" has no scheme: write http://{shown} (or https://) in {} or base_url",
        provider.name(),
        provider.base_url_env()
    )]
    NoScheme { shown: String, provider: Provider },
    #[error(
        "base URL \"{shown}\" for provider \"{}\": axe speaks http:// and https:// only",
        provider.name()
    )]
    Scheme { shown: String, provider: Provider },
    #[error(
        "base URL \"{shown}\" for provider \"{}\" has a query string or fragment, which axe cannot add a path to: remove it (a key goes in {} or api_key)",
        provider.name(),
        provider.key_env()
    )]
    Query { shown: String, provider: Provider },
}

impl From<BaseUrl> for Error {
    fn from(e: BaseUrl) -> Error {
        Error::caused(Error::Config(e.to_string()), e)
    }
}

/// `url` with any `user:password@` taken out, and whether it had one.
pub fn without_userinfo(url: &str) -> (String, bool) {
    let start = url.find("://").map_or(0, |i| i + 3);
    let end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    match url[start..end].rfind('@') {
        Some(at) => (format!("{}{}", &url[..start], &url[start + at + 1..]), true),
        None => (url.to_owned(), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse;
    use crate::config::tests::env;

    #[test]
    fn userinfo_is_found_and_left_out() {
        assert_eq!(
            without_userinfo("http://u:pw@host:1/v1?x=a@b"),
            ("http://host:1/v1?x=a@b".to_owned(), true)
        );
        assert_eq!(
            without_userinfo("http://host/p@q"),
            ("http://host/p@q".to_owned(), false)
        );
        assert_eq!(without_userinfo("a@b"), ("b".to_owned(), true));
    }

    #[test]
    fn base_urls_that_cannot_work_are_refused_without_their_query() {
        let refused = |url: &str| {
            let e = check_base_url(Provider::OPENAI, url).unwrap_err();
            assert_eq!(e.exit_code(), 2);
            e.to_string()
        };
        assert!(
            refused("h:1?key=sk-x")
                .starts_with("base URL \"h:1\" for provider \"openai\" has no scheme")
        );
        assert!(!refused("ftp://h?key=sk-x").contains("sk-x"));
        assert!(!refused("https://h/v1?key=sk-x").contains("sk-x"));
        assert!(refused("HTTPS://h").contains("http:// and https:// only"));
        assert!(check_base_url(Provider::OPENAI, "https://h:1/v1").is_ok());
    }

    #[test]
    fn base_url_order_and_trailing_slash() {
        let cfg = parse("[providers.ollama]\nbase_url = \"http://box:11434/\"\n").unwrap();
        assert_eq!(
            cfg.base_url(Provider::OLLAMA, &env(&[])),
            "http://box:11434"
        );
        let e = env(&[("AXE_OLLAMA_BASE_URL", "http://env:1")]);
        assert_eq!(cfg.base_url(Provider::OLLAMA, &e), "http://env:1");
        assert_eq!(
            Config::default().base_url(Provider::ANTHROPIC, &env(&[])),
            "https://api.anthropic.com"
        );
        assert_eq!(
            Config::default().base_url(Provider::OPENAI, &env(&[])),
            "https://api.openai.com"
        );
    }
}
