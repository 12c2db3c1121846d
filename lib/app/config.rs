//! The global `config.toml`: per-provider API keys and base URLs, and the
//! `default_model` of `axe-llm` and `axe-agents init`.
//!
//! Resolution is the Go `axe`'s: an API key comes from the provider's
//! environment variable, then `api_key` in the file, and (new here) then
//! the output of `api_key_cmd`, for password managers; a base URL comes from
//! `AXE_<PROVIDER>_BASE_URL`, then `base_url`, then the provider's default.
//! A missing file is an empty config. Keys no setting takes are warned
//! of, once per process ([`axe_base::unknown`]).

use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;

use serde::Deserialize;

use crate::agent::Agents;
use axe_base::dirs::Dirs;
use axe_base::error::{Error, Result};
use axe_base::lock::Recover;
use axe_base::read;
use axe_llm::{Endpoint, Provider};
use axe_memory::secrets::Secrets;

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct Config {
    /// The model `axe-llm` uses without `-m` and `axe-agents init` writes
    /// without `--model`; empty: none. Read through [`Config::default_model`].
    pub default_model: String,
    pub providers: BTreeMap<String, ProviderConfig>,
    pub memory: MemoryConfig,
    /// `[log]`: what the ledger keeps (`crate::ledger`).
    pub log: crate::ledger::settings::LogConfig,
    /// `[pricing."provider/model"]`: the ledger's prices for providers
    /// that report no cost.
    pub pricing: BTreeMap<String, crate::ledger::settings::Price>,
    /// The file it was read from, for messages; empty for a parsed text.
    #[serde(skip)]
    path: PathBuf,
    /// Whether that file exists.
    #[serde(skip)]
    found: bool,
}

/// `[memory]` of config.toml: what holds for every agent's memory unless
/// its agent file says otherwise.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct MemoryConfig {
    /// Whether credentials are redacted from what memory keeps; unset: on.
    pub redact: Option<bool>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(default)]
pub struct ProviderConfig {
    pub api_key: String,
    pub base_url: String,
    /// A shell command whose standard output is the key.
    pub api_key_cmd: String,
}

/// Reads `<config>/config.toml` of `agents`' directories; a missing file
/// is an empty config. A FIFO, a device or a file over
/// [`read::TOML_LIMIT`] is an error. The keys no setting takes are warned
/// of, as the agent files' are, once for `agents`.
pub fn load(agents: &Agents) -> Result<Config> {
    let (config, unknown) = load_quietly(agents.dirs())?;
    agents.warn(&config.path, &unknown);
    Ok(config)
}

/// [`load`] with the keys no setting takes given back rather than warned
/// of, for `agents check` to show.
pub fn load_quietly(dirs: &Dirs) -> Result<(Config, Vec<axe_base::unknown::Unknown>)> {
    let path = dirs.config()?.join("config.toml");
    let text = match read::text(&path, read::TOML_LIMIT) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let missing = Config {
                path,
                ..Config::default()
            };
            return Ok((missing, Vec::new()));
        }
        Err(e) => {
            return Err(Error::caused(
                Error::Config(format!(
                    "failed to read config file {}: {}",
                    path.display(),
                    axe_base::error::describe_io(&e)
                )),
                e,
            ));
        }
    };
    let mut config = parse(&text)?;
    let unknown = axe_base::unknown::find::<Config>(&path, &text);
    config.path = path;
    config.found = true;
    Ok((config, unknown))
}

pub fn parse(text: &str) -> Result<Config> {
    toml::from_str(text).map_err(|e| {
        Error::caused(
            Error::Config(format!(
                "failed to parse config.toml: {}",
                crate::agent::one_line_toml_error(text, &e)
            )),
            e,
        )
    })
}

/// Google's other name for a Gemini key, which other tools read: a
/// secret in memory wherever it is set, though axe reads `GEMINI_API_KEY`.
const OTHER_KEYS: [&str; 1] = ["GOOGLE_API_KEY"];

