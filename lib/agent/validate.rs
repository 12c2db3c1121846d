//! The checks an agent file passes after it parses, in the Go order of
//! their messages (the first failure wins): the agent's own settings
//! here, each memory kind's by the kind (`axe_memory`'s `validate`s),
//! called at the place Go checked them.

use axe_base::count::non_negative;
use axe_base::error::{Error, Result};
use axe_llm::{Backoff, ResponseFormat};

use super::parse::AgentConfig;

/// Checks a parsed agent in the Go order; the first failure wins.
pub fn validate(cfg: &AgentConfig) -> Result<()> {
    let fail = |why: Invalid| Err(why.into());
    let missing = |field| fail(Invalid::Missing(field));
    let negative = |field| fail(Invalid::Negative(field));
    let over = |field, max| fail(Invalid::Exceeds { field, max });
    let rule = |text| fail(Invalid::Rule(text));
    if cfg.name.trim().is_empty() {
        return missing("name");
    }
    if cfg.model.trim().is_empty() {
        return missing("model");
    }
    let sub = &cfg.sub_agents_config;
    if sub.max_depth.is_negative() {
        return negative("sub_agents_config.max_depth");
    }
    if sub.max_depth.get() > 5 {
        return over("sub_agents_config.max_depth", 5);
    }
    if sub.timeout.is_negative() {
        return negative("sub_agents_config.timeout");
    }
    if sub.timeout.get() > axe_base::timeout::MAX_SECONDS {
        return over("sub_agents_config.timeout", axe_base::timeout::MAX_SECONDS);
    }
    if sub.max_parallel.is_negative() {
        return negative("sub_agents_config.max_parallel");
    }
    if sub.max_parallel.get() > super::parse::MAX_PARALLEL {
        return over("sub_agents_config.max_parallel", super::parse::MAX_PARALLEL);
    }
    if cfg.timeout.is_negative() {
        return negative("timeout");
    }
    if cfg.timeout.get() > axe_base::timeout::MAX_SECONDS {
        return over("timeout", axe_base::timeout::MAX_SECONDS);
    }
    axe_tool_settings::mcp::validate(&cfg.mcp_servers)
        .map_err(|e| Error::caused(Error::AgentInvalid(e.to_string()), e))?;
    let r = &cfg.retry;
    non_negative(&[
        ("retry.max_retries", r.max_retries),
        ("retry.initial_delay_ms", r.initial_delay_ms),
        ("retry.max_delay_ms", r.max_delay_ms),
    ])?;
    if Backoff::parse(&r.backoff).is_none() {
        return fail(Invalid::Backoff(r.backoff.clone()));
    }
    let policy = r.policy();
    if policy.max_delay < policy.initial_delay {
        return rule("retry.max_delay_ms must be at least retry.initial_delay_ms");
    }
    if !cfg.params.temperature.is_finite() {
        return rule("params.temperature must be a finite number");
    }
    if let Some(Err(e)) = cfg
        .params
        .response_format
        .as_ref()
        .map(ResponseFormat::from_value)
    {
        return Err(Error::caused(
            Error::AgentInvalid(format!("params.response_format: {e}")),
            e,
        ));
    }
    non_negative(&[("budget.max_tokens", cfg.budget.max_tokens)])?;
    // Each kind checks its own section, in the kinds' order, where Go
    // checked those fields, so the first failure is still Go's.
    cfg.memory.validate_kinds()?;
    cfg.memory.context.validate_budget()?;
    if let Some(name) = cfg
        .tools
        .iter()
        .find(|t| !axe_tool_settings::builtin::NAMES.contains(&t.as_str()))
    {
        return fail(Invalid::UnknownTool(name.clone()));
    }
    let artifacts = &cfg.artifacts;
    if !artifacts.dir.is_empty() && !artifacts.enabled {
        return rule("artifacts.dir requires artifacts.enabled = true");
    }
    if std::path::Path::new(&artifacts.dir)
        .components()
        .any(|c| c == std::path::Component::ParentDir)
    {
        return rule("artifacts.dir must not contain \"..\"");
    }
    cfg.memory.context.validate_order()?;
    Ok(())
}

