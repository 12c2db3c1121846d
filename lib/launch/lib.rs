//! The `axe-*` executables as launchers of `axe`. Every command lives in
//! the one `axe` executable (it runs `axe-NAME` when started under that
//! name, busybox-style); each `axe-NAME` only replaces itself with the
//! `axe` beside it, started as `axe-NAME`. So the library is linked into
//! five executables (`axe` and the four below), not 30: the install is a
//! fraction of the size and links less, and `axe-NAME` and `axe NAME` are
//! the same program. What it costs is
//! one exec, about a millisecond on a slow machine (bench/RESULTS.md).
//! So the three memory writes scripts and hooks make on every event
//! (`axe-mem-append`, `axe-notes-remember`, `axe-state-record`) and the
//! state block hooks print before every prompt (`axe-state-context`)
//! stay whole programs: each links only what it runs.
//!
//! Nothing here touches the command line or the environment: the
//! process keeps its id, stdin, stdout, stderr, signals and exit code.
//!
//! A launcher is C's `main` over libc (`launcher!`), no Rust runtime:
//! with std's `main` each was about 400 KB (std's start, its panic hook,
//! the backtrace printer), 26 of them 10 MB of a 28.0 MB install; this
//! crate is `no_std`, allocates nothing and has no path that can panic
//! or unwind, so what runs is libc and this file: 18 KB a launcher, an
//! install of 18.0 MB (bench/RESULTS.md, the install; build.rs says why
//! they are linked by GNU ld). That takes unsafe code, kept to this
//! file: C's `main` and `argv` (in `launcher!`), and the calls into
//! libc. It does what std's `Command::exec` did before, byte for byte in
//! what anyone sees: argv[0] the command's name, SIGPIPE back to its
//! default, `execvp`, and where that fails the same one-line message and
//! exit code 1 (`Error::Child` in lib/base/error.rs).
#![no_std]
// SAFETY notes at each block; the workspace denies unsafe code elsewhere.
#![allow(unsafe_code)]

#[cfg(test)]
extern crate std;

use core::ffi::{c_char, c_int};

/// The exit code when `axe` cannot start: an error (1), as
/// `Error::Child` is in `EXIT_CODES` (lib/base/error.rs).
pub const FAILED: c_int = 1;

/// Linux's longest path, and so the longest `/proc/self/exe` can name.
const PATH_MAX: usize = 4096;

/// The executable's `main`: `axe_launch::launcher!(c"axe-mem-load");` in
/// a binary marked `#![cfg_attr(not(test), no_main)]` runs the command
/// `axe-mem-load` in the `axe` beside it (a test build of it keeps the
/// test harness's `main`).
#[macro_export]
macro_rules! launcher {
    ($name:literal) => {
        /// C's `main`: there is no Rust runtime to start (lib/launch).
        #[cfg(not(test))]
        #[allow(unsafe_code)]
        #[unsafe(no_mangle)]
        extern "C" fn main(
            argc: ::core::ffi::c_int,
            argv: *mut *const ::core::ffi::c_char,
        ) -> ::core::ffi::c_int {
            let name: &'static ::core::ffi::CStr = $name;
            // SAFETY: the C runtime calls `main` once, with the process's
            // own `argc` and `argv`, which is what `launch` asks for.
            unsafe { $crate::launch(name.as_ptr(), argc, argv) }
        }
    };
}

/// Runs the command `name` (`axe-mem-load`) in the `axe` beside this
/// executable; returns only when that cannot start, with the exit code.
/// C's calling convention, which cannot unwind: nothing here can panic,
/// and so the launcher links no unwinding.
///
/// # Safety
///
/// `name` is a NUL-terminated string that lives as long as the process;
/// `argc` and `argv` are what C's `main` was given: `argv` holds `argc`
/// pointers to strings, then a null pointer, and may be written to.
pub unsafe extern "C" fn launch(
    name: *const c_char,
    argc: c_int,
    argv: *mut *const c_char,
) -> c_int {
    let mut path = [0u8; PATH_MAX + 8];
    let axe = beside(&mut path);
    // argv[0] is the command's name, whatever name started this one (a
    // link); the rest is passed on as it came.
    let alone = [name, core::ptr::null()];
    let args = if argc < 1 || argv.is_null() {
        alone.as_ptr()
    } else {
        // SAFETY: argc >= 1, so argv[0] exists, and C lets main write it.
        unsafe { *argv = name };
        argv.cast_const()
    };
    // SAFETY: `axe` ends in its only NUL and every argument is a
    // NUL-terminated string that outlives the call; `args` ends in a null
    // pointer. SIGPIPE goes back to its default as std's `Command` sets
    // it for its children; `execvp` searches PATH only for the bare
    // `axe`, as std did.
    let errno = unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::execvp(axe.as_ptr().cast(), args);
        *libc::__errno_location()
    };
    let mut line = Line::new();
    line.text(b"failed to run ");
    line.text(axe.strip_suffix(b"\0").unwrap_or(axe));
    line.text(b": ");
    let mut text = [0u8; 128];
    line.text(describe(errno, &mut text));
    line.end();
    FAILED
}

