//! The Landlock engine: where bubblewrap cannot run (Docker's default
//! seccomp profile, Ubuntu's AppArmor rule on user namespaces, many CI
//! runners), the kernel's own sandbox holds a command, unprivileged and
//! with no program of its own, together with the seccomp filter
//! ([`super::seccomp`]) and `PR_SET_NO_NEW_PRIVS`.
//!
//! Landlock adds access only: a ruleset lists what may be reached, and a
//! rule on a directory grants everything beneath it. So nothing can be
//! hidden under a directory that is granted. What is granted, exactly:
//! reading (and running) every entry of `/` but `/tmp`, `/dev` and the
//! hidden directories (the home, axe's config and data, `/run`); where
//! an entry holds a hidden one, each of its own entries instead, and so
//! on down (so the directories on the way, `/` included, cannot be
//! listed); reading and writing the null, zero and full devices and
//! reading the random ones; everything in the workdir and the artifact
//! directories, walked the same way where they hold a hidden directory
//! (then nothing can be made directly in the one that holds it); the
//! system's programs under `/run` and, with the network, its resolver's
//! files. Without the network, TCP is refused by Landlock (ABI 4 on) and
//! every socket by the seccomp filter (UDP, which Landlock cannot cut
//! before ABI 10, included); with it, no Unix socket. From ABI 6 on the
//! command cannot signal a process outside the sandbox nor reach an
//! abstract Unix socket made outside it.
//!
//! The ruleset is made before the fork (it opens every path it names);
//! between fork and exec the child only makes itself a session, asks to
//! be told when its parent ends, drops the capabilities a root `axe-run`
//! would pass on, and calls `restrict_self` and `prctl`, which allocate
//! nothing: what is safe after a multi-threaded fork.
//! A helper process re-executed for that would need a command of its
//! own in every executable that runs tools, for no gain.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use ::landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetError, RulesetStatus, Scope,
};

/// The ABIs asked for, newest first: 6 brought the scopes (signals,
/// abstract sockets), 7 only audit logging.
const ABIS: [ABI; 6] = [ABI::V6, ABI::V5, ABI::V4, ABI::V3, ABI::V2, ABI::V1];

/// Devices a command may read and write, and those it may only read.
const DEVICES: [&str; 3] = ["/dev/null", "/dev/zero", "/dev/full"];
const RANDOM: [&str; 2] = ["/dev/random", "/dev/urandom"];

/// The newest ABI both this engine and the kernel know, or why Landlock
/// cannot hold a command here. Found once per process by making a
/// ruleset that needs every right of it (the crate's strict mode:
/// nothing dropped silently).
pub fn probe() -> Result<ABI, String> {
    if let Some(why) = hidden() {
        return Err(why);
    }
    static FOUND: OnceLock<Result<ABI, String>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let mut why = String::new();
            for abi in ABIS {
                match handled(abi, false).and_then(Ruleset::create) {
                    Ok(_) => return Ok(abi),
                    Err(e) if why.is_empty() => why = e.to_string(),
                    Err(_) => {}
                }
            }
            Err(format!("the kernel offers no Landlock ({why})"))
        })
        .clone()
}

/// `AXE_TEST_SANDBOX=none` (the tests' own builds only): Landlock taken
/// for absent, so the tests run where neither engine is.
#[cfg(feature = "test-hooks")]
fn hidden() -> Option<String> {
    let asked = std::env::var("AXE_TEST_SANDBOX").ok()?;
    (asked == "none").then(|| "Landlock is hidden (AXE_TEST_SANDBOX=none)".to_owned())
}

#[cfg(not(feature = "test-hooks"))]
fn hidden() -> Option<String> {
    None
}

/// A ruleset handling every right `abi` knows: the files' always, TCP
/// unless `network`, the scopes from ABI 6.
fn handled(abi: ABI, network: bool) -> Result<Ruleset, RulesetError> {
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(abi))?;
    if abi >= ABI::V4 && !network {
        ruleset = ruleset.handle_access(AccessNet::from_all(abi))?;
    }
    if abi >= ABI::V6 {
        ruleset = ruleset.scope(Scope::from_all(abi))?;
    }
    Ok(ruleset)
}

