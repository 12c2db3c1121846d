// Preloaded (node --require) into server-everything by tests/mcp_servers.rs:
// its HTTP server listens on 127.0.0.1 only, not on every interface, at the
// port the system picks (PORT=0), and says which port on stderr, so a test
// needs no free port guessed in advance.
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (/^\d+$/.test(String(args[0])) && typeof args[1] !== "string") {
    args.splice(1, 0, "127.0.0.1");
  }
  this.once("listening", () => {
    process.stderr.write(`axe-test-port ${this.address().port}\n`);
  });
  return listen.apply(this, args);
};