/// `axe` in this executable's directory (symbolic links followed, so a
/// link to `axe-run` on `PATH` finds the `axe` of its installation);
/// `axe` on `PATH` where the system cannot say where this one is. This is
/// std's `current_exe().with_file_name("axe")`, NUL-terminated.
fn beside(path: &mut [u8; PATH_MAX + 8]) -> &[u8] {
    const BARE: &[u8] = b"axe\0";
    // SAFETY: the path is a NUL-terminated literal, and at most PATH_MAX
    // bytes are written into a buffer longer than that.
    let n = unsafe {
        libc::readlink(
            c"/proc/self/exe".as_ptr(),
            path.as_mut_ptr().cast(),
            PATH_MAX,
        )
    };
    // PATH_MAX bytes may be a path cut short; the kernel never names one
    // that long. A path holds no NUL.
    let dir = match usize::try_from(n).ok().and_then(|n| path.get(..n)) {
        Some(exe) if exe.len() < PATH_MAX => exe.iter().rposition(|&b| b == b'/'),
        _ => None,
    };
    let Some(end) = dir.map(|slash| slash + 1) else {
        return BARE;
    };
    for (slot, &b) in path.iter_mut().skip(end).zip(BARE) {
        *slot = b;
    }
    path.get(..end + BARE.len()).unwrap_or(BARE)
}

/// What `describe_io` (lib/base/error.rs) says of the OS error `errno`:
/// its text (std's `strerror_r`) with a lower-case first letter. No
/// program here sets a locale, so the text is C's, in ASCII.
fn describe(errno: c_int, buf: &mut [u8; 128]) -> &[u8] {
    // std gives up only on a negative answer; an unknown errno's
    // "Unknown error N" comes with a positive one.
    // SAFETY: strerror_r writes at most `buf.len()` bytes, NUL included.
    let failed = unsafe { libc::strerror_r(errno, buf.as_mut_ptr().cast(), buf.len()) } < 0;
    let len = if failed {
        0
    } else {
        buf.iter().position(|&b| b == 0).unwrap_or(buf.len())
    };
    if let Some(first) = buf.first_mut() {
        first.make_ascii_lowercase();
    }
    buf.get(..len).unwrap_or_default()
}

/// One line to stderr, as `axe_base::stderr::note` writes it: bytes that
/// are not UTF-8 shown as U+FFFD (`Path::display`), control and bidi
/// characters spelled out, written in one piece where it fits.
struct Line {
    buf: [u8; 512],
    len: usize,
}

impl Line {
    fn new() -> Line {
        Line {
            buf: [0; 512],
            len: 0,
        }
    }

    /// `bytes` as `String::from_utf8_lossy` reads them (each longest
    /// piece of a sequence that is not UTF-8 one U+FFFD), escaped. By
    /// hand, as core's `utf8_chunks` may panic and so would link std's
    /// panic machinery.
    fn text(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while let Some((&first, tail)) = rest.split_first() {
            // How many bytes the sequence takes, the range its second
            // byte must be in (no overlong forms, surrogates or code
            // points past U+10FFFF), and the bits of the first it keeps.
            let (width, second, bits) = match first {
                0x00..=0x7f => (1, 0x80..=0xbf, 0x7f),
                0xc2..=0xdf => (2, 0x80..=0xbf, 0x1f),
                0xe0 => (3, 0xa0..=0xbf, 0x0f),
                0xed => (3, 0x80..=0x9f, 0x0f),
                0xe1..=0xef => (3, 0x80..=0xbf, 0x0f),
                0xf0 => (4, 0x90..=0xbf, 0x07),
                0xf1..=0xf3 => (4, 0x80..=0xbf, 0x07),
                0xf4 => (4, 0x80..=0x8f, 0x07),
                _ => (0, 0x80..=0xbf, 0),
            };
            let mut code = u32::from(first & bits);
            let mut taken = 0;
            for i in 1..width {
                let range = if i == 1 { second.clone() } else { 0x80..=0xbf };
                match tail.get(i - 1) {
                    Some(&b) if range.contains(&b) => {
                        code = (code << 6) | u32::from(b & 0x3f);
                        taken += 1;
                    }
                    _ => break,
                }
            }
            let whole = width > 0 && taken == width - 1;
            match char::from_u32(code) {
                Some(c) if whole => self.char(c, rest.get(..width).unwrap_or_default()),
                _ => self.char(char::REPLACEMENT_CHARACTER, "\u{fffd}".as_bytes()),
            }
            rest = tail.get(taken..).unwrap_or_default();
        }
    }

