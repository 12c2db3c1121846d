//! The scanner's table: what it must find, with the exact text it must
//! leave, and what it must leave alone.

use super::*;

/// Each text, and the same text as redacted.
const POSITIVES: &[(&str, &str)] = &[
    (
        "key sk-ant-api03-AbCdEf0123456789AbCdEf0123456789 ok",
        "key [redacted: anthropic key] ok",
    ),
    (
        "OPENAI_API_KEY=sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12",
        "OPENAI_API_KEY=[redacted: openai key]",
    ),
    (
        "export OPENROUTER_API_KEY=\"sk-or-v1-0a1b2c3d4e5f6a7b8c9d0e1f2a3b\"",
        "export OPENROUTER_API_KEY=\"[redacted: openrouter key]\"",
    ),
    (
        "token ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789.",
        "token [redacted: github token].",
    ),
    (
        "(github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz)",
        "([redacted: github token])",
    ),
    (
        "slack: xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        "slack: [redacted: slack token]",
    ),
    (
        "id AKIAIOSFODNN7EXAMPLE in us-east-1",
        "id [redacted: aws access key] in us-east-1",
    ),
    ("ASIA0123456789ABCDEF", "[redacted: aws access key]"),
    (
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
        "aws_secret_access_key = [redacted: aws secret key]\n",
    ),
    (
        "\"SecretAccessKey\": \"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\"",
        "\"SecretAccessKey\": \"[redacted: aws secret key]\"",
    ),
    (
        "MY_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "MY_SECRET_ACCESS_KEY=[redacted: aws secret key]",
    ),
    (
        "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl' x",
        "curl -H 'Authorization: Bearer [redacted: bearer token]' x",
    ),
    (
        "Authorization: Basic dXNlcjpwYXNzd29yZA==\r\nHost: x",
        "Authorization: Basic [redacted: authorization header]\r\nHost: x",
    ),
    (
        "authorization: 0123456789abcdef0123",
        "authorization: [redacted: authorization header]",
    ),
    (
        "Authorization: Bearer sk-ant-api03-AbCdEf0123456789AbCdEf0123456789",
        "Authorization: Bearer [redacted: anthropic key]",
    ),
    (
        "use bearer abc123def456ghi789jkl now",
        "use bearer [redacted: bearer token] now",
    ),
    (
        "x-api-key: 9f8e7d6c5b4a39281706f5e4d3c2b1a0",
        "x-api-key: [redacted: api key]",
    ),
    (
        "{\"api_key\": \"ZxY9wV8uT7sR6qP5oN4m\"}",
        "{\"api_key\": \"[redacted: api key]\"}",
    ),
    (
        "SERVICE_API_KEY=ZxY9wV8uT7sR6qP5oN4m",
        "SERVICE_API_KEY=[redacted: api key]",
    ),
    (
        "GET /cb?code=1&access_token=ya29.A0ARrdaM-b7f3kP9xQ2&state=x",
        "GET /cb?code=1&access_token=[redacted: secret]&state=x",
    ),
    (
        "OAUTH_CLIENT_SECRET: \"Xy7pQ2rS9tU4vW1zA8bC\"",
        "OAUTH_CLIENT_SECRET: \"[redacted: secret]\"",
    ),
    (
        "a\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nabc+/=\n-----END RSA PRIVATE KEY-----\nb",
        "a\n[redacted: private key]\nb",
    ),
    (
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA",
        "[redacted: private key]",
    ),
    (
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF\n-----END PGP PRIVATE KEY BLOCK-----",
        "[redacted: private key]",
    ),
    (
        "db at postgres://app:s3cr3t-Pa55@db.internal:5432/app",
        "db at postgres://app:[redacted: url password]@db.internal:5432/app",
    ),
    (
        "AIzaSyA-0123456789abcdefghijklmnopqrstu",
        "[redacted: google api key]",
    ),
    ("sk_live_0123456789abcdefABCDEF", "[redacted: stripe key]"),
    ("glpat-AbCdEf0123456789xYzW", "[redacted: gitlab token]"),
    (
        "npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "[redacted: npm token]",
    ),
    (
        "hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh",
        "[redacted: hugging face token]",
    ),
    ("tvly-dev-AbCdEf0123456789AbCd", "[redacted: tavily key]"),
    // Two in a row, and a marker found again is left as it is.
    (
        "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 ghp_ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210 [redacted: bearer token]",
        "[redacted: github token] [redacted: github token] [redacted: bearer token]",
    ),
];

