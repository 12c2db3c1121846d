//! A provider's API key: from its environment variable, then `api_key`
//! in the file, then the output of `api_key_cmd`; cleaned of the white
//! space around it, and refused with a control character in it.

use std::io;
use std::process::{Command, Stdio};

use axe_base::error::{Error, Result};
use axe_llm::Provider;

use super::Config;

impl Config {
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

/// Runs `api_key_cmd` with `sh -c`; its standard output, less surrounding
/// white space, is the key. Its standard error passes through to ours, so a
/// password manager can still ask for a passphrase.
fn run_key_command(provider: Provider, command: &str) -> Result<String> {
    let output = Command::new("sh")
        .args(["-c", command])
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| KeyCommand::Start(provider, e))?;
    if !output.status.success() {
        return Err(KeyCommand::Exit(provider, output.status).into());
    }
    let key = String::from_utf8(output.stdout).map_err(|e| KeyCommand::NotUtf8(provider, e))?;
    if key.trim().is_empty() {
        return Err(KeyCommand::Empty(provider).into());
    }
    clean_key(provider, &key, "api_key_cmd")
}

/// A provider's `api_key_cmd` that gave no key (exit 3, as Go's), and why.
#[derive(Debug, thiserror::Error)]
pub enum KeyCommand {
    /// `sh` would not start.
    #[error(
        "api_key_cmd for provider \"{}\" failed: {}",
        .0.name(),
        axe_base::error::describe_io(.1)
    )]
    Start(Provider, #[source] io::Error),
    /// It ended with this status.
    #[error("api_key_cmd for provider \"{}\" failed: {}", .0.name(), .1)]
    Exit(Provider, std::process::ExitStatus),
    /// Its output is not UTF-8.
    #[error("api_key_cmd for provider \"{}\" failed: output is not UTF-8", .0.name())]
    NotUtf8(Provider, #[source] std::string::FromUtf8Error),
    /// It printed nothing but white space.
    #[error("api_key_cmd for provider \"{}\" failed: it printed nothing", .0.name())]
    Empty(Provider),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::parse;
    use crate::config::tests::env;

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
    fn ollama_needs_no_key() {
        assert_eq!(
            Config::default()
                .api_key(Provider::OLLAMA, &env(&[]))
                .unwrap(),
            ""
        );
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
