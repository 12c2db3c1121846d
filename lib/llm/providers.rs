//! The providers axe speaks to: the one list, which model strings, error
//! messages and shell completions all read.

use std::fmt;

use super::anthropic::Anthropic;
use super::conversation::ResponseFormat;
use super::error::{LlmError, ModelFault};
use super::gateway;
use super::gemini::Gemini;
use super::ollama::Ollama;
use super::openai::OpenAi;
use super::openrouter::OpenRouter;
use super::wire::{Spec, Wire};
use axe_base::error::{Error, Result};

/// Every provider, in the order messages and completions list them.
const ALL: &[Provider] = &[
    Provider::ANTHROPIC,
    Provider::OPENAI,
    Provider::OLLAMA,
    Provider::OPENROUTER,
    Provider::GOOGLE,
    Provider::REQUESTY,
    Provider::ATLASCLOUD,
    Provider::EDENAI,
];

/// Every provider's wire, in [`ALL`]'s order: read only by
/// [`Provider::wire`], so only a program that calls a model links them.
static WIRES: [&dyn Wire; 8] = [
    &Anthropic,
    &OpenAi,
    &Ollama,
    &OpenRouter,
    &Gemini,
    &gateway::REQUESTY,
    &gateway::ATLASCLOUD,
    &gateway::EDENAI,
];

/// A provider: a handle on its [`Spec`], and through it its [`Wire`].
#[derive(Clone, Copy)]
pub struct Provider(&'static dyn Spec);

impl Provider {
    pub const ANTHROPIC: Provider = Provider(&Anthropic);
    pub const OPENAI: Provider = Provider(&OpenAi);
    pub const OLLAMA: Provider = Provider(&Ollama);
    pub const OPENROUTER: Provider = Provider(&OpenRouter);
    pub const GOOGLE: Provider = Provider(&Gemini);
    pub const REQUESTY: Provider = Provider(&gateway::REQUESTY);
    pub const ATLASCLOUD: Provider = Provider(&gateway::ATLASCLOUD);
    pub const EDENAI: Provider = Provider(&gateway::EDENAI);

    pub fn name(self) -> &'static str {
        self.0.name()
    }

    pub fn default_base_url(self) -> &'static str {
        self.0.default_base_url()
    }

    pub fn needs_key(self) -> bool {
        self.0.needs_key()
    }

    /// Whether its API at the default base URL may serve `model` (see
    /// [`Wire::hosts`]).
    pub fn hosts(self, model: &str) -> bool {
        self.0.hosts(model)
    }

    /// Where the key is looked for first.
    pub fn key_env(self) -> &'static str {
        self.0.key_env()
    }

    /// The variable that overrides its base URL: `AXE_OPENAI_BASE_URL`.
    pub fn base_url_env(self) -> String {
        format!("AXE_{}_BASE_URL", self.name().to_uppercase())
    }

    /// The `max_tokens` a request asking for `asked` (0: not set)
    /// carries: what `--dry-run` and `-v` show.
    pub fn max_tokens_sent(self, asked: u64) -> Option<u64> {
        match asked {
            0 => self.0.default_max_tokens(),
            n => Some(n),
        }
    }

    /// An error unless requests to this provider can ask for answers of
    /// this shape: a config error, which no retry or other model string
    /// of the same provider mends.
    pub fn check_response_format(self, format: &ResponseFormat) -> Result<()> {
        if self.0.honours(format) {
            return Ok(());
        }
        let can: Vec<&str> = ALL
            .iter()
            .filter(|p| p.0.honours(format))
            .map(|p| p.name())
            .collect();
        Err(LlmError::FormatUnsupported {
            format: format.to_value().to_string(),
            provider: self.name(),
            can,
        }
        .into())
    }

    pub(super) fn wire(self) -> &'static dyn Wire {
        // Every provider is one of ALL, whose wire is at its place.
        let at = ALL.iter().position(|p| p.name() == self.name());
        WIRES[at.unwrap_or_default()]
    }
}

impl PartialEq for Provider {
    fn eq(&self, other: &Provider) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Provider {}

impl fmt::Debug for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The environment variables the providers that need a key read it from.
pub fn key_vars() -> impl Iterator<Item = &'static str> {
    ALL.iter().filter(|p| p.needs_key()).map(|p| p.key_env())
}

