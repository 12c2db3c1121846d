"""A remote MCP server behind OAuth, all on 127.0.0.1, for
tests/mcp_oauth.rs: the MCP endpoint /mcp (one tool, `whoami`), its
protected resource metadata, and an authorization server under /as with
dynamic registration, an authorization endpoint that approves at once
(redirecting straight back, as the conformance suite's does), and a
token endpoint that checks PKCE (S256) and hands out refresh tokens.

    python3 oauth_server.py LOG [--expires-in N] [--refuse-first-token]

--expires-in is the life of the token the login gets (3600 s unless
given); --refuse-first-token refuses that token as if it were revoked.

Prints its port on the first line of stdout. Appends one JSON line per
event to LOG (the tokens it issued among them, so the test can look for
them where they must not be).
"""

import base64
import hashlib
import json
import secrets
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlparse

LOG = sys.argv[1]
EXPIRES_IN = int(sys.argv[sys.argv.index("--expires-in") + 1]) if "--expires-in" in sys.argv else 3600
REFUSE_FIRST = "--refuse-first-token" in sys.argv

lock = threading.Lock()
clients = {}  # client_id -> redirect_uris
codes = {}  # code -> (client_id, redirect_uri, challenge, resource)
access = {}  # token -> n
refresh = {}  # token -> client_id
issued = [0]


def log(**event):
    with lock, open(LOG, "a") as f:
        f.write(json.dumps(event) + "\n")


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def base(self):
        return "http://127.0.0.1:%d" % self.server.server_address[1]

    def send(self, status, body=None, headers=()):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        if body is not None:
            self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        return self.rfile.read(int(self.headers.get("content-length") or 0))

    def do_GET(self):
        url = urlparse(self.path)
        base = self.base()
        if url.path == "/.well-known/oauth-protected-resource/mcp":
            return self.send(200, {
                "resource": base + "/mcp",
                "authorization_servers": [base + "/as"],
                "scopes_supported": ["files:read"],
            })
        if url.path == "/.well-known/oauth-authorization-server/as":
            return self.send(200, {
                "issuer": base + "/as",
                "authorization_endpoint": base + "/as/authorize",
                "token_endpoint": base + "/as/token",
                "registration_endpoint": base + "/as/register",
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
                "authorization_response_iss_parameter_supported": True,
            })
        if url.path == "/as/authorize":
            q = {k: v[0] for k, v in parse_qs(url.query).items()}
            client = q.get("client_id")
            if client not in clients or q.get("redirect_uri") not in clients[client]:
                return self.send(400, {"error": "invalid_request"})
            if q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
                return self.send(400, {"error": "invalid_request", "error_description": "PKCE S256 required"})
            code = secrets.token_urlsafe(16)
            codes[code] = (client, q["redirect_uri"], q["code_challenge"], q.get("resource"))
            log(event="authorize", scope=q.get("scope"), resource=q.get("resource"))
            back = q["redirect_uri"] + "?" + urlencode({"code": code, "state": q.get("state", ""), "iss": base + "/as"})
            return self.send(302, None, [("location", back)])
        self.send(404, {"error": "not found"})

    def do_POST(self):
        url = urlparse(self.path)
        if url.path == "/as/register":
            meta = json.loads(self.body())
            client = "client-" + secrets.token_hex(4)
            clients[client] = meta.get("redirect_uris", [])
            log(event="register", application_type=meta.get("application_type"), grant_types=meta.get("grant_types"))
            return self.send(201, {"client_id": client, "redirect_uris": clients[client], "token_endpoint_auth_method": "none"})
        if url.path == "/as/token":
            return self.token({k: v[0] for k, v in parse_qs(self.body().decode()).items()})
        if url.path == "/mcp":
            return self.mcp(json.loads(self.body() or b"null"))
        self.send(404, {"error": "not found"})

    def do_DELETE(self):
        self.send(200, {})

    def grant(self, client, how):
        issued[0] += 1
        token = "at-%d-%s" % (issued[0], secrets.token_hex(8))
        again = "rt-" + secrets.token_hex(8)
        access[token] = issued[0]
        refresh[again] = client
        log(event="token", how=how, n=issued[0], access_token=token, refresh_token=again)
        # --expires-in is the first token's life; the refreshed last.
        life = EXPIRES_IN if how == "code" else 3600
        return self.send(200, {"access_token": token, "token_type": "Bearer", "expires_in": life, "refresh_token": again})

    def token(self, form):
        if form.get("grant_type") == "authorization_code":
            got = codes.pop(form.get("code"), None)
            if not got or got[0] != form.get("client_id") or got[1] != form.get("redirect_uri"):
                return self.send(400, {"error": "invalid_grant"})
            verifier = form.get("code_verifier", "")
            made = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if made != got[2]:
                log(event="pkce-mismatch")
                return self.send(400, {"error": "invalid_grant", "error_description": "PKCE verification failed"})
            log(event="pkce-verified", resource=form.get("resource"))
            return self.grant(got[0], "code")
        if form.get("grant_type") == "refresh_token":
            client = refresh.pop(form.get("refresh_token"), None)
            if client is None:
                return self.send(400, {"error": "invalid_grant"})
            return self.grant(client, "refresh")
        self.send(400, {"error": "unsupported_grant_type"})

    def mcp(self, message):
        auth = self.headers.get("authorization", "")
        token = auth[len("Bearer "):] if auth.startswith("Bearer ") else None
        n = access.get(token)
        if n is None or (REFUSE_FIRST and n == 1):
            log(event="refused", had_token=token is not None)
            challenge = 'Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp", scope="files:read"' % self.base()
            return self.send(401, {"error": "invalid_token"}, [("www-authenticate", challenge)])
        method = message.get("method")
        log(event="mcp", method=method, n=n)
        if "id" not in message:
            return self.send(202)
        result = {}
        if method == "initialize":
            result = {"protocolVersion": message["params"]["protocolVersion"], "capabilities": {"tools": {}},
                      "serverInfo": {"name": "oauth-test", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [{"name": "whoami", "description": "who the token says", "inputSchema": {"type": "object"}}]}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": "signed in with token #%d" % n}]}
        self.send(200, {"jsonrpc": "2.0", "id": message["id"], "result": result})


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
