#!/usr/bin/env node
// Every name on PATH (axe, axe-run, ...) is a link to this file: it runs
// the executable of the same name from the platform package npm
// installed beside this one (axe-agents-linux-x64 or -linux-arm64), as
// the Claude Code and Codex packages run theirs. Nothing is downloaded.
"use strict";

const path = require("path");
const { spawn } = require("child_process");

const PLATFORMS = {
  "linux x64": "axe-agents-linux-x64",
  "linux arm64": "axe-agents-linux-arm64",
};

function fail(message) {
  process.stderr.write(`error: ${message}\n`);
  process.exit(1);
}

const key = `${process.platform} ${process.arch}`;
const pkg = PLATFORMS[key];
if (!pkg) {
  fail(`axe-agents has no executables for ${key} (Linux x64 and arm64 only)`);
}
let bin;
try {
  bin = path.join(path.dirname(require.resolve(`${pkg}/package.json`)), "bin");
} catch {
  fail(`${pkg} is not installed (npm leaves optional dependencies out with --omit=optional); npm i -g axe-agents again`);
}
// Started through a link named for the command; run as a file, it is axe.
const invoked = path.basename(process.argv[1]);
const name = /^axe(-[a-z]+)*$/.test(invoked) ? invoked : "axe";

const child = spawn(path.join(bin, name), process.argv.slice(2), { stdio: "inherit" });
// Ctrl-C reaches the whole foreground group, the executable included
// (axe-chat cancels an answer on it): this process only stays alive to
// pass on its exit. Signals sent to this process alone are passed on.
process.on("SIGINT", () => {});
for (const signal of ["SIGTERM", "SIGHUP", "SIGQUIT"]) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (err) => fail(`failed to run ${path.join(bin, name)}: ${err.message}`));
child.on("exit", (code, signal) => {
  if (signal) {
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code ?? 1);
});
