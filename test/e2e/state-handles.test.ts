import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTool } from '@mcp-auth-kit/testing';
import { startDemoStack, type DemoStack } from '../helpers/stack.js';

/**
 * The demo's `list_notes` cursor is a state handle bound to the caller (resource-server
 * `createStateBinding`; MCP 2026-07-28 security best practices, "State Handle Hijacking": servers
 * MUST NOT treat possession of a handle as authentication and SHOULD bind it to the user of the
 * verified token). Alice's cursor, presented with Bob's token, is refused on both wires.
 */
const SECRET = 'state-handle-machine-secret-0123456789';
const machine = (client_id: string) => ({
  client_id,
  client_secret: SECRET,
  grant_types: ['client_credentials'],
  token_endpoint_auth_method: 'client_secret_basic',
  response_types: [],
  redirect_uris: [],
  scope: 'notes:read notes:write',
});

describe('e2e: the demo binds its list_notes cursors (state handles) to the caller', () => {
  let stack: DemoStack;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    stack = await startDemoStack({ asConfig: () => ({ clients: [machine('alice-bot'), machine('bob-bot')] }) });
    for (const id of ['alice-bot', 'bob-bot']) {
      const res = await fetch(`${stack.issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${id}:${SECRET}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'notes:read notes:write', resource: stack.mcpUrl }),
      });
      tokens[id] = String(((await res.json()) as { access_token: string }).access_token);
    }
    for (let i = 0; i < 51; i++) {
      const added = await callTool(stack.mcpUrl, { token: tokens['alice-bot']!, name: 'add_note', arguments: { text: `note ${i}` } });
      expect(added.status).toBe(200);
    }
  });
  afterAll(async () => stack?.close());

  it.each(['2026-07-28', '2025-11-25'])(
    '%s: alice pages with her cursor; bob with her cursor gets an error and none of her notes',
    async (protocolVersion) => {
      const list = (who: string, cursor?: string) =>
        callTool(stack.mcpUrl, { token: tokens[who]!, protocolVersion, name: 'list_notes', arguments: cursor ? { cursor } : {} });
      const first = await list('alice-bot');
      expect(first.status, first.text).toBe(200);
      const page = first.body.result.structuredContent as { notes: unknown[]; next?: string };
      expect(page.notes).toHaveLength(50);
      expect(page.next).toBeTypeOf('string');

      const second = await list('alice-bot', page.next);
      expect(second.body.result.structuredContent.notes.map((n: { text: string }) => n.text)).toEqual(['note 50']);
      expect(second.body.result.structuredContent.next).toBeUndefined();

      const hijack = await list('bob-bot', page.next);
      expect(hijack.status).toBe(200);
      expect(hijack.body.result.isError).toBe(true);
      expect(hijack.text).not.toContain('note 50');
      // an altered cursor is no cursor either
      const altered = await list(
        'alice-bot',
        page.next!.replace(/\.([A-Za-z0-9_-]*)\.([^.]+)$/, `.${Buffer.from('0').toString('base64url')}.$2`),
      );
      expect(altered.body.result.isError).toBe(true);
    },
  );
});