/// Every environment variable that changes where axe's calls go, what
/// they trust or send: the providers' keys and base URLs, the network's
/// proxies and roots, the built-in tools'. Tests clear them all.
pub fn variables() -> Vec<String> {
    axe_llm::variables()
        .chain(axe_net::variables().map(str::to_owned))
        .chain(axe_tools::builtin::variables().map(str::to_owned))
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
            .chain(axe_tools::builtin::KEY_VARS)
            .chain(OTHER_KEYS)
            .filter_map(|var| std::env::var(var).ok());
        keys.extend(env.map(|k| k.trim().to_owned()));
        keys.extend(self.file_keys().map(str::to_owned));
        keys
    }

    /// `default_model`, checked, or `None` when it is not set. A model
    /// string that does not parse is this file's error (exit 2), named as
    /// such: the command line did not give it.
    pub fn default_model(&self) -> Result<Option<&str>> {
        let model = self.default_model.trim();
        if model.is_empty() {
            return Ok(None);
        }
        axe_llm::parse_model(model).map_err(|e| {
            Error::caused(
                Error::Config(format!("default_model in config.toml: {e}")),
                e,
            )
        })?;
        Ok(Some(model))
    }

    fn section(&self, provider: Provider) -> ProviderConfig {
        self.providers
            .get(provider.name())
            .cloned()
            .unwrap_or_default()
    }

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

    /// The keys written in the file (`api_key`; an `api_key_cmd` is not
    /// run for this).
    pub fn file_keys(&self) -> impl Iterator<Item = &str> {
        self.providers.values().map(|p| p.api_key.trim())
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

    /// The API key for `provider`: env, `api_key`, `api_key_cmd`, in that
    /// order. Ollama needs none and gets none. A provider that needs a key
    /// and has none is an error (exit 3) before any request is made.
    pub fn api_key(
        &self,
        provider: Provider,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<String> {
        if !provider.needs_key() {
            return Ok(String::new());
        }
        let var = provider.key_env();
        if let Some(key) = env(var).filter(|k| !k.trim().is_empty()) {
            return clean_key(provider, &key, var);
        }
        let section = self.section(provider);
        if !section.api_key.trim().is_empty() {
            return clean_key(provider, &section.api_key, "api_key");
        }
        if !section.api_key_cmd.trim().is_empty() {
            return run_key_command(provider, &section.api_key_cmd);
        }
        Err(Error::MissingKey {
            provider: provider.name().to_owned(),
            env: provider.key_env().to_owned(),
            file: self.where_looked(provider),
        })
    }

    /// What this file said of `provider`'s key, for the missing key's
    /// message: a section under another name (`[provider.openai]`) is
    /// warned of by [`load`], so the message says only what is missing.
    fn where_looked(&self, provider: Provider) -> String {
        let name = provider.name();
        let file = match self.path.as_os_str().is_empty() {
            true => "config.toml".to_owned(),
            false => self.path.display().to_string(),
        };
        if !self.found && !self.path.as_os_str().is_empty() {
            return format!("there is no {file}");
        }
        match self.providers.contains_key(name) {
            false => format!("{file} has no [providers.{name}] section"),
            true => format!("[providers.{name}] in {file} has no api_key or api_key_cmd"),
        }
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

/// Runs `api_key_cmd` with `sh -c`; its standard output, less surrounding
/// white space, is the key. Its standard error passes through to ours, so a
/// password manager can still ask for a passphrase.
fn run_key_command(provider: Provider, command: &str) -> Result<String> {
    let fail = |why| KeyCommand { provider, why };
    let output = Command::new("sh")
        .args(["-c", command])
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| fail(KeyFault::Start(e)))?;
    if !output.status.success() {
        return Err(fail(KeyFault::Exit(output.status)).into());
    }
    let key = String::from_utf8(output.stdout).map_err(|e| fail(KeyFault::NotUtf8(e)))?;
    if key.trim().is_empty() {
        return Err(fail(KeyFault::Empty).into());
    }
    clean_key(provider, &key, "api_key_cmd")
}

/// A provider's `api_key_cmd` that gave no key (exit 3, as Go's).
#[derive(Debug)]
pub struct KeyCommand {
    pub provider: Provider,
    pub why: KeyFault,
}

/// Why `api_key_cmd` gave no key.
#[derive(Debug)]
pub enum KeyFault {
    /// `sh` would not start.
    Start(io::Error),
    /// It ended with this status.
    Exit(std::process::ExitStatus),
    /// Its output is not UTF-8.
    NotUtf8(std::string::FromUtf8Error),
    /// It printed nothing but white space.
    Empty,
}

impl std::fmt::Display for KeyCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = self.provider.name();
        write!(f, "api_key_cmd for provider \"{name}\" failed: ")?;
        match &self.why {
            KeyFault::Start(e) => f.write_str(&axe_base::error::describe_io(e)),
            KeyFault::Exit(status) => status.fmt(f),
            KeyFault::NotUtf8(_) => f.write_str("output is not UTF-8"),
            KeyFault::Empty => f.write_str("it printed nothing"),
        }
    }
}

