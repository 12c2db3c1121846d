//! PKCE (RFC 7636, S256) and the `state` that ties a redirect to its
//! request: random words from the OS's generator.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::{SecureRandom, SystemRandom};

use super::OAuthError;

/// 32 random bytes as base64url: 43 characters, within RFC 7636's
/// 43..=128 for a verifier.
pub fn random_word() -> Result<String, OAuthError> {
    let mut bytes = [0u8; 32];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| OAuthError::Said("the system's random generator failed".into()))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// The S256 challenge of `verifier`.
pub fn challenge(verifier: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes());
    URL_SAFE_NO_PAD.encode(digest.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_are_base64url_sha256() {
        // As Python's hashlib and base64.urlsafe_b64encode give it.
        assert_eq!(
            challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gXFrHjEqI"),
            "IOBgIOscNVkIbJfWioJUQXm6j32xKbJ0lDO0lnCYZB8"
        );
        let (a, b) = (random_word().unwrap(), random_word().unwrap());
        assert_eq!(a.len(), 43);
        assert_ne!(a, b);
    }
}
