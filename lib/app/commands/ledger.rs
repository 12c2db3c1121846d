//! `axe-log`: the ledger of model calls (`crate::ledger`), listed and
//! summed; and `--no-log`, the flag of every command that calls a model.

use axe_cli::Flag;

/// `--no-log`: the one flag of every command that calls a model.
pub const NO_LOG: Flag = Flag::switch(
    "no-log",
    "Do not record this command's model calls in the ledger (see axe-log)",
);