/// The names of every provider: `anthropic`, `openai`, `ollama`,
/// `openrouter`, `google`.
pub fn names() -> impl Iterator<Item = &'static str> {
    ALL.iter().map(|p| p.name())
}

/// Every environment variable the providers read: their keys and the
/// overrides of their base URLs.
pub fn variables() -> impl Iterator<Item = String> {
    key_vars()
        .map(str::to_owned)
        .chain(ALL.iter().map(|p| p.base_url_env()))
}

/// The model of the agent template `axe-agents init` writes without a
/// model: the shape of one, but no provider's.
pub const PLACEHOLDER_MODEL: &str = "provider/model-name";

/// Splits `provider/model-name` at the first `/` (Go's `parseModel`).
pub fn parse_model(model: &str) -> Result<(Provider, String)> {
    let bad = |fault| -> Error {
        LlmError::Model {
            model: model.to_owned(),
            fault,
        }
        .into()
    };
    let Some((provider, name)) = model.split_once('/') else {
        return Err(bad(ModelFault::NoSlash));
    };
    if provider.is_empty() {
        return Err(bad(ModelFault::EmptyProvider));
    }
    if name.is_empty() {
        return Err(bad(ModelFault::EmptyName));
    }
    if model == PLACEHOLDER_MODEL {
        // An agent made by `agents init` without a model: Go's message
        // named a provider "provider", which left people puzzled.
        return Err(LlmError::Placeholder {
            provider: provider.to_owned(),
            model: model.to_owned(),
        }
        .into());
    }
    let provider = ALL
        .iter()
        .find(|p| p.name() == provider)
        .copied()
        .ok_or_else(|| Error::UnknownProvider {
            name: provider.to_owned(),
            supported: names().collect::<Vec<_>>().join(", "),
        })?;
    Ok((provider, name.to_owned()))
}

/// Where to send a call.
#[derive(Clone)]
pub struct Endpoint {
    pub provider: Provider,
    /// Without `/v1`; the wire module adds its path.
    pub base_url: String,
    pub api_key: String,
}

impl Endpoint {
    /// Where calls go: the base URL and the provider's path. A base that
    /// already ends in the path's first segment (`http://host:8080/v1`, as
    /// most servers document it) or in `/` is taken as meaning the same;
    /// one that is already the whole endpoint URL is used as it is
    /// ([`Endpoint::is_whole`]).
    pub fn url(&self) -> String {
        let wire = self.provider.wire();
        let base = self.base_url.trim_end_matches('/');
        if let Some(whole) = self.whole() {
            return whole.to_owned();
        }
        let path = wire.path();
        let first = path
            .split('/')
            .nth(1)
            .map(|s| format!("/{s}"))
            .unwrap_or_default();
        let base = base.strip_suffix(first.as_str()).unwrap_or(base);
        format!("{base}{path}")
    }

    /// Whether the base URL was given as the whole endpoint URL
    /// (`http://host/v1/chat/completions`), which `-v` says: adding the
    /// path again would double it, and the server's 404 would not say why.
    pub fn is_whole(&self) -> bool {
        self.whole().is_some()
    }

    fn whole(&self) -> Option<&str> {
        let wire = self.provider.wire();
        let base = wire.strip_tail(self.base_url.trim_end_matches('/'));
        base.ends_with(wire.endpoint_end()).then_some(base)
    }

    /// Where a call to `model` goes: [`Endpoint::url`], and the model and
    /// method for a provider whose URL names them.
    pub fn call_url(&self, model: &str, stream: bool) -> String {
        self.url() + &self.provider.wire().path_tail(model, stream)
    }
}

impl fmt::Debug for Endpoint {
    /// Never the key, not even in a debug print.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Endpoint")
            .field("provider", &self.provider)
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openais_own_models_are_told_from_a_local_servers() {
        for own in [
            "gpt-4o",
            "gpt-oss-20b",
            "o3-mini",
            "o1",
            "chatgpt-4o-latest",
            "ft:gpt-4o:x",
        ] {
            assert!(Provider::OPENAI.hosts(own), "{own}");
        }
        for local in ["qwen2.5-7b-instruct", "llama3", "olmo-2", "m", "mistral-7b"] {
            assert!(!Provider::OPENAI.hosts(local), "{local}");
        }
        assert!(Provider::ANTHROPIC.hosts("anything"));
        assert!(Provider::OPENROUTER.hosts("qwen/qwen3"));
    }