impl std::error::Error for KeyCommand {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.why {
            KeyFault::Start(e) => Some(e),
            KeyFault::NotUtf8(e) => Some(e),
            KeyFault::Exit(_) | KeyFault::Empty => None,
        }
    }
}

impl From<KeyCommand> for Error {
    fn from(e: KeyCommand) -> Error {
        Error::caused(Error::KeyCommand(e.to_string()), e)
    }
}

/// The key without the white space around it, from wherever it came: a
/// CRLF `.env` file leaves a `\r` that the server would strip, echo, and
/// so get past the redaction. A control character inside the key could
/// start a new header line, so it is an error that does not show the key.
fn clean_key(provider: Provider, key: &str, source: &str) -> Result<String> {
    let key = key.trim();
    if key.chars().any(char::is_control) {
        return Err(Error::Config(format!(
            "API key for provider \"{}\" from {source} contains a control character (a line break?)",
            provider.name()
        )));
    }
    Ok(key.to_owned())
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
#[derive(Debug)]
pub enum BaseUrl {
    UserInfo { shown: String, provider: Provider },
    NoScheme { shown: String, provider: Provider },
    Scheme { shown: String, provider: Provider },
    Query { shown: String, provider: Provider },
}

impl std::fmt::Display for BaseUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BaseUrl::UserInfo { shown, provider } => write!(
                f,
                "base URL {shown} for provider \"{}\" has a user name or password in it, which axe does not send: remove it and put the key in {} or api_key",
                provider.name(),
                provider.key_env()
            ),
            BaseUrl::NoScheme { shown, provider } => write!(
                f,
                "base URL \"{shown}\" for provider \"{}\" has no scheme: write http://{shown} (or https://) in {} or base_url",
                provider.name(),
                provider.base_url_env()
            ),
            BaseUrl::Scheme { shown, provider } => write!(
                f,
                "base URL \"{shown}\" for provider \"{}\": axe speaks http:// and https:// only",
                provider.name()
            ),
            BaseUrl::Query { shown, provider } => write!(
                f,
                "base URL \"{shown}\" for provider \"{}\" has a query string or fragment, which axe cannot add a path to: remove it (a key goes in {} or api_key)",
                provider.name(),
                provider.key_env()
            ),
        }
    }
}