/// Texts that hold nothing to redact.
const NEGATIVES: &[&str] = &[
    "We use sk-learn and scikit-learn for the model.",
    "sk-this-is-a-long-hyphenated-word-in-prose",
    "the task-sk-ant-part of a name",
    "Bearer responsibilities are shared.",
    "the bearer of bad news",
    "Authorization: required for admins only",
    "Authorization header missing",
    "if_match: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "\"sha256\": \"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\"",
    "see https://example.com/a/b?c=d&e=f#g and http://[::1]:8080/x",
    "ssh://git@github.com/o/r.git",
    "AKIA is a prefix; AKIAIOSFODNN7EXAMPLE1 is one letter too long",
    "xAKIAIOSFODNN7EXAMPLE",
    "ghp_short",
    "The api_key is set in config.toml.",
    "refresh the access_token when it expires; client_secret: see the vault",
    "secret_key = ${SECRET_KEY}",
    "api_key = \"x\"",
    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
    "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----",
    "## 2026-02-28T15:04:05Z\n**Task:** deploy\n**Result:** done",
    "AWS_SECRET_ACCESS_KEY=${AWS_SECRET_ACCESS_KEY}",
    "Deploys use blue-green switching; the canary runs first.",
];

#[test]
fn positives_are_redacted_exactly() {
    for (text, want) in POSITIVES {
        let got = redact(text.as_bytes(), &[]);
        assert_eq!(String::from_utf8_lossy(&got.text), *want, "in {text:?}");
        assert!(!got.kinds.is_empty(), "{text:?}");
    }
}

#[test]
fn negatives_are_left_alone() {
    for text in NEGATIVES {
        let found = find(text.as_bytes(), &[]);
        assert!(found.is_empty(), "{text:?}: {found:?}");
        assert!(matches!(
            redact(text.as_bytes(), &[]).text,
            std::borrow::Cow::Borrowed(_)
        ));
    }
}

#[test]
fn known_keys_are_found_anywhere_when_long_enough() {
    let text = b"local key lm-studio-key-42 in a URL ?k=lm-studio-key-42&x and x";
    let got = redact(text, &["lm-studio-key-42", "x"]);
    assert_eq!(
        String::from_utf8_lossy(&got.text),
        "local key [redacted: provider key] in a URL ?k=[redacted: provider key]&x and x"
    );
    assert_eq!(got.kinds, [Kind::ProviderKey, Kind::ProviderKey]);
}

#[test]
fn a_known_key_names_an_overlapping_find() {
    let key = "sk-ant-api03-AbCdEf0123456789AbCdEf0123456789";
    let text = format!("k={key}.");
    let got = redact(text.as_bytes(), &[key]);
    assert_eq!(
        String::from_utf8_lossy(&got.text),
        "k=[redacted: provider key]."
    );
}

#[test]
fn ranges_are_exact_and_text_stays_utf8() {
    let text = "é ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789 ü";
    let found = find(text.as_bytes(), &[]);
    assert_eq!(found.len(), 1);
    assert_eq!(
        &text[found[0].range.clone()],
        "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
    );
    let (out, kinds) = Secrets::with_keys(Vec::new()).redact_str(text);
    assert_eq!(out, "é [redacted: github token] ü");
    assert_eq!(kinds, [Kind::GithubToken]);
    let (kept, none) = Secrets::off().redact_str(text);
    assert_eq!((kept.as_ref(), none.len()), (text, 0));
}

#[test]
fn the_report_names_kinds_and_places_never_values() {
    let mut done = at(Place::RunLog, &[Kind::GithubToken]);
    done.extend(at(
        Place::State,
        &[Kind::AwsAccessKey, Kind::AwsAccessKey, Kind::BearerToken],
    ));
    done.extend(at(Place::MemoryFile, &[Kind::PrivateKey]));
    assert_eq!(
        lines(&done),
        [
            "redacted 1 secret (github token) from the run log",
            "redacted 3 secrets (aws access key, bearer token) from the state",
            "redacted 1 secret (private key) from MEMORY.md",
        ]
    );
    assert_eq!(
        serde_json::to_value(&done[0]).unwrap(),
        serde_json::json!({"kind": "github token", "where": "run log"})
    );
}

