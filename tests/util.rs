//! What every integration test needs: its own HOME and XDG directories, agent
//! files, logs, and the executables to run against them.

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use tempfile::TempDir;

/// A private world for one test: `home/`, `config/axe/agents/`,
/// `data/axe/memory/`, all inside one temp dir.
pub struct Env {
    dir: TempDir,
}

impl Env {
    pub fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        // Traversable by the unprivileged user of `unprivileged()`.
        set_mode(dir.path(), 0o755);
        fs::create_dir_all(dir.path().join("home")).unwrap();
        Env { dir }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn config_dir(&self) -> PathBuf {
        self.root().join("config")
    }

    pub fn data_dir(&self) -> PathBuf {
        self.root().join("data")
    }

    /// An executable of this package, run inside this world.
    pub fn cmd(&self, bin: &str) -> Command {
        Command::from_std(self.std_cmd(bin))
    }

    /// [`Env::cmd`] as a plain `std::process::Command`, for tests that
    /// spawn and talk to the process themselves.
    pub fn std_cmd(&self, bin: &str) -> std::process::Command {
        let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin(bin));
        self.prepare(&mut cmd);
        cmd
    }

    /// Any program on `PATH` (a shell, say), inside this world, with this
    /// package's executables first on its `PATH`.
    pub fn shell(&self, program: &str) -> Command {
        let mut cmd = self.program(program);
        let bins = assert_cmd::cargo::cargo_bin("axe");
        let mut path = vec![bins.parent().unwrap().to_path_buf()];
        path.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        cmd.env("PATH", std::env::join_paths(path).unwrap());
        cmd
    }

    /// Any program on `PATH` (a shell, say), inside this world.
    pub fn program(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        Command::from_std(self.std_program(program))
    }

    /// [`Env::program`] as a plain `std::process::Command`.
    pub fn std_program(&self, program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
        let mut cmd = std::process::Command::new(program);
        self.prepare(&mut cmd);
        cmd
    }

    /// Like [`Env::cmd`], but as user `nobody` when the tests run as root,
    /// so that file permissions apply (root ignores them).
    pub fn unprivileged(&self, bin: &str) -> Command {
        let path = assert_cmd::cargo::cargo_bin(bin);
        let mut cmd = if is_root() {
            let mut c = std::process::Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
                .arg(path);
            c
        } else {
            std::process::Command::new(path)
        };
        self.prepare(&mut cmd);
        Command::from_std(cmd)
    }

    fn prepare(&self, cmd: &mut std::process::Command) {
        // Nothing from the developer's own setup may reach a test: no key,
        // base URL, proxy (every server a test starts is on 127.0.0.1) or
        // roots of theirs.
        for var in axe::variables() {
            cmd.env_remove(var);
        }
        // Nor their embedding model: search is lexical unless a test says.
        cmd.env_remove("AXE_EMBEDDINGS");
        cmd.current_dir(self.root())
            .env("HOME", self.root().join("home"))
            .env("XDG_CONFIG_HOME", self.config_dir())
            .env("XDG_DATA_HOME", self.data_dir());
    }

    /// Writes `<config>/axe/agents/<name>.toml`.
    pub fn agent(&self, name: &str, toml: &str) -> PathBuf {
        let dir = self.config_dir().join("axe/agents");
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{name}.toml"));
        fs::write(&path, toml).unwrap();
        path
    }

    /// An agent file for `name` to build and write: the one way the tests
    /// make an agent that is more than a few literal lines.
    pub fn agent_file(&self, name: &str) -> AgentFile<'_> {
        AgentFile {
            env: self,
            name: name.to_owned(),
            head: String::new(),
            toml: String::new(),
            kinds: String::new(),
            model: "anthropic/claude-test".to_owned(),
        }
    }

    /// An agent with memory enabled and `extra` lines in its `[memory]`.
    pub fn memory_agent(&self, name: &str, extra: &str) -> PathBuf {
        self.agent_file(name)
            .model("anthropic/claude-3")
            .memory(extra)
            .write()
    }

    /// Where the default log of `agent` lives.
    pub fn log_path(&self, agent: &str) -> PathBuf {
        self.data_dir().join(format!("axe/memory/{agent}.md"))
    }

    /// Where the state of `agent` lives.
    pub fn state_path(&self, agent: &str) -> PathBuf {
        self.data_dir().join(format!("axe/state/{agent}.json"))
    }

    /// Writes `content` at `path`, creating directories.
    pub fn write(&self, path: &Path, content: impl AsRef<[u8]>) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
    }
}