impl std::error::Error for BaseUrl {}

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

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn key_order_is_env_file_command() {
        let cfg =
            parse("[providers.openai]\napi_key = \"from-file\"\napi_key_cmd = \"echo from-cmd\"\n")
                .unwrap();
        let with_env = env(&[("OPENAI_API_KEY", "from-env")]);
        assert_eq!(
            cfg.api_key(Provider::OPENAI, &with_env).unwrap(),
            "from-env"
        );
        assert_eq!(
            cfg.api_key(Provider::OPENAI, &env(&[])).unwrap(),
            "from-file"
        );
        let cmd_only =
            parse("[providers.openai]\napi_key_cmd = \"printf '  from-cmd\\\\n'\"\n").unwrap();
        assert_eq!(
            cmd_only.api_key(Provider::OPENAI, &env(&[])).unwrap(),
            "from-cmd"
        );
    }

    #[test]
    fn keys_are_trimmed_and_control_characters_refused() {
        let cfg = parse("[providers.openai]\napi_key = \" sk-file\\n\"\n").unwrap();
        assert_eq!(cfg.api_key(Provider::OPENAI, &env(&[])).unwrap(), "sk-file");
        let crlf = env(&[("OPENAI_API_KEY", "sk-env\r")]);
        assert_eq!(cfg.api_key(Provider::OPENAI, &crlf).unwrap(), "sk-env");
        let injected = env(&[("OPENAI_API_KEY", "sk-abc\r\nX-Injected: yes")]);
        let err = cfg.api_key(Provider::OPENAI, &injected).unwrap_err();
        assert_eq!(
            err.to_string(),
            "API key for provider \"openai\" from OPENAI_API_KEY contains a control character (a line break?)"
        );
        assert_eq!(err.exit_code(), 2);
        let blank = env(&[("OPENAI_API_KEY", " \r\n")]);
        assert_eq!(cfg.api_key(Provider::OPENAI, &blank).unwrap(), "sk-file");
    }

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
    fn missing_key_and_failing_command() {
        let err = Config::default()
            .api_key(Provider::ANTHROPIC, &env(&[]))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "API key for provider \"anthropic\" is not configured: ANTHROPIC_API_KEY is not set, and config.toml has no [providers.anthropic] section"
        );
        assert_eq!(err.exit_code(), 2, "the configuration's fault");
        let cfg = parse("[providers.anthropic]\napi_key_cmd = \"exit 4\"\n").unwrap();
        let err = cfg.api_key(Provider::ANTHROPIC, &env(&[])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "api_key_cmd for provider \"anthropic\" failed: exit status: 4"
        );
        assert_eq!(err.exit_code(), 3);
        let cfg = parse("[providers.anthropic]\napi_key_cmd = \"true\"\n").unwrap();
        let err = cfg.api_key(Provider::ANTHROPIC, &env(&[])).unwrap_err();
        assert!(err.to_string().ends_with("it printed nothing"));
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
    fn ollama_needs_no_key() {
        assert_eq!(
            Config::default()
                .api_key(Provider::OLLAMA, &env(&[]))
                .unwrap(),
            ""
        );
    }

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

    #[test]
    fn bad_toml_is_a_config_error() {
        let err = parse("[providers.openai\n").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("failed to parse config.toml: line 1")
        );
        assert_eq!(err.exit_code(), 2);
    }

    /// A config.toml that is no TOML is a config error (exit 2) with the
    /// line it always had, and keeps the toml crate's error beneath it.
    #[test]
    fn a_bad_config_keeps_the_toml_error() {
        use std::error::Error as _;
        let e = parse("[providers\n").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("failed to parse config.toml: line 1"),
            "{e}"
        );
        assert_eq!(e.exit_code(), 2);
        assert!(e.source().unwrap().is::<toml::de::Error>());
    }

    /// An `api_key_cmd` whose output is not UTF-8 says so (exit 3) and
    /// keeps the UTF-8 error; one that fails to start keeps its io::Error.
    #[test]
    fn a_key_command_keeps_its_cause() {
        use std::error::Error as _;
        let openai = axe_llm::parse_model("openai/m").unwrap().0;
        let e = run_key_command(openai, r"printf '\377'").unwrap_err();
        assert_eq!(
            e.to_string(),
            "api_key_cmd for provider \"openai\" failed: output is not UTF-8"
        );
        assert_eq!(e.exit_code(), 3);
        let typed = e.source().unwrap();
        assert!(typed.is::<KeyCommand>());
        assert!(typed.source().unwrap().is::<std::string::FromUtf8Error>());
    }
}
