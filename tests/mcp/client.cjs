// axe-mcp driven by the official TypeScript MCP SDK as a real client over
// stdio; run by tests/mcp_sdk.rs, which checks what this prints.
//
//     node client.cjs check SDK
//         Exits 0 when SDK can be loaded here (prints its version).
//     node client.cjs session SDK MODE AXE_MCP AGENT
//         One client: connect, list the tools, call every tool, a
//         malformed call, an unknown tool, ping, close. Prints one JSON
//         object.
//
// SDK is "sdk" (`@modelcontextprotocol/sdk`, 1.x: the handshake generation
// only) or "client" (`@modelcontextprotocol/client`, 2.x: both
// generations). MODE is the 2.x client's `versionNegotiation.mode`:
// "legacy" (its default: the initialize handshake) or "auto" (a
// server/discover probe, on a sibling process for stdio, falling back to
// initialize); the 1.x SDK takes only "legacy".
//
// CommonJS, so that the packages are found through NODE_PATH wherever
// they were installed (ES modules ignore NODE_PATH). The server gets this
// process's whole environment (the SDK passes only HOME, PATH and a few
// more unless told), so the test's XDG directories reach it.

'use strict';

const PACKAGES = {
    sdk: {
        name: '@modelcontextprotocol/sdk',
        load: () => ({
            Client: require('@modelcontextprotocol/sdk/client/index.js').Client,
            StdioClientTransport: require('@modelcontextprotocol/sdk/client/stdio.js').StdioClientTransport,
            StreamableHTTPClientTransport: require('@modelcontextprotocol/sdk/client/streamableHttp.js').StreamableHTTPClientTransport
        })
    },
    client: {
        name: '@modelcontextprotocol/client',
        load: () => ({
            Client: require('@modelcontextprotocol/client').Client,
            StdioClientTransport: require('@modelcontextprotocol/client/stdio').StdioClientTransport,
            StreamableHTTPClientTransport: require('@modelcontextprotocol/client').StreamableHTTPClientTransport
        })
    }
};

function pkg(sdk) {
    const p = PACKAGES[sdk];
    if (!p) throw new Error(`unknown SDK ${sdk}: sdk or client`);
    return p;
}

function version(sdk) {
    // The package's own package.json is not exported; find it beside the
    // resolved entry point.
    const path = require('path');
    const fs = require('fs');
    let dir = path.dirname(require.resolve(pkg(sdk).name === '@modelcontextprotocol/sdk' ? '@modelcontextprotocol/sdk/client/index.js' : '@modelcontextprotocol/client'));
    for (;;) {
        const file = path.join(dir, 'package.json');
        if (fs.existsSync(file)) {
            const json = JSON.parse(fs.readFileSync(file, 'utf8'));
            if (json.name === pkg(sdk).name) return json.version;
        }
        const up = path.dirname(dir);
        if (up === dir) throw new Error(`no package.json for ${pkg(sdk).name}`);
        dir = up;
    }
}

function result(r) {
    return {
        isError: r.isError === true,
        text: r.content.filter(c => c.type === 'text').map(c => c.text).join('\n')
    };
}

async function session(sdk, mode, axeMcp, agent) {
    const { Client, StdioClientTransport, StreamableHTTPClientTransport } = pkg(sdk).load();
    const options = { capabilities: {} };
    if (sdk === 'client') options.versionNegotiation = { mode };
    else if (mode !== 'legacy') throw new Error('the 1.x SDK speaks only the handshake generation: mode legacy');
    const client = new Client({ name: 'axe-test', version: '1.0.0' }, options);
    const env = {};
    for (const [k, v] of Object.entries(process.env)) if (typeof v === 'string') env[k] = v;
    // An http:// AXE_MCP is axe-mcp --http's address: the streamable
    // HTTP transport to its endpoint for AGENT, with AXE_TEST_BEARER as
    // the token when set.
    const headers = process.env.AXE_TEST_BEARER ? { Authorization: `Bearer ${process.env.AXE_TEST_BEARER}` } : {};
    const transport = axeMcp.startsWith('http://')
        ? new StreamableHTTPClientTransport(new URL(`${axeMcp}/mcp/${agent}`), { requestInit: { headers } })
        : new StdioClientTransport({
            command: axeMcp,
            args: [agent],
            env,
            cwd: process.cwd(),
            stderr: 'inherit'
        });
    const out = {};
    let started = performance.now();
    await client.connect(transport);
    out.connect_seconds = (performance.now() - started) / 1000;
    out.protocolVersion = client.getNegotiatedProtocolVersion ? client.getNegotiatedProtocolVersion() : null;
    out.discovered = client.getDiscoverResult ? client.getDiscoverResult() !== undefined : false;
    out.serverInfo = client.getServerVersion() ?? null;
    out.instructions = client.getInstructions() ?? null;
    out.capabilities = client.getServerCapabilities() ?? null;
    const tools = await client.listTools();
    out.tools = tools.tools;
    out.nextCursor = tools.nextCursor ?? null;
    const calls = [
        ['recall_empty', 'recall', {}],
        ['remember', 'remember', { content: 'Ada prefers short answers.' }],
        ['reflect', 'reflect', { content: 'Ada prefers short answers; keep replies brief.' }],
        ['learn_fact', 'learn_fact', { topic: 'people', content: 'Ada maintains the deploy scripts.' }],
        ['recall', 'recall', { days: 1 }],
        ['search', 'search_notes', { query: 'short answers', limit: 5 }],
        // Malformed: a misspelt argument, a wrong type. Tool errors.
        ['misspelt', 'reflect', { contents: 'x' }],
        ['mistyped', 'remember', { content: 42 }],
        // A client's own scheduling argument (Gemini CLI's): left out.
        ['scheduled', 'remember', { content: 'Deploys wait for the canary.', wait_for_previous: true }]
    ];
    out.calls = {};
    for (const [key, name, args] of calls) {
        out.calls[key] = result(await client.callTool({ name, arguments: args }));
    }
    // A tool that is not there: a protocol error, and the client goes on.
    try {
        out.unknown_tool = { result: result(await client.callTool({ name: 'no_such_tool', arguments: {} })) };
    } catch (e) {
        out.unknown_tool = { code: e.code ?? null, message: String(e.message) };
    }
    if (out.protocolVersion === null || out.protocolVersion < '2026') {
        await client.ping();
        out.ping = true;
    }
    started = performance.now();
    await client.close();
    out.close_seconds = (performance.now() - started) / 1000;
    process.stdout.write(JSON.stringify(out) + '\n');
}

async function main(argv) {
    if (argv[0] === 'check' && argv.length === 2) {
        pkg(argv[1]).load();
        process.stdout.write(version(argv[1]) + '\n');
        return;
    }
    if (argv[0] === 'session' && argv.length === 5) {
        await session(...argv.slice(1));
        return;
    }
    throw new Error('usage: client.cjs check SDK | session SDK MODE AXE_MCP AGENT');
}

main(process.argv.slice(2)).then(
    () => process.exit(0),
    e => {
        process.stderr.write(`${e && e.stack ? e.stack : e}\n`);
        process.exit(1);
    }
);