/// An agent's TOML, built up by [`Env::agent_file`]: its name and model
/// (the test model unless told), then the fields given (a system prompt,
/// a workdir, tools), then any TOML text given (fields or tables), then
/// the memory kinds turned on, each with its own keys. Written by
/// [`AgentFile::write`] where the agents are found.
pub struct AgentFile<'e> {
    env: &'e Env,
    name: String,
    model: String,
    head: String,
    toml: String,
    kinds: String,
}

impl AgentFile<'_> {
    pub fn model(mut self, model: &str) -> Self {
        model.clone_into(&mut self.model);
        self
    }

    /// `system_prompt = "<text>"`.
    pub fn prompt(mut self, text: &str) -> Self {
        self.head
            .push_str(&format!("system_prompt = {}\n", toml_string(text)));
        self
    }

    /// `description = "<text>"`.
    pub fn description(mut self, text: &str) -> Self {
        self.head
            .push_str(&format!("description = {}\n", toml_string(text)));
        self
    }

    /// `workdir = "<dir>"`.
    pub fn workdir(mut self, dir: &Path) -> Self {
        let dir = dir.display().to_string();
        self.head
            .push_str(&format!("workdir = {}\n", toml_string(&dir)));
        self
    }

    /// `tools = [<list>]`, `list` the inside of a TOML list.
    pub fn tools(mut self, list: &str) -> Self {
        self.head.push_str(&format!("tools = [{list}]\n"));
        self
    }

    /// Any TOML, after the fields above and before the memory kinds.
    pub fn toml(mut self, text: &str) -> Self {
        self.toml.push_str(text);
        self.toml.push('\n');
        self
    }

    /// `[memory]` (the run log) turned on, with `keys` in it.
    pub fn memory(self, keys: &str) -> Self {
        self.kind("memory", keys)
    }

    /// `[notes]` turned on, with `keys` in it.
    pub fn notes(self, keys: &str) -> Self {
        self.kind("notes", keys)
    }

    /// `[state]` turned on, with `keys` in it.
    pub fn state(self, keys: &str) -> Self {
        self.kind("state", keys)
    }

    fn kind(mut self, kind: &str, keys: &str) -> Self {
        self.kinds
            .push_str(&format!("[{kind}]\nenabled = true\n{keys}\n"));
        self
    }

    /// The whole file's text.
    pub fn text(&self) -> String {
        format!(
            "name = {}\nmodel = {}\n{}{}{}",
            toml_string(&self.name),
            toml_string(&self.model),
            self.head,
            self.toml,
            self.kinds
        )
    }

    /// Writes `<config>/axe/agents/<name>.toml`.
    pub fn write(self) -> PathBuf {
        self.env.agent(&self.name, &self.text())
    }

    /// Writes `<dir>/<name>.toml`.
    pub fn write_in(self, dir: &Path) -> PathBuf {
        let path = dir.join(format!("{}.toml", self.name));
        self.env.write(&path, self.text());
        path
    }
}

/// `s` as a TOML basic string (JSON's escapes are TOML's).
fn toml_string(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// `n` entries with distinct timestamps one minute apart, as the Go `axe`
/// wrote them.
pub fn entries(n: usize) -> String {
    (0..n).map(entry).collect()
}

pub fn entry(i: usize) -> String {
    format!(
        "## 2026-01-01T{:02}:{:02}:00Z\n**Task:** task {i}\n**Result:** result {i}\n\n",
        i / 60 % 24,
        i % 60
    )
}

pub fn read(path: &Path) -> String {
    String::from_utf8(fs::read(path).unwrap()).unwrap()
}

pub fn header_count(s: &str) -> usize {
    s.lines().filter(|l| l.starts_with("## ")).count()
}

pub fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

pub fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    fs::metadata("/proc/self")
        .map(|m| m.uid() == 0)
        .unwrap_or(false)
}