    #[test]
    fn model_strings() {
        assert_eq!(
            parse_model("anthropic/claude-sonnet-4").unwrap(),
            (Provider::ANTHROPIC, "claude-sonnet-4".to_owned())
        );
        assert_eq!(
            parse_model("ollama/library/llama3:8b").unwrap().1,
            "library/llama3:8b",
            "split at the first slash"
        );
        assert_eq!(
            parse_model("openrouter/anthropic/claude-sonnet-4").unwrap(),
            (Provider::OPENROUTER, "anthropic/claude-sonnet-4".to_owned()),
            "OpenRouter's own model names have a slash"
        );
        let msg = |m: &str| parse_model(m).unwrap_err().to_string();
        assert_eq!(
            msg("gpt4"),
            "invalid model format \"gpt4\": expected provider/model-name"
        );
        assert_eq!(msg("/x"), "invalid model format \"/x\": empty provider");
        assert_eq!(
            msg("openai/"),
            "invalid model format \"openai/\": empty model name"
        );
        assert_eq!(
            msg("gemini/pro"),
            "unsupported provider \"gemini\": supported providers are anthropic, openai, ollama, openrouter, google, requesty, atlascloud, edenai"
        );
        assert_eq!(parse_model("gemini/pro").unwrap_err().exit_code(), 1);
        let placeholder = parse_model(PLACEHOLDER_MODEL).unwrap_err();
        assert_eq!(
            placeholder.to_string(),
            "unsupported provider \"provider\": the agent file's model is still the template's placeholder \"provider/model-name\"; set it to a real one, e.g. anthropic/claude-sonnet-4-20250514"
        );
        assert_eq!(placeholder.exit_code(), 1, "Go's code for this model");
    }

    #[test]
    fn base_urls_with_or_without_the_first_path_segment() {
        let url = |provider, base: &str| {
            Endpoint {
                provider,
                base_url: base.into(),
                api_key: String::new(),
            }
            .url()
        };
        for base in [
            "http://h:8080",
            "http://h:8080/",
            "http://h:8080/v1",
            "http://h:8080/v1/",
        ] {
            assert_eq!(
                url(Provider::OPENAI, base),
                "http://h:8080/v1/chat/completions"
            );
            assert_eq!(url(Provider::ANTHROPIC, base), "http://h:8080/v1/messages");
        }
        assert_eq!(
            url(Provider::OLLAMA, "http://h:11434/api/"),
            "http://h:11434/api/chat"
        );
        for base in ["https://openrouter.ai/api", "https://openrouter.ai/api/v1/"] {
            assert_eq!(
                url(Provider::OPENROUTER, base),
                "https://openrouter.ai/api/v1/chat/completions"
            );
        }
        assert_eq!(
            url(Provider::OPENAI, "http://h/proxy/v1"),
            "http://h/proxy/v1/chat/completions"
        );
        // A whole endpoint URL is used as it is; Gemini's names a model
        // and a method, which the call sets.
        for (provider, base, url_) in [
            (
                Provider::OPENAI,
                "http://h/v1/chat/completions/",
                "http://h/v1/chat/completions",
            ),
            (
                Provider::OPENAI,
                "http://h/x/chat/completions",
                "http://h/x/chat/completions",
            ),
            (
                Provider::ANTHROPIC,
                "http://h/v1/messages",
                "http://h/v1/messages",
            ),
            (Provider::OLLAMA, "http://h/api/chat", "http://h/api/chat"),
            (
                Provider::GOOGLE,
                "http://h/v1beta/models/g:generateContent",
                "http://h/v1beta/models",
            ),
            (
                Provider::GOOGLE,
                "http://h/v1beta/models",
                "http://h/v1beta/models",
            ),
        ] {
            assert_eq!(url(provider, base), url_, "{base}");
        }
        assert_eq!(
            url(Provider::GOOGLE, "http://h/v1beta"),
            "http://h/v1beta/models"
        );
    }

    #[test]
    fn endpoint_debug_hides_the_key() {
        let e = Endpoint {
            provider: Provider::OPENAI,
            base_url: "http://x".into(),
            api_key: "sk-secret".into(),
        };
        assert!(!format!("{e:?}").contains("sk-secret"));
    }
}
