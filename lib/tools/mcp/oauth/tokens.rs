//! The stored login of one MCP server, by its URL: a JSON file, 0600, in
//! `<data>/mcp-oauth/` (0700), named by the SHA-256 of the URL, so every
//! agent that names the same server shares one login, as a browser would.
//! Written whole to a temp file beside it and renamed over it; a refresh
//! holds a lock beside it, so two runs refreshing at once use one new
//! token rather than spending the refresh token twice.
//!
//! [`Session`] is a run's use of it: the access token, refreshed when it
//! has expired or the server refuses it.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axe_base::lock::Recover;
use axe_net::Client as Http;
use serde::{Deserialize, Serialize};

use super::OAuthError;
use super::grant::{self, Granted};
use super::register::Registration;

/// The directory under axe's data directory.
pub const DIR: &str = "mcp-oauth";

/// A token file is small; anything larger is not one.
const MAX_BYTES: u64 = 64 << 10;

/// How long before it expires a token counts as expired: the time a
/// request may take.
const MARGIN: u64 = 60;

/// The token file of the server at `server_url`, under `data`.
pub fn token_file(data: &Path, server_url: &str) -> PathBuf {
    let digest = ring::digest::digest(&ring::digest::SHA256, server_url.trim().as_bytes());
    let hex: String = digest.as_ref()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    data.join(DIR).join(format!("{hex}.json"))
}

/// A login as stored. No `Debug`: it holds secrets.
#[derive(Clone, Serialize, Deserialize)]
pub struct Stored {
    pub server_url: String,
    /// The resource the tokens are for (RFC 8707), as its metadata
    /// published it.
    pub resource: String,
    pub issuer: String,
    pub token_endpoint: String,
    #[serde(flatten)]
    pub client: Registration,
    pub access_token: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// Seconds since the epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
}

impl Stored {
    fn expired(&self) -> bool {
        self.expires_at
            .is_some_and(|at| at <= grant::now().saturating_add(MARGIN))
    }

    fn take(&mut self, granted: Granted) {
        self.access_token = granted.access_token;
        // RFC 6749 section 6: a refresh that gives none keeps the old one.
        if granted.refresh_token.is_some() {
            self.refresh_token = granted.refresh_token;
        }
        self.expires_at = granted.expires_at;
        if granted.scope.is_some() {
            self.scope = granted.scope;
        }
    }
}

fn failed(path: &Path) -> impl Fn(std::io::Error) -> OAuthError + '_ {
    move |source| OAuthError::File {
        path: path.to_owned(),
        source,
    }
}

/// The login in `path`, if there is one; a link is not followed.
pub fn load(path: &Path) -> Result<Option<Stored>, OAuthError> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path);
    let file = match file {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(failed(path)(e)),
    };
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(failed(path))?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(format!("token file {}: larger than it can be", path.display()).into());
    }
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| format!("token file {}: not a login axe wrote: {e}", path.display()).into())
}

/// Writes `stored` to `path` whole: a 0600 temp file beside it, synced,
/// renamed over it; its directory made 0700 if it is not there.
pub fn save(path: &Path, stored: &Stored) -> Result<(), OAuthError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(failed(dir))?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let temp = dir.join(format!(".{name}.{}.new", std::process::id()));
    let text = serde_json::to_vec_pretty(stored)
        .map_err(|e| OAuthError::Said(format!("token file {}: {e}", path.display())))?;
    let written = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temp)?;
        file.write_all(&text)?;
        file.write_all(b"\n")?;
        file.sync_all()?;
        fs::rename(&temp, path)
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&temp);
        return Err(failed(path)(e));
    }
    Ok(())
}

/// Holds the refresh lock of `path` until dropped.
fn lock(path: &Path) -> Result<File, OAuthError> {
    let lock_path = path.with_extension("lock");
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(&lock_path)
        .map_err(failed(&lock_path))?;
    rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)
        .map_err(|e| failed(&lock_path)(e.into()))?;
    Ok(file)
}

/// A run's use of a stored login.
pub struct Session {
    http: Http,
    path: PathBuf,
    stored: Mutex<Stored>,
}

impl Session {
    /// The login stored for the server at `server_url` under `data`, if
    /// there is one for that URL.
    pub fn open(data: &Path, server_url: &str, http: &Http) -> Result<Option<Session>, OAuthError> {
        let path = token_file(data, server_url);
        let Some(stored) = load(&path)? else {
            return Ok(None);
        };
        if stored.server_url.trim() != server_url.trim() {
            return Ok(None);
        }
        Ok(Some(Session {
            http: http.clone(),
            path,
            stored: Mutex::new(stored),
        }))
    }

    /// The `Authorization` header's value: the access token, refreshed
    /// first when it has expired and can be (a refresh that fails leaves
    /// the old token to be tried: the server has the last word).
    pub fn bearer(&self, deadline: Instant) -> String {
        let expired = {
            let stored = self.stored.lock().recover();
            stored.expired() && stored.refresh_token.is_some()
        };
        if expired {
            let _ = self.refresh(deadline);
        }
        format!("Bearer {}", self.stored.lock().recover().access_token)
    }

    /// Trades the refresh token for a new access token and stores both.
    /// Under the file's lock, a login another process refreshed meanwhile
    /// is taken as it is.
    pub fn refresh(&self, deadline: Instant) -> Result<(), OAuthError> {
        let _held = lock(&self.path)?;
        let mut stored = self.stored.lock().recover().clone();
        if let Some(on_disk) = load(&self.path)?
            && on_disk.access_token != stored.access_token
            && on_disk.server_url == stored.server_url
        {
            *self.stored.lock().recover() = on_disk;
            return Ok(());
        }
        let Some(refresh) = stored.refresh_token.clone() else {
            return Err("the stored login has no refresh token".into());
        };
        let deadline = deadline.min(Instant::now() + Duration::from_secs(30));
        let granted = grant::request(
            &self.http,
            &stored.token_endpoint,
            &stored.client,
            &[
                ("grant_type", "refresh_token"),
                ("refresh_token", &refresh),
                ("resource", &stored.resource),
            ],
            deadline,
        )?;
        stored.take(granted);
        save(&self.path, &stored)?;
        *self.stored.lock().recover() = stored;
        Ok(())
    }
}