    /// `c`, whose UTF-8 is `utf8`, as `axe_base::stderr::escape` shows it.
    fn char(&mut self, c: char, utf8: &[u8]) {
        match c {
            '\t' => self.byte(b'\t'),
            '\n' => self.bytes(b"\\n"),
            '\r' => self.bytes(b"\\r"),
            c if c.is_ascii_control() => {
                self.bytes(b"\\x");
                self.hex(u32::from(c), 2);
            }
            c if c.is_control() || is_bidi(c) => {
                self.bytes(b"\\u{");
                self.hex(u32::from(c), 1);
                self.byte(b'}');
            }
            _ => self.bytes(utf8),
        }
    }

    /// `n` in lower-case hexadecimal, at least `digits` of them.
    fn hex(&mut self, n: u32, digits: u32) {
        let mut shown = false;
        for place in (0..8).rev() {
            let digit = (n >> (place * 4)) & 0xf;
            if digit != 0 || place < digits || shown {
                shown = true;
                self.byte(b"0123456789abcdef"[digit as usize]);
            }
        }
    }

    fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
        }
    }

    fn byte(&mut self, b: u8) {
        if self.len == self.buf.len() {
            self.flush();
        }
        if let Some(slot) = self.buf.get_mut(self.len) {
            *slot = b;
            self.len += 1;
        }
    }

    /// The newline, and everything to stderr. Losing stderr must not
    /// change the exit code, so its errors are ignored.
    fn end(mut self) {
        self.byte(b'\n');
        self.flush();
    }

    fn flush(&mut self) {
        let mut rest = self.buf.get(..self.len).unwrap_or_default();
        while !rest.is_empty() {
            // SAFETY: `rest` is initialized memory of the length given.
            let n = unsafe { libc::write(libc::STDERR_FILENO, rest.as_ptr().cast(), rest.len()) };
            match usize::try_from(n) {
                Ok(n) if n > 0 => rest = rest.get(n..).unwrap_or_default(),
                // SAFETY: errno is this thread's.
                _ if n < 0 && unsafe { *libc::__errno_location() } == libc::EINTR => {}
                _ => break,
            }
        }
        self.len = 0;
    }
}

/// `axe_base::stderr::is_bidi`: the characters that change the direction
/// text is shown in.
fn is_bidi(c: char) -> bool {
    matches!(
        c,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::string::String;
    use std::vec::Vec;

    /// What `Line` writes for `bytes`, as a string.
    fn shown(bytes: &[u8]) -> String {
        let mut line = Line::new();
        let mut out = Vec::new();
        line.text(bytes);
        out.extend_from_slice(&line.buf[..line.len]);
        String::from_utf8(out).unwrap()
    }

    /// The launcher's line is `stderr::note` of `path.display()`: the
    /// same lossy reading and the same escapes, checked on the hard
    /// cases against the real ones.
    #[test]
    fn paths_are_shown_as_the_library_shows_them() {
        let cases: [&[u8]; 13] = [
            b"/usr/local/bin/axe",
            b"/opt/\xc3\xa9t\xc3\xa9/axe",
            b"/tmp/a\nb\r\x1b]0;x\x07/axe",
            b"/tmp/\x7f\xc2\x9b/axe",
            b"/tmp/x\xe2\x80\xaegpj\xe2\x81\xa6\xe2\x80\x8f\xd8\x9c/axe",
            b"/tmp/\xff\xfe\xc3/axe",
            b"/tmp/\xe2\x80/\xf0\x9f\x98\x80\t/axe",
            // Overlong forms, a surrogate, past U+10FFFF, cut short.
            b"/\xc0\x80\xc1\xbf\xe0\x80\x80\xf0\x80\x80\x80/axe",
            b"/\xed\xa0\x80\xed\x9f\xbf/axe",
            b"/\xf4\x90\x80\x80\xf4\x8f\xbf\xbf\xf5\x80/axe",
            b"/\xf0\x9f\x98/\xe2\x82",
            b"\xf1\x80\x80\xe1\x80\xc2",
            b"",
        ];
        for bytes in cases {
            let lossy = String::from_utf8_lossy(bytes);
            assert_eq!(shown(bytes), axe_base::stderr::escape(&lossy), "{bytes:?}");
        }
    }

    /// The error's text is `describe_io`'s for the same OS error.
    #[test]
    fn errors_are_described_as_the_library_describes_them() {
        for errno in [
            libc::ENOENT,
            libc::EACCES,
            libc::ENOEXEC,
            libc::E2BIG,
            libc::ELOOP,
            4095,
        ] {
            let mut buf = [0; 128];
            let ours = String::from_utf8(describe(errno, &mut buf).to_vec()).unwrap();
            let io = std::io::Error::from_raw_os_error(errno);
            assert_eq!(ours, axe_base::error::describe_io(&io), "errno {errno}");
        }
    }

    #[test]
    fn hex_has_no_leading_zeros_past_its_width() {
        let mut line = Line::new();
        line.hex(0x7, 2);
        line.byte(b' ');
        line.hex(0x202e, 1);
        line.byte(b' ');
        line.hex(0, 1);
        assert_eq!(&line.buf[..line.len], b"07 202e 0");
    }
}
