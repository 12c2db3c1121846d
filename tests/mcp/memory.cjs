// The reference MCP memory server (@modelcontextprotocol/server-memory),
// driven by the official TypeScript SDK (@modelcontextprotocol/sdk) over
// stdio; run by tests/import.rs and tests/export.rs, which read what this
// prints and the file the server keeps.
//
//     node memory.cjs write SERVER FILE GRAPH
//         Starts the server SERVER (its dist/index.js) on the JSONL file
//         FILE and stores GRAPH ({entities, relations}, JSON) through its
//         tools: create_entities, then create_relations.
//     node memory.cjs read SERVER FILE
//         Prints the graph the server reads from FILE (read_graph).
//
// CommonJS, so that the SDK is found through NODE_PATH.

'use strict';

const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');

async function main() {
    const [mode, server, file, graph] = process.argv.slice(2);
    const transport = new StdioClientTransport({
        command: process.execPath,
        args: [server],
        env: { ...process.env, MEMORY_FILE_PATH: file },
        stderr: 'ignore'
    });
    const client = new Client({ name: 'axe-tests', version: '1.0.0' });
    await client.connect(transport);
    const text = (result) => {
        if (result.isError) throw new Error(JSON.stringify(result.content));
        return result.content.map((c) => c.text).join('');
    };
    if (mode === 'write') {
        const g = JSON.parse(graph);
        text(await client.callTool({ name: 'create_entities', arguments: { entities: g.entities } }));
        text(await client.callTool({ name: 'create_relations', arguments: { relations: g.relations } }));
    } else if (mode === 'read') {
        process.stdout.write(text(await client.callTool({ name: 'read_graph', arguments: {} })));
    } else {
        throw new Error(`unknown mode ${mode}: write or read`);
    }
    await client.close();
}

main().catch((e) => {
    process.stderr.write(`${e.stack || e}\n`);
    process.exit(1);
});