/// What a command holds under Landlock: the places kept out (real paths)
/// and those it may write.
pub struct Places<'a> {
    pub abi: ABI,
    pub network: bool,
    /// The hidden directories, `/tmp` among them.
    pub kept: &'a [PathBuf],
    /// The workdir and the artifact directories.
    pub writable: &'a [PathBuf],
    /// Read-only places inside kept ones (the system's programs under `/run`).
    pub readable: &'a [&'a str],
}

/// `cmd`, set to run under Landlock and the seccomp `filter` (a program
/// of `struct sock_filter`s), in a session of its own, killed with us.
pub fn hold(cmd: &mut Command, places: &Places, filter: Vec<u8>) -> std::io::Result<()> {
    let ruleset = ruleset(places).map_err(|e| std::io::Error::other(format!("Landlock: {e}")))?;
    let filter: Vec<libc::sock_filter> = filter
        .chunks_exact(8)
        .map(|c| libc::sock_filter {
            code: u16::from_ne_bytes([c[0], c[1]]),
            jt: c[2],
            jf: c[3],
            k: u32::from_ne_bytes([c[4], c[5], c[6], c[7]]),
        })
        .collect();
    let len = u16::try_from(filter.len()).map_err(std::io::Error::other)?;
    let parent = rustix::process::getpid();
    let mut ruleset = Some(ruleset);
    let child = move || -> std::io::Result<()> {
        // Its own session: no terminal to type into, and the group
        // `run_command` kills, which the filter keeps it from leaving.
        rustix::process::setsid()?;
        // Told when we end, even by SIGKILL: the shell then kills the
        // group (`sandbox::KEEPER`).
        rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::TERM))?;
        // Asked after the parent died: it would never come.
        if rustix::process::getppid() != Some(parent) {
            return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
        }
        // Run as root, the command would keep every capability (reading
        // any process's memory, loading modules) past what Landlock
        // checks: the bounding and ambient sets go, so exec grants none.
        // Without CAP_SETPCAP there are none to drop, and EPERM says so.
        for cap in 0..64 {
            #[allow(unsafe_code)]
            // SAFETY: a system call on plain integers.
            let _ = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) };
        }
        #[allow(unsafe_code)]
        // SAFETY: as above.
        let _ = unsafe {
            libc::prctl(
                libc::PR_CAP_AMBIENT,
                libc::PR_CAP_AMBIENT_CLEAR_ALL,
                0,
                0,
                0,
            )
        };
        let Some(ruleset) = ruleset.take() else {
            return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
        };
        // Sets no_new_privs first, which the filter needs too.
        match ruleset.restrict_self() {
            Ok(status) if status.ruleset == RulesetStatus::FullyEnforced => {}
            Ok(_) => return Err(std::io::Error::from_raw_os_error(libc::EOPNOTSUPP)),
            Err(_) => return Err(std::io::Error::last_os_error()),
        }
        let program = libc::sock_fprog {
            len,
            filter: filter.as_ptr().cast_mut(),
        };
        #[allow(unsafe_code)]
        // SAFETY: `program` points at `len` instructions that outlive the
        // call, which copies them.
        let set = unsafe {
            libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &raw const program,
            )
        };
        match set {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        }
    };
    #[allow(unsafe_code)]
    // SAFETY: between fork and exec the hook only makes system calls
    // (setsid, prctl, getppid, landlock_restrict_self, close) and moves
    // what it owns: nothing allocates or takes a lock.
    unsafe {
        cmd.pre_exec(child);
    }
    Ok(())
}