/// stdout of a finished command as text.
pub fn stdout(output: &std::process::Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// Whether `program` is on `PATH`, for a test that needs it. When it is
/// not, the test says so on the terminal (past the harness's capture) and
/// is skipped; with `AXE_TEST_ALL` set, as CI sets it, it fails instead.
pub fn have(program: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    if std::env::split_paths(&path).any(|dir| is_executable(&dir.join(program))) {
        return true;
    }
    unavailable(
        &format!("{program} is not on PATH"),
        "install it (see .ci/run)",
    );
    false
}

/// What a test needs is not here (`why`): it says so and is skipped, or
/// with `AXE_TEST_ALL` set fails, telling `how` to get it.
pub fn unavailable(why: &str, how: &str) {
    use std::io::Write;
    assert!(
        std::env::var_os("AXE_TEST_ALL").is_none(),
        "{why} and AXE_TEST_ALL asks for every test: {how}"
    );
    let _ = writeln!(
        std::io::stderr(),
        "skipped: {why} (set AXE_TEST_ALL=1 to fail instead)"
    );
}

/// Whether the tests run as root, for a test doing `what` (making a file
/// another user's, running as one), which needs it. When not, the test
/// is skipped through [`unavailable`], so under `AXE_TEST_ALL` it fails.
pub fn running_as_root(what: &str) -> bool {
    if is_root() {
        return true;
    }
    unavailable(
        &format!("{what} needs root"),
        "run the tests as root (as CI does)",
    );
    false
}

/// One meeting point for `n` threads of a race test: [`Gate::meet`]
/// waits until all `n` have come, so what they do next is contended by
/// schedule, never by luck. Bounded: a thread that never comes (it
/// failed) fails the others after `patience` instead of hanging them.
pub struct Gate {
    n: usize,
    came: std::sync::Mutex<usize>,
    all: std::sync::Condvar,
    patience: std::time::Duration,
}

impl Gate {
    pub fn new(n: usize, patience: std::time::Duration) -> Gate {
        Gate {
            n,
            came: std::sync::Mutex::new(0),
            all: std::sync::Condvar::new(),
            patience,
        }
    }

    pub fn meet(&self) {
        let mut came = self.came.lock().unwrap_or_else(|e| e.into_inner());
        *came += 1;
        self.all.notify_all();
        let (came, waited) = self
            .all
            .wait_timeout_while(came, self.patience, |c| *c < self.n)
            .unwrap_or_else(|e| e.into_inner());
        assert!(
            !waited.timed_out(),
            "only {} of {} came to the gate within {:?}",
            *came,
            self.n,
            self.patience
        );
    }
}

pub fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The executable `src` at `dst`, ready to run: a hard link, which opens
/// nothing for writing; where the two are on different filesystems, a
/// copy, waited on while the kernel finds it "busy" (ETXTBSY): another
/// test thread's fork may hold the copy's write handle until that child
/// execs, and running it meanwhile fails.
pub fn place_executable(src: &Path, dst: &Path) {
    if fs::hard_link(src, dst).is_ok() {
        return;
    }
    fs::copy(src, dst).unwrap();
    for _ in 0..100 {
        let ran = std::process::Command::new(dst)
            .arg("--version")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
        match ran {
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) => {
                std::thread::sleep(std::time::Duration::from_millis(10))
            }
            _ => return,
        }
    }
    panic!("{} stayed busy", dst.display());
}

/// Runs `cmd`, which runs a script this test just wrote, again while the
/// kernel finds that script "busy" (ETXTBSY): another test thread's fork
/// may hold its write handle until that child execs. Nothing ran then.
pub fn output_past_busy(cmd: &mut Command) -> std::process::Output {
    for _ in 0..20 {
        let out = cmd.output().unwrap();
        if !String::from_utf8_lossy(&out.stderr).contains("busy") {
            return out;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("the script stayed busy");
}
