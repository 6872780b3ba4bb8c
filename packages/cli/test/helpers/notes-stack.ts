import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterAll, beforeAll } from 'vitest';
import { startNotesPair, type TestAs, type TestRs } from '../../../client/test/helpers/harness.js';
import { startMcpResourceServer } from '../../../client/test/helpers/mcp-resource-server.js';

export interface NotesStack {
  /** oidc-provider, the AS of `rs` (notes:read, notes:write). */
  as: TestAs;
  /** The MCP server under test; each session is a server of `mcpServer`. */
  rs: TestRs;
  /** A scratch $MCP_AUTH_KIT_HOME. */
  home: string;
}

/**
 * For the enclosing file or describe block: filled before its first test, closed and removed
 * after its last, so the CLI's logins in one block build on each other.
 */
export function notesStack(homePrefix: string, mcpServer: () => McpServer): NotesStack {
  const stack = {} as NotesStack;
  beforeAll(async () => {
    stack.home = mkdtempSync(join(tmpdir(), homePrefix));
    [stack.as, stack.rs] = await startNotesPair((issuerOf) => startMcpResourceServer(issuerOf, mcpServer));
  });
  afterAll(async () => {
    await stack.rs?.close();
    await stack.as?.close();
    if (stack.home) rmSync(stack.home, { recursive: true, force: true });
  });
  return stack;
}