/// The ruleset for `places`: every rule made here, before the fork.
fn ruleset(places: &Places) -> Result<RulesetCreated, RulesetError> {
    let abi = places.abi;
    let read = AccessFs::from_read(abi);
    let all = AccessFs::from_all(abi);
    let mut rules: Vec<(PathBuf, BitFlags<AccessFs>)> = Vec::new();
    let root = Path::new("/");
    let dev = PathBuf::from("/dev");
    let mut kept_read: Vec<PathBuf> = places.kept.to_vec();
    kept_read.push(dev.clone());
    grant(&mut rules, root, read, &kept_read, true);
    for place in places.readable {
        rules.push((PathBuf::from(place), read));
    }
    let device = AccessFs::from_file(abi) & !AccessFs::Execute;
    rules.extend(DEVICES.iter().map(|d| (PathBuf::from(d), device)));
    rules.extend(
        RANDOM
            .iter()
            .map(|d| (PathBuf::from(d), AccessFs::ReadFile.into())),
    );
    // Writable, but never the kernel's own trees, nor the devices.
    let mut kept_write = kept_read;
    kept_write.extend(["/proc", "/sys"].map(PathBuf::from));
    for place in places.writable {
        grant(&mut rules, place, all, &kept_write, false);
    }
    let mut created = handled(abi, places.network)?.create()?;
    let files = AccessFs::from_file(abi);
    for (path, access) in rules {
        // What vanished meanwhile, or cannot be opened, is not granted.
        let Ok(dir) = std::fs::metadata(&path).map(|m| m.is_dir()) else {
            continue;
        };
        let Ok(fd) = PathFd::new(&path) else {
            continue;
        };
        let access = if dir { access } else { access & files };
        created = created.add_rule(PathBeneath::new(fd, access))?;
    }
    Ok(created)
}

/// Rules giving `access` to `top` and everything beneath it but the
/// `kept` places (real paths) below it: where `top` holds one, to each
/// of its entries instead, walked the same way. A symbolic link is
/// granted where it leads when `follow` (and that is neither kept nor
/// holds a kept place), else left out: a link in the workdir must not
/// make its target writable.
fn grant(
    rules: &mut Vec<(PathBuf, BitFlags<AccessFs>)>,
    top: &Path,
    access: BitFlags<AccessFs>,
    kept: &[PathBuf],
    follow: bool,
) {
    if !kept.iter().any(|k| k.starts_with(top) && k != top) {
        rules.push((top.to_path_buf(), access));
        return;
    }
    let Ok(entries) = std::fs::read_dir(top) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if kept.contains(&path) {
            continue;
        }
        if !entry.file_type().is_ok_and(|t| t.is_symlink()) {
            grant(rules, &path, access, kept, follow);
            continue;
        }
        let Ok(real) = std::fs::canonicalize(&path) else {
            continue;
        };
        let touches = kept
            .iter()
            .any(|k| real.starts_with(k) || k.starts_with(&real));
        if follow && !touches {
            rules.push((real, access));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What holds a kept place is granted entry by entry, the kept place
    /// left out; a link is followed only where asked, and never to or
    /// over a kept place; the top itself is granted whole when it holds
    /// none, even when it is kept (a workdir that is the home).
    #[test]
    fn a_kept_place_is_left_out_of_what_holds_it() {
        let tmp = tempfile::tempdir().unwrap();
        let top = std::fs::canonicalize(tmp.path()).unwrap();
        for dir in ["a/secret", "a/b", "c"] {
            std::fs::create_dir_all(top.join(dir)).unwrap();
        }
        std::fs::write(top.join("a/f"), "").unwrap();
        std::os::unix::fs::symlink(top.join("a/secret"), top.join("to-secret")).unwrap();
        std::os::unix::fs::symlink(top.join("c"), top.join("a/to-c")).unwrap();
        let kept = vec![top.join("a/secret")];
        let read = AccessFs::from_read(ABI::V1);
        let granted = |follow| {
            let mut rules = Vec::new();
            grant(&mut rules, &top, read, &kept, follow);
            let mut paths: Vec<PathBuf> = rules.into_iter().map(|(p, _)| p).collect();
            paths.sort();
            paths
        };
        let plain = vec![top.join("a/b"), top.join("a/f"), top.join("c")];
        assert_eq!(granted(false), plain);
        let mut followed = plain.clone();
        // `a/to-c` leads to `c`, granted again; `to-secret` nowhere.
        followed.push(top.join("c"));
        followed.sort();
        assert_eq!(granted(true), followed);
        let mut rules = Vec::new();
        grant(&mut rules, &top.join("a/secret"), read, &kept, false);
        assert_eq!(rules.len(), 1, "a kept top is still the workdir");
        let mut rules = Vec::new();
        grant(&mut rules, &top.join("c"), read, &kept, false);
        assert_eq!(rules, vec![(top.join("c"), read)]);
    }
}