/// An agent file that parsed but is not a valid agent: Go's messages,
/// reported as an invalid agent (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    /// A required field left out or blank.
    #[error("agent config missing required field: {0}")]
    Missing(&'static str),
    /// A count or number of seconds below zero.
    #[error("{0} must be non-negative")]
    Negative(&'static str),
    /// A field over its most.
    #[error("{field} cannot exceed {max}")]
    Exceeds { field: &'static str, max: u64 },
    /// A `retry.backoff` that names none.
    #[error("retry.backoff must be one of {names} (not {0:?})", names = Backoff::NAMES.join(", "))]
    Backoff(String),
    /// A tool in `tools` that axe does not have.
    #[error("unknown tool {0:?} in tools config")]
    UnknownTool(String),
    /// A rule between fields, in its own words.
    #[error("{0}")]
    Rule(&'static str),
}

impl From<Invalid> for Error {
    fn from(e: Invalid) -> Error {
        Error::caused(Error::AgentInvalid(e.to_string()), e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RetryConfig;
    use axe_base::count::Count;
    use axe_llm::RetryPolicy;

    fn valid() -> AgentConfig {
        AgentConfig {
            name: "a".into(),
            model: "anthropic/claude".into(),
            ..Default::default()
        }
    }

    fn invalid_message(cfg: &AgentConfig) -> String {
        validate(cfg).unwrap_err().to_string()
    }

    #[test]
    fn validate_memory_last_n_negative() {
        let mut cfg = valid();
        cfg.memory.log.last_n = Count(-1);
        assert_eq!(invalid_message(&cfg), "memory.last_n must be non-negative");
    }

    #[test]
    fn validate_memory_max_entries_negative() {
        let mut cfg = valid();
        cfg.memory.log.max_entries = Count(-1);
        assert_eq!(
            invalid_message(&cfg),
            "memory.max_entries must be non-negative"
        );
    }

    #[test]
    fn validate_memory_zero_values_are_fine() {
        let cfg = valid();
        assert_eq!(
            (cfg.memory.log.last_n, cfg.memory.log.max_entries),
            (Count(0), Count(0))
        );
        validate(&cfg).unwrap();
    }

    #[test]
    fn retry_policy_fills_in_go_defaults() {
        let mut cfg = valid();
        assert_eq!(cfg.retry.policy(), RetryPolicy::default());
        cfg.retry = RetryConfig {
            max_retries: Count(3),
            backoff: "linear".into(),
            initial_delay_ms: Count(0),
            max_delay_ms: Count(2000),
        };
        validate(&cfg).unwrap();
        assert_eq!(
            cfg.retry.policy(),
            RetryPolicy {
                max_retries: 3,
                backoff: Backoff::Linear,
                initial_delay: std::time::Duration::from_millis(500),
                max_delay: std::time::Duration::from_millis(2000),
            }
        );
        // Only the initial delay given, above the default maximum.
        cfg.retry.max_delay_ms = Count(0);
        cfg.retry.initial_delay_ms = Count(40_000);
        assert_eq!(
            invalid_message(&cfg),
            "retry.max_delay_ms must be at least retry.initial_delay_ms"
        );
    }

    #[test]
    fn validate_order_first_failure_wins() {
        let mut cfg = AgentConfig::default();
        cfg.memory.log.last_n = Count(-1);
        assert_eq!(
            invalid_message(&cfg),
            "agent config missing required field: name"
        );
        cfg.name = "  ".into();
        assert_eq!(
            invalid_message(&cfg),
            "agent config missing required field: name"
        );
        cfg.name = "a".into();
        assert_eq!(
            invalid_message(&cfg),
            "agent config missing required field: model"
        );
        cfg.model = "m/x".into();
        cfg.sub_agents_config.max_depth = Count(-1);
        assert_eq!(
            invalid_message(&cfg),
            "sub_agents_config.max_depth must be non-negative"
        );
        cfg.sub_agents_config.max_depth = Count(6);
        assert_eq!(
            invalid_message(&cfg),
            "sub_agents_config.max_depth cannot exceed 5"
        );
        cfg.sub_agents_config.max_depth = Count(5);
        cfg.sub_agents_config.timeout = Count(-1);
        assert_eq!(
            invalid_message(&cfg),
            "sub_agents_config.timeout must be non-negative"
        );
        cfg.sub_agents_config.timeout = Count(0);
        cfg.sub_agents_config.max_parallel = Count(-1);
        assert_eq!(
            invalid_message(&cfg),
            "sub_agents_config.max_parallel must be non-negative"
        );
        cfg.sub_agents_config.max_parallel = Count(65);
        assert_eq!(
            invalid_message(&cfg),
            "sub_agents_config.max_parallel cannot exceed 64"
        );
        cfg.sub_agents_config.max_parallel = Count(64);
        cfg.timeout = Count(-1);
        assert_eq!(invalid_message(&cfg), "timeout must be non-negative");
        cfg.timeout = Count(86_401);
        assert_eq!(invalid_message(&cfg), "timeout cannot exceed 86400");
        cfg.timeout = Count(0);
        assert_eq!(invalid_message(&cfg), "memory.last_n must be non-negative");
    }

    #[test]
    fn the_kinds_sections_are_checked_in_the_go_order() {
        // Every kind's section wrong at once, and the agent's settings
        // between them: each message shows once those before it are
        // fixed, in the order Go gave them.
        let mut cfg = valid();
        cfg.memory.log.max_entries = Count(-1);
        cfg.memory.notes.recall_chars = Count(-1);
        cfg.memory.state.max_entries = Count(-1);
        cfg.memory.context.budget = Some(Count(-1));
        cfg.tools = vec!["nope".into()];
        cfg.artifacts.dir = "x".into();
        cfg.memory.context.order = vec![axe_memory::MemoryKind::Log; 2];
        cfg.budget.max_tokens = Count(-1);
        let mut said = Vec::new();
        for fix in [
            (|c: &mut AgentConfig| c.budget.max_tokens = Count(0)) as fn(&mut AgentConfig),
            |c| c.memory.log.max_entries = Count(0),
            |c| c.memory.notes.recall_chars = Count(0),
            |c| c.memory.state.max_entries = Count(0),
            |c| c.memory.context.budget = None,
            |c| c.tools.clear(),
            |c| c.artifacts.dir.clear(),
            |c| c.memory.context.order.clear(),
        ] {
            said.push(invalid_message(&cfg));
            fix(&mut cfg);
        }
        validate(&cfg).unwrap();
        assert_eq!(
            said,
            [
                "budget.max_tokens must be non-negative",
                "memory.max_entries must be non-negative",
                "notes.recall_chars must be non-negative",
                "state.max_entries must be non-negative",
                "context.budget must be non-negative",
                "unknown tool \"nope\" in tools config",
                "artifacts.dir requires artifacts.enabled = true",
                "context.order lists \"log\" twice (at 1 and 2)",
            ]
        );
    }
}
