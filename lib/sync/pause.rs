//! Named points in a sync where a test can stop it (to `kill -9` it
//! there) deterministically.

/// A test hook: `AXE_TEST_SYNC_PAUSE=<step>:<file>` makes a sync that
/// reaches `<step>` create `<file>` and wait there to be killed, so tests
/// can `kill -9` it at a named point instead of a random one. Only builds
/// with the `test-hooks` feature (the tests' own) have it.
#[cfg(feature = "test-hooks")]
pub fn at(step: &str) {
    let Some(spec) = std::env::var_os("AXE_TEST_SYNC_PAUSE") else {
        return;
    };
    let spec = spec.to_string_lossy();
    let Some((at, file)) = spec.split_once(':') else {
        return;
    };
    if at == step {
        let _ = std::fs::write(file, step);
        // Bounded: a test that forgets to kill us does not leave us behind.
        std::thread::sleep(std::time::Duration::from_secs(60));
    }
}

/// Every other build: nothing to read, nothing to wait for.
#[cfg(not(feature = "test-hooks"))]
#[inline(always)]
pub fn at(_step: &str) {}
