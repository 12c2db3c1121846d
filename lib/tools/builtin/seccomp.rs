//! The seccomp filter bubblewrap puts on a command that keeps the network
//! (`[sandbox] network = true`): no Unix socket. Under Landlock
//! ([`super::landlock`]), which has neither network namespace nor hidden
//! `/run`, every command gets it, refusing every socket when the network
//! is off, and refusing `setsid` and `setpgid` too, so that nothing it
//! starts leaves the process group `run_command` kills at its end.
//!
//! Sharing the host's network namespace shares its abstract Unix sockets
//! too (X11's `@/tmp/.X11-unix/X0`, D-Bus buses, which have no file to
//! hide), and a seccomp filter cannot read the address a `connect` names.
//! So `socket(AF_UNIX, ...)` itself is refused with `EACCES`, which also
//! keeps out a socket file anywhere the command can see; `socketpair`,
//! which reaches nothing outside, still works. `io_uring_setup` is refused
//! too: io_uring's own socket and connect operations pass no filter.
//!
//! A classic BPF program written out here (a few dozen instructions)
//! rather than a crate: one per ABI the kernel may run the command in
//! (the native one, and the 32-bit one beside it, whose `socketcall`
//! hides its arguments in memory and is refused whole); any other is
//! refused everything.

/// What the filter refuses besides Unix sockets and io_uring.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Refuse {
    /// Every socket, of any family (`socketpair` still works).
    pub every_socket: bool,
    /// A new session or process group.
    pub new_group: bool,
}

/// What bubblewrap reads from `--seccomp FD`: `struct sock_filter`s, or
/// `None` where this build knows no ABI's numbers (the command then keeps
/// Unix sockets, and `-v` says so).
pub fn program(refuse: Refuse) -> Option<Vec<u8>> {
    let abis = ABIS?;
    let mut out = vec![load(ARCH)];
    for abi in abis {
        let block = block(abi, refuse);
        // Not this ABI: past its block, to the next one's test.
        let skip = u8::try_from(block.len()).ok()?;
        out.push(Insn::jump(JEQ, abi.arch, 0, skip));
        out.extend(block);
    }
    out.push(Insn::ret(DENY));
    Some(out.iter().flat_map(Insn::bytes).collect())
}

/// One ABI's system-call numbers.
struct Abi {
    /// `AUDIT_ARCH_*`, as the kernel reports it in `seccomp_data`.
    arch: u32,
    socket: u32,
    /// Refused whatever their arguments.
    refused: &'static [u32],
    /// `setsid` and `setpgid`.
    new_group: [u32; 2],
    /// Numbers from here on are another ABI sharing this `arch` (x32).
    foreign_from: Option<u32>,
}

const IO_URING_SETUP: u32 = 425;

#[cfg(target_arch = "x86_64")]
const ABIS: Option<&[Abi]> = Some(&[
    Abi {
        arch: 0xc000_003e,
        socket: 41,
        refused: &[IO_URING_SETUP],
        new_group: [112, 109],
        foreign_from: Some(0x4000_0000),
    },
    // i386: `socketcall` (102) is every socket call at once.
    Abi {
        arch: 0x4000_0003,
        socket: 359,
        refused: &[102, IO_URING_SETUP],
        new_group: [66, 57],
        foreign_from: None,
    },
]);

#[cfg(target_arch = "aarch64")]
const ABIS: Option<&[Abi]> = Some(&[
    Abi {
        arch: 0xc000_00b7,
        socket: 198,
        refused: &[IO_URING_SETUP],
        new_group: [157, 154],
        foreign_from: None,
    },
    // 32-bit ARM (EABI), whose `socketcall` is 102 for old binaries.
    Abi {
        arch: 0x4000_0028,
        socket: 281,
        refused: &[102, IO_URING_SETUP],
        new_group: [66, 57],
        foreign_from: None,
    },
]);

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const ABIS: Option<&[Abi]> = None;

// Offsets in `struct seccomp_data`: the call's number, its ABI, and the
// low half of its first argument.
const NR: u32 = 0;
const ARCH: u32 = 4;
const ARG0: u32 = if cfg!(target_endian = "little") {
    16
} else {
    20
};

const AF_UNIX: u32 = 1;
const EACCES: u32 = 13;

// `BPF_LD | BPF_W | BPF_ABS`, `BPF_JMP | BPF_JEQ | BPF_K`,
// `BPF_JMP | BPF_JGE | BPF_K`, `BPF_RET | BPF_K`.
const LD: u16 = 0x20;
const JEQ: u16 = 0x15;
const JGE: u16 = 0x35;
const RET: u16 = 0x06;
const ALLOW: u32 = 0x7fff_0000;
const DENY: u32 = 0x0005_0000 | EACCES;

/// A `struct sock_filter`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Insn {
    code: u16,
    jt: u8,
    jf: u8,
    k: u32,
}

impl Insn {
    fn jump(code: u16, k: u32, jt: u8, jf: u8) -> Insn {
        Insn { code, jt, jf, k }
    }

    fn ret(k: u32) -> Insn {
        Insn::jump(RET, k, 0, 0)
    }

    fn bytes(&self) -> [u8; 8] {
        let mut out = [0; 8];
        out[..2].copy_from_slice(&self.code.to_ne_bytes());
        out[2] = self.jt;
        out[3] = self.jf;
        out[4..].copy_from_slice(&self.k.to_ne_bytes());
        out
    }
}

