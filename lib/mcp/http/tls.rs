//! TLS for `axe-mcp --http` from `--tls-cert` and `--tls-key`, on the
//! tree's one TLS crate (rustls over ring). The records are moved by hand,
//! one socket read at a time, so a client trickling a handshake or a
//! record byte by byte meets the same deadline as one trickling plain
//! HTTP: rustls' own stream would wait out each byte's timeout anew.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustls::ServerConnection;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::wire::{Conn, Source};
use axe_base::error::{Error, Result};

/// The server's TLS settings from a PEM certificate chain and its key.
pub fn config(cert: &Path, key: &Path) -> Result<Arc<rustls::ServerConfig>> {
    let bad = |what: &Path, e: &dyn std::fmt::Display| {
        Error::Config(format!("TLS: {}: {e}", what.display()))
    };
    let certs = CertificateDer::pem_file_iter(cert)
        .map_err(|e| bad(cert, &e))?
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| bad(cert, &e))?;
    if certs.is_empty() {
        return Err(bad(cert, &"no certificate in it"));
    }
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| bad(key, &e))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|b| b.with_no_client_auth().with_single_cert(certs, key))
        .map_err(|e| bad(cert, &e))?;
    Ok(Arc::new(config))
}

/// A TLS connection read under deadlines.
pub struct Tls {
    conn: ServerConnection,
    sock: TcpStream,
    deadline: Instant,
}

impl Tls {
    pub fn new(config: Arc<rustls::ServerConfig>, sock: TcpStream) -> io::Result<Tls> {
        let conn = ServerConnection::new(config).map_err(io::Error::other)?;
        Ok(Tls {
            conn,
            sock,
            deadline: Instant::now() + super::wire::HEAD_TIME,
        })
    }

    /// Sends what rustls has to send (handshake records, alerts, data).
    fn flush_tls(&mut self) -> io::Result<()> {
        while self.conn.wants_write() {
            self.conn.write_tls(&mut self.sock)?;
        }
        Ok(())
    }
}

impl Read for Tls {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.conn.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            self.flush_tls()?;
            let left = self.deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::ErrorKind::TimedOut.into());
            }
            self.sock.set_read_timeout(Some(left))?;
            if self.conn.read_tls(&mut self.sock)? == 0 {
                return Ok(0);
            }
            if let Err(e) = self.conn.process_new_packets() {
                // Tell the client why, then give up on it.
                let _ = self.flush_tls();
                return Err(io::Error::new(io::ErrorKind::InvalidData, e));
            }
        }
    }
}

impl Write for Tls {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.conn.writer().write(buf)?;
        self.flush_tls()?;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.conn.writer().flush()?;
        self.flush_tls()
    }
}

impl Source for Tls {
    fn read_within(&mut self, time: Duration) -> io::Result<()> {
        self.deadline = Instant::now() + time.max(Duration::from_millis(1));
        Ok(())
    }
}

impl Conn for Tls {
    fn socket(&self) -> &TcpStream {
        &self.sock
    }
}

impl Tls {
    /// Ends the connection as TLS does, so the client knows the answer is
    /// whole.
    pub fn close(&mut self) {
        self.conn.send_close_notify();
        let _ = self.flush_tls();
    }
}
