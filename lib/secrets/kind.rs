//! The kinds of credential the scanner tells apart, each with the stable
//! name its marker and reports carry.

/// What a found value looked like. The names are part of the interface:
/// they appear in the marker left in memory (`[redacted: github token]`),
/// in `-v` lines and in `--json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// A key this run or config.toml uses, found as is.
    ProviderKey,
    AnthropicKey,
    OpenRouterKey,
    OpenAiKey,
    GithubToken,
    GitlabToken,
    SlackToken,
    GoogleApiKey,
    StripeKey,
    NpmToken,
    HuggingFaceToken,
    TavilyKey,
    PrivateKey,
    AwsAccessKey,
    AwsSecretKey,
    /// The value after an `api_key`, `x-api-key`, `apikey` label.
    ApiKey,
    /// The value after an `access_token`, `client_secret` or similar
    /// label.
    Secret,
    BearerToken,
    /// An `Authorization:` value without a better name.
    Authorization,
    /// The password of `scheme://user:password@host`.
    UrlPassword,
}

impl Kind {
    /// The stable name, as the marker and the reports show it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::ProviderKey => "provider key",
            Kind::AnthropicKey => "anthropic key",
            Kind::OpenRouterKey => "openrouter key",
            Kind::OpenAiKey => "openai key",
            Kind::GithubToken => "github token",
            Kind::GitlabToken => "gitlab token",
            Kind::SlackToken => "slack token",
            Kind::GoogleApiKey => "google api key",
            Kind::StripeKey => "stripe key",
            Kind::NpmToken => "npm token",
            Kind::HuggingFaceToken => "hugging face token",
            Kind::TavilyKey => "tavily key",
            Kind::PrivateKey => "private key",
            Kind::AwsAccessKey => "aws access key",
            Kind::AwsSecretKey => "aws secret key",
            Kind::ApiKey => "api key",
            Kind::Secret => "secret",
            Kind::BearerToken => "bearer token",
            Kind::Authorization => "authorization header",
            Kind::UrlPassword => "url password",
        }
    }

    /// What replaces a value of this kind: `[redacted: <name>]`.
    pub fn marker(self) -> String {
        format!("[redacted: {}]", self.name())
    }

    /// Of two finds over the same bytes, the one whose name says more
    /// wins: a key known to be this run's, then a token known by its
    /// prefix, then what only a label or a header said. The variants are
    /// declared in that order.
    pub fn better(self, other: Kind) -> Kind {
        self.min(other)
    }
}

impl serde::Serialize for Kind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}
