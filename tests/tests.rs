//! Integration tests: the real executables, in temp dirs of their own.

mod common;
mod mem_append;
mod mem_count;
mod mem_load;
mod mem_path;
mod mem_trim;
mod stress;
mod util;
