//! The structured state as a kind of memory (`kinds::KINDS`): its section and what
//! the layers above do with it. Beside its settings rather than in them,
//! so the settings stay below what a kind is (`crate::row`).

use crate::row::Kind;

/// The structured state as a kind: `[state]`.
pub const KIND: Kind = Kind {
    section: "state",
    enabled: |s| s.state.enabled,
    validate: |s| s.state.validate(),
    show: |_, s| vec![("State Enabled:", s.state.enabled, "true".into())],
    template: "",
};
