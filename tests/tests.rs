//! Integration tests: the real executables, in temp dirs of their own.

mod agents;
mod common;
mod completion;
mod config;
mod context;
mod dispatch;
mod first_hour;
mod gc;
mod generated;
mod hardening;
mod hardening_state;
mod llm;
mod mem_append;
mod mem_count;
mod mem_load;
mod mem_path;
mod mem_trim;
mod modules;
mod notes;
mod pipeline;
mod run;
mod server;
mod state;
mod stress;
mod util;
mod wire;
