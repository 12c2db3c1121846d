//! The notes workspace as a kind of memory (`kinds::KINDS`): its section and what
//! the layers above do with it. Beside its settings rather than in them,
//! so the settings stay below what a kind is (`crate::row`).

use crate::row::Kind;

/// The notes workspace as a kind: `[notes]`.
pub const KIND: Kind = Kind {
    section: "notes",
    enabled: |s| s.notes.enabled,
    validate: |s| s.notes.validate(),
    show: |dirs, s| {
        let notes = &s.notes;
        vec![
            ("Notes Enabled:", notes.enabled, "true".into()),
            (
                "Notes Workspace:",
                notes.enabled,
                crate::notes::Workspace::of(dirs, notes).map_or_else(
                    |e| format!("(error: {e})"),
                    |ws| ws.root.display().to_string(),
                ),
            ),
            ("Notes Days:", notes.enabled, notes.recall_days.to_string()),
        ]
    },
    template: "",
};
