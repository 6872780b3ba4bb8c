// A host using @mcp-auth-kit/client with the MCP SDK v1 client (node client-demo.mjs <mcp-url>):
// prints each authorization URL for the user (the test plays the browser), calls whoami, then
// add_note (a 403 insufficient_scope the library answers by step-up), and prints the results.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpAuthClient, MemoryStore, createAuthFetch } from '@mcp-auth-kit/client';

const mcpUrl = new URL(process.argv[2]);
const auth = new McpAuthClient({
  clientName: 'scratch host',
  store: new MemoryStore(),
  openAuthorizationUrl: async (url) => {
    process.stdout.write(`AUTHORIZE ${url.href}\n`);
  },
});
const client = new Client({ name: 'scratch-host', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(mcpUrl, { fetch: createAuthFetch(auth) }));
const whoami = await client.callTool({ name: 'whoami', arguments: {} });
process.stdout.write(`WHOAMI ${JSON.stringify(whoami.structuredContent ?? whoami.content)}\n`);
const note = await client.callTool({ name: 'add_note', arguments: { text: 'from the scratch project' } });
process.stdout.write(`ADD_NOTE ${JSON.stringify(note.structuredContent ?? note.content)}\n`);
await client.close();
