//! Reading the ledger back: `axe-log`.
