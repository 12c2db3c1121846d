"""The client the MCP conformance suite runs for its auth scenarios
(tests/mcp_oauth.rs): `python3 oauth_client.py SERVER_URL`.

Writes an agent `oauth` whose one MCP server is SERVER_URL (with the
pre-registered client of MCP_CONFORMANCE_CONTEXT when the scenario gives
one), logs in with `axe-agents mcp-login --no-browser`, following the
authorization address it prints as a browser would (the suite's
authorization server approves at once and redirects to axe's loopback
listener), then runs `axe-run oauth`, whose scripted model (the test's
local provider) calls the server's tool. Exits with the first failure's
status. The axe executables are on PATH; the provider's URL and keys are
in the environment.
"""

import json
import os
import subprocess
import sys
import urllib.request

url = sys.argv[-1]
context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
agents = os.path.join(os.environ["XDG_CONFIG_HOME"], "axe", "agents")
os.makedirs(agents, exist_ok=True)
lines = [
    'name = "oauth"',
    'model = "anthropic/claude-test"',
    "[[mcp_servers]]",
    'name = "remote"',
    'transport = "streamable-http"',
    "url = %s" % json.dumps(url),
    # A client ID metadata document's URL, as a user who publishes one
    # would set it: used only where the server takes them.
    'oauth_client_metadata_url = "https://conformance-test.local/client-metadata.json"',
]
if context.get("client_id"):
    lines.append("oauth_client_id = %s" % json.dumps(context["client_id"]))
if context.get("client_secret"):
    lines.append("oauth_client_secret = %s" % json.dumps(context["client_secret"]))
with open(os.path.join(agents, "oauth.toml"), "w") as f:
    f.write("\n".join(lines) + "\n")

login = subprocess.Popen(
    ["axe-agents", "mcp-login", "oauth", "remote", "--no-browser", "--json", "--timeout", "20"],
    stdin=subprocess.DEVNULL,
    stdout=subprocess.PIPE,
    stderr=subprocess.PIPE,
    text=True,
)
said = []
for line in login.stderr:
    said.append(line)
    if line.startswith("http://") or line.startswith("https://"):
        # As the browser: the authorization server redirects to the
        # loopback listener, which answers.
        try:
            urllib.request.urlopen(line.strip(), timeout=20).read()
        except Exception as e:  # the login says what went wrong
            print("following the authorization address: %s" % e, file=sys.stderr)
        break
out, err = login.communicate(timeout=60)
sys.stderr.write("".join(said) + err)
sys.stdout.write(out)
if login.returncode != 0:
    sys.exit(login.returncode)

# Standard input is the suite's, never closed: axe-run would wait on it.
run = subprocess.run(
    ["axe-run", "oauth", "call the tool"],
    stdin=subprocess.DEVNULL,
    text=True,
    capture_output=True,
    timeout=60,
)
sys.stdout.write(run.stdout)
sys.stderr.write(run.stderr)
sys.exit(run.returncode)
