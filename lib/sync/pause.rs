//! Named points in a sync where a test can stop it (to `kill -9` it
//! there) deterministically.

use std::fs;

/// A test hook: `AXE_SYNC_TEST_PAUSE=<step>:<file>` makes a sync that
/// reaches `<step>` create `<file>` and wait there to be killed, so tests
/// can `kill -9` it at a named point instead of a random one. Unset, it
/// costs one lookup per step.
pub fn at(step: &str) {
    let Some(spec) = std::env::var_os("AXE_SYNC_TEST_PAUSE") else {
        return;
    };
    let spec = spec.to_string_lossy();
    let Some((at, file)) = spec.split_once(':') else {
        return;
    };
    if at == step {
        let _ = fs::write(file, step);
        // Bounded: a test that forgets to kill us does not leave us behind.
        std::thread::sleep(std::time::Duration::from_secs(60));
    }
}
