//! Why the network the environment describes cannot be used: a proxy
//! variable that names no proxy, roots that cannot be read. Each is found
//! once, kept, and said on every request that would have used it (a user
//! who set a proxy or a root must not find requests going around it), so
//! it is cheap to clone: its causes are shared.

use std::fmt;
use std::io;
use std::sync::Arc;

use axe_base::error::describe_io;

// `Display` and `Error` by hand, not derived: a certificate file's cause
// is the error inside its `CertCause`, and a derived source would be the
// `Arc` that shares it, not the `io::Error` a caller downcasts to.
#[derive(Debug, Clone)]
pub enum SetupError {
    /// A proxy variable (`name`) whose value (credentials redacted) is
    /// no proxy URL.
    ProxyUrl {
        name: &'static str,
        value: String,
        cause: Arc<ureq::Error>,
    },

    /// `SSL_CERT_FILE` could not be read, or held no certificate.
    CertFile { file: String, cause: CertCause },
    /// A directory `SSL_CERT_DIR` names could not be read.
    CertDir { dir: String, cause: Arc<io::Error> },
    /// The directories `SSL_CERT_DIR` names held no certificate.
    NoCertInDirs,
}

/// What was wrong with one file of certificates.
#[derive(Debug, Clone)]
pub enum CertCause {
    Read(Arc<io::Error>),
    Pem(Arc<ureq::Error>),
    Empty,
}

impl fmt::Display for SetupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SetupError::ProxyUrl { name, value, .. } => write!(
                f,
                "the proxy {name} names is not a proxy URL (expected http://host:port): {value:?}"
            ),
            SetupError::CertFile { file, cause } => {
                write!(f, "certificate file {file} (SSL_CERT_FILE): {cause}")
            }
            SetupError::CertDir { dir, cause } => write!(
                f,
                "certificate directory {dir} (SSL_CERT_DIR): {}",
                describe_io(cause)
            ),
            SetupError::NoCertInDirs => {
                f.write_str("no PEM certificate in the directories SSL_CERT_DIR names")
            }
        }
    }
}

impl fmt::Display for CertCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CertCause::Read(e) => f.write_str(&describe_io(e)),
            CertCause::Pem(e) => e.fmt(f),
            CertCause::Empty => f.write_str("no PEM certificate in it"),
        }
    }
}

impl std::error::Error for SetupError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SetupError::ProxyUrl { cause, .. } => Some(&**cause),
            SetupError::CertFile { cause, .. } => match cause {
                CertCause::Read(e) => Some(&**e),
                CertCause::Pem(e) => Some(&**e),
                CertCause::Empty => None,
            },
            SetupError::CertDir { cause, .. } => Some(&**cause),
            SetupError::NoCertInDirs => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use crate::proxy::Proxies;
    use crate::roots::{Named, read_named};

    /// A real failure keeps its cause beneath the line said: the read's
    /// io::Error, and ureq's refusal of the proxy URL.
    #[test]
    fn a_setup_error_keeps_its_cause() {
        let dir = std::env::temp_dir().join(format!("axe-net-{}", std::process::id()));
        let missing = dir.join("missing.pem");
        let named = Named {
            file: Some(missing.display().to_string()),
            dirs: None,
        };
        let e = read_named(&named).expect_err("a missing file is an error");
        assert_eq!(
            e.to_string(),
            format!(
                "certificate file {} (SSL_CERT_FILE): no such file or directory",
                missing.display()
            )
        );
        let io = e.source().and_then(|s| s.downcast_ref::<std::io::Error>());
        assert_eq!(io.map(|e| e.kind()), Some(std::io::ErrorKind::NotFound));

        let proxies = Proxies::from_vars(|n| (n == "HTTPS_PROXY").then(|| "ftp://p:21".into()));
        let e = proxies.choose(true, "example.com").unwrap_err();
        assert!(
            e.to_string().starts_with("the proxy HTTPS_PROXY names"),
            "{e}"
        );
        assert!(e.source().is_some_and(|s| s.is::<ureq::Error>()));
    }
}