/// Texts made of one start over and over, each read in linear time:
/// a megabyte of them in well under a second, even unoptimised.
#[test]
fn repeated_starts_cost_one_pass() {
    for unit in [
        "sk-a",
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----BEGIN ",
        "Authorization: Basic ",
        "authorization:",
        "authorization=",
        "Authorization: Bearer ",
        "Bearer ",
        "api_key=",
        "_api_key: ",
        "://a:",
        "ghp_",
        "AKIA",
        "-----BEGIN RSA PRIVATE KEY-----\n-----END ",
        // Labels inside values that are read to their end, unbounded.
        "api_key=a/",
        "aws_secret_key=a/",
        "secretaccesskey=a+",
        "bearer a.",
        "Authorization: ab/",
        "x_access_token:a~",
    ] {
        let text = unit.repeat((1 << 20) / unit.len());
        let start = std::time::Instant::now();
        find(text.as_bytes(), &[]);
        let took = start.elapsed();
        assert!(took.as_secs_f64() < 2.0, "{unit:?}: {took:?}");
    }
    // One label and a megabyte-long value that is no credential.
    for label in ["api_key=", "Bearer ", "aws_secret_key=", "Authorization: "] {
        let text = format!("{label}{}", "a/".repeat(1 << 19));
        let start = std::time::Instant::now();
        find(text.as_bytes(), &[]);
        let took = start.elapsed();
        assert!(took.as_secs_f64() < 2.0, "{label:?}: {took:?}");
    }
}

/// `cargo test --release --lib secrets::tests::throughput -- --ignored
/// --nocapture`: MB/s over a 10 MB run log with a few secrets in it.
#[test]
#[ignore]
fn throughput() {
    let entry = "## 2026-02-28T15:04:05Z\n**Task:** summarise the deploy notes of the api service\n**Result:** The canary passed; rollback was not needed. Bearer tokens are rotated by the auth service at https://auth.example.com/rotate?after=30d, and the sha256 of the build is 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.\n\n";
    let mut text = String::new();
    for n in 0.. {
        if text.len() >= 10 << 20 {
            break;
        }
        text.push_str(entry);
        // A secret in one entry of a hundred.
        if n % 100 == 0 {
            text.push_str("token ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789\n");
        }
    }
    let keys = ["sk-ant-api03-AbCdEf0123456789AbCdEf0123456789"];
    // The best of ten rounds: the machine's neighbours only ever slow it.
    let secs = (0..10)
        .map(|_| {
            let start = std::time::Instant::now();
            std::hint::black_box(redact(text.as_bytes(), &keys));
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min);
    println!(
        "{:.1} MB in {:.1} ms: {:.0} MB/s",
        text.len() as f64 / 1e6,
        secs * 1e3,
        text.len() as f64 / 1e6 / secs
    );
}

/// A labelled credential longer than any bound is taken out whole: a
/// long JWT's signature is its end, and half a secret is still one.
#[test]
fn a_long_labelled_credential_is_never_half_kept() {
    let long: String = (0..10_000)
        .map(|i| b"Ab1.Cd2-Ef3_Gh4~"[i % 16] as char)
        .collect();
    for (text, marker) in [
        (
            format!("Authorization: Bearer {long}\nnext"),
            "bearer token",
        ),
        (
            format!("Authorization: Basic {long}\nnext"),
            "authorization header",
        ),
        (
            format!("curl -H 'Authorization: {long}'\nnext"),
            "authorization header",
        ),
        (format!("use bearer {long}\nnext"), "bearer token"),
        (format!("{{\"access_token\": \"{long}\"}}\nnext"), "secret"),
        (format!("X_API_KEY={long}\nnext"), "api key"),
        (format!("https://user:{long}@host/\nnext"), "url password"),
    ] {
        let got = redact(text.as_bytes(), &[]);
        let got = String::from_utf8_lossy(&got.text);
        assert!(got.contains(&format!("[redacted: {marker}]")), "{got:.80}");
        assert!(
            !got.contains("Ab1.Cd2") && !got.contains("Gh4~"),
            "{got:.200}"
        );
        assert!(got.ends_with("\nnext"), "{got:.200}");
        assert!(got.len() < 100, "{got:.200}");
    }
}
