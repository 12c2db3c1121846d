//! Which certificate authorities HTTPS trusts: Mozilla's (webpki-roots),
//! unless the environment names others as OpenSSL and curl read it:
//! `SSL_CERT_FILE` (a PEM file of certificates) and `SSL_CERT_DIR` (one or
//! more directories, `:`-separated, of PEM files), which then replace
//! them. Behind a proxy that intercepts TLS, that is how its authority
//! is trusted; a test trusts the one it made the same way.

use std::path::Path;

use std::sync::Arc;

use ureq::tls::{Certificate, PemItem, RootCerts};

use crate::error::{CertCause, SetupError};

/// A file of certificates is a few hundred KiB; more is not one.
const FILE_LIMIT: u64 = 16 << 20;

/// Where the environment says the roots are.
#[derive(Debug, Clone, Default)]
pub struct Named {
    /// `SSL_CERT_FILE`.
    pub file: Option<String>,
    /// `SSL_CERT_DIR`.
    pub dirs: Option<String>,
}

/// The variables that name the roots: a file of certificates, and
/// directories of them (`:`-separated), as OpenSSL reads them.
const FILE: &str = "SSL_CERT_FILE";
const DIRS: &str = "SSL_CERT_DIR";

/// Every variable the roots are read from.
pub const VARIABLES: [&str; 2] = [FILE, DIRS];

impl Named {
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Named {
        Named {
            file: var(FILE).filter(|v| !v.is_empty()),
            dirs: var(DIRS).filter(|v| !v.is_empty()),
        }
    }
}

/// The roots `named`, or why they cannot be read. A variable that is set
/// must work: its error is said on each HTTPS request, rather than
/// trusting other roots.
pub fn read_named(named: &Named) -> Result<RootCerts, SetupError> {
    let Named { file, dirs } = named;
    if file.is_none() && dirs.is_none() {
        return Ok(RootCerts::WebPki);
    }
    let mut certs = Vec::new();
    if let Some(file) = &file {
        let fault = |cause| SetupError::CertFile {
            file: file.clone(),
            cause,
        };
        let found = read(Path::new(file)).map_err(fault)?;
        if found.is_empty() {
            return Err(fault(CertCause::Empty));
        }
        certs.extend(found);
    }
    for dir in dirs
        .iter()
        .flat_map(|d| d.split(':'))
        .filter(|d| !d.is_empty())
    {
        let entries = std::fs::read_dir(dir).map_err(|e| SetupError::CertDir {
            dir: dir.to_owned(),
            cause: Arc::new(e),
        })?;
        // Files that are no certificates (an index, a CRL) are passed by,
        // as OpenSSL passes them by.
        for entry in entries.flatten() {
            certs.extend(read(&entry.path()).unwrap_or_default());
        }
    }
    if certs.is_empty() {
        return Err(SetupError::NoCertInDirs);
    }
    Ok(RootCerts::from(certs))
}

/// The certificates of one PEM file.
fn read(path: &Path) -> Result<Vec<Certificate<'static>>, CertCause> {
    use std::io::Read;
    let mut pem = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(FILE_LIMIT).read_to_end(&mut pem))
        .map_err(|e| CertCause::Read(Arc::new(e)))?;
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(&pem) {
        if let PemItem::Certificate(cert) = item.map_err(|e| CertCause::Pem(Arc::new(e)))? {
            certs.push(cert);
        }
    }
    Ok(certs)
}
