//! `[sandbox] engine`: which sandbox holds `run_command`'s commands. The
//! engines themselves are `axe_tools::builtin::sandbox`'s.

use serde::{Deserialize, Serialize};

/// `[sandbox] engine`: which sandbox holds commands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// bubblewrap where it runs, else Landlock where the kernel offers it.
    #[default]
    Auto,
    Bwrap,
    Landlock,
}