fn load(offset: u32) -> Insn {
    Insn::jump(LD, offset, 0, 0)
}

/// The checks of one ABI, ending in its own allow and deny: every jump
/// inside goes forward to one of those two or falls through.
fn block(abi: &Abi, refuse: Refuse) -> Vec<Insn> {
    // Jumps are written to `ALLOW_AT`/`DENY_AT` and made relative below.
    const ALLOW_AT: u8 = u8::MAX;
    const DENY_AT: u8 = u8::MAX - 1;
    let mut ops = vec![load(NR)];
    if let Some(from) = abi.foreign_from {
        ops.push(Insn::jump(JGE, from, DENY_AT, 0));
    }
    let mut refused = abi.refused.to_vec();
    if refuse.new_group {
        refused.extend(abi.new_group);
    }
    if refuse.every_socket {
        refused.push(abi.socket);
    }
    for nr in refused {
        ops.push(Insn::jump(JEQ, nr, DENY_AT, 0));
    }
    ops.push(Insn::jump(JEQ, abi.socket, 0, ALLOW_AT));
    ops.push(load(ARG0));
    ops.push(Insn::jump(JEQ, AF_UNIX, DENY_AT, ALLOW_AT));
    let allow = ops.len();
    ops.push(Insn::ret(ALLOW));
    ops.push(Insn::ret(DENY));
    let to = |at: usize, target: u8| match target {
        ALLOW_AT => (allow - at - 1) as u8,
        DENY_AT => (allow - at) as u8,
        next => next,
    };
    for (at, op) in ops.iter_mut().enumerate().take(allow) {
        op.jt = to(at, op.jt);
        op.jf = to(at, op.jf);
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The filter run over `seccomp_data` as the kernel would: what it
    /// returns for call `nr` of ABI `arch` with first argument `arg0`.
    fn verdict(program: &[u8], arch: u32, nr: u32, arg0: u32) -> u32 {
        let insns: Vec<Insn> = program
            .chunks(8)
            .map(|c| Insn {
                code: u16::from_ne_bytes([c[0], c[1]]),
                jt: c[2],
                jf: c[3],
                k: u32::from_ne_bytes([c[4], c[5], c[6], c[7]]),
            })
            .collect();
        let word = |offset: u32| match offset {
            NR => nr,
            ARCH => arch,
            ARG0 => arg0,
            other => panic!("reads offset {other}"),
        };
        let (mut pc, mut acc) = (0, 0);
        loop {
            let op = insns[pc];
            pc += 1;
            match op.code {
                LD => acc = word(op.k),
                JEQ | JGE => {
                    let taken = if op.code == JEQ {
                        acc == op.k
                    } else {
                        acc >= op.k
                    };
                    pc += usize::from(if taken { op.jt } else { op.jf });
                }
                RET => return op.k,
                other => panic!("unknown instruction {other:#x}"),
            }
        }
    }

    #[test]
    fn unix_sockets_and_io_uring_are_refused_in_every_abi() {
        let Some(program) = program(Refuse::default()) else {
            return;
        };
        for abi in ABIS.unwrap() {
            let at = |nr, arg0| verdict(&program, abi.arch, nr, arg0);
            assert_eq!(at(abi.socket, AF_UNIX), DENY);
            assert_eq!(at(abi.socket, 2), ALLOW, "AF_INET");
            assert_eq!(at(abi.socket, 10), ALLOW, "AF_INET6");
            for &nr in abi.refused {
                assert_eq!(at(nr, 0), DENY, "{nr}");
            }
            // read, write, socketpair and the rest pass.
            for nr in [0, 1, 3, 53, 199, 200] {
                if nr != abi.socket && !abi.refused.contains(&nr) {
                    assert_eq!(at(nr, AF_UNIX), ALLOW, "{nr}");
                }
            }
            if let Some(from) = abi.foreign_from {
                assert_eq!(at(from + abi.socket, AF_UNIX), DENY, "x32");
                assert_eq!(at(from, 0), DENY, "x32");
            }
        }
        assert_eq!(verdict(&program, 0x1234, 0, 0), DENY, "an unknown ABI");
    }

    /// Under Landlock without the network: no socket of any family, no
    /// new session or group; with it, only those and Unix sockets.
    #[test]
    fn every_socket_and_new_groups_are_refused_when_asked() {
        let every = Refuse {
            every_socket: true,
            new_group: true,
        };
        let Some(every) = program(every) else {
            return;
        };
        let only_groups = program(Refuse {
            every_socket: false,
            new_group: true,
        })
        .unwrap();
        let plain = program(Refuse::default()).unwrap();
        for abi in ABIS.unwrap() {
            for family in [1, 2, 10, 16] {
                assert_eq!(verdict(&every, abi.arch, abi.socket, family), DENY);
            }
            assert_eq!(verdict(&only_groups, abi.arch, abi.socket, 2), ALLOW);
            assert_eq!(verdict(&only_groups, abi.arch, abi.socket, 1), DENY);
            for nr in abi.new_group {
                assert_eq!(verdict(&every, abi.arch, nr, 0), DENY, "{nr}");
                assert_eq!(verdict(&only_groups, abi.arch, nr, 0), DENY, "{nr}");
                assert_eq!(verdict(&plain, abi.arch, nr, 0), ALLOW, "{nr}");
            }
            assert_eq!(verdict(&every, abi.arch, 0, 0), ALLOW, "read");
        }
    }
}
