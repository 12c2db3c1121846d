//! Searching notes: by words, ranked by BM25F through an index kept as a
//! cache beside the workspace (`index`), and by meaning beside them when
//! an embedding model is configured (`index::vectors`, `axe_embed`). The
//! notes themselves, their scanning and the query's words are
//! axe-memory's; this crate holds what a search adds to them.

mod files;
mod index;
mod meaning;
mod search;

pub use index::Used as IndexUsed;
pub use index::vectors::{Mode, VectorsUsed};
pub use search::{Found, Searched, reindex, search, search_mode};
