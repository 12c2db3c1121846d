//! The ground every axe crate stands on: the one error type and its exit
//! codes (`error`), counts as agent files write them (`count`), the XDG
//! directories (`dirs`), files reached through
//! directory handles (`beneath`), reading files axe did not write
//! (`read`), signals and process groups (`signals`), deadlines
//! (`timeout`), locks whose holder panicked (`lock`), the one way to
//! stderr (`stderr`) and where the libraries' lines go instead
//! (`report`), near names for "did you
//! mean" (`suggest`) and the warning for keys no setting takes
//! (`unknown`). Nothing here knows of agents, providers or memory kinds.

pub mod beneath;
pub mod count;
pub mod dirs;
pub mod error;
pub mod fresh;
pub mod lock;
pub mod read;
pub mod report;
pub mod signals;
pub mod stderr;
pub mod suggest;
pub mod timeout;
pub mod toml_read;
pub mod unknown;
