//! The run log as a kind of memory (`kinds::KINDS`): its section and what
//! the layers above do with it. Beside its settings rather than in them,
//! so the settings stay below what a kind is (`crate::row`).

use crate::row::Kind;

/// The run log as a kind: its section is `[memory]` (Go's name).
pub const KIND: Kind = Kind {
    section: "memory",
    enabled: |s| s.log.enabled,
    validate: |s| s.log.validate(),
    show: |_, s| s.log.show(),
    template: "",
};
