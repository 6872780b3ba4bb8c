import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, type AuthInfo } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callerFrom } from '../src/caller.js';
import { createNotesMcpServer } from '../src/mcp-server.js';
import { NotesStore } from '../src/notes-store.js';

// The MCP layer on its own, mounted WITHOUT the resource-server middleware: proves the SDK-level
// scope checks (defence in depth) and the tools' behaviour. The caller's authInfo comes from a
// test header here, standing in for what the middleware sets.
let server: Server;
let url: string;
const store = new NotesStore();
const handler = createMcpHandler(() => createNotesMcpServer(store), { onerror: () => {} });

beforeAll(async () => {
  const node = toNodeHandler(handler);
  server = createServer((req, res) => {
    const scopes = req.headers['x-test-scopes'];
    if (typeof scopes === 'string') {
      const auth: AuthInfo = {
        token: 'opaque',
        clientId: 'layer-client',
        scopes: scopes.split(' ').filter(Boolean),
        expiresAt: Math.floor(Date.now() / 1000) + 60,
        resource: new URL('http://localhost:3000/mcp'),
        resourceMetadataUrl: 'http://localhost:3000/.well-known/oauth-protected-resource/mcp',
        extra: { sub: String(req.headers['x-test-sub'] ?? 'layer-user') },
      };
      (req as typeof req & { auth?: AuthInfo }).auth = auth;
    }
    void node(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});

afterAll(async () => {
  await handler.close();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function as(scopes: string | undefined, sub = 'layer-user') {
  const headers: Record<string, string> = scopes === undefined ? {} : { 'x-test-scopes': scopes, 'x-test-sub': sub };
  return {
    callTool: async (name: string, args: Record<string, unknown> = {}) => {
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2026-07-28',
          'mcp-method': 'tools/call',
          'mcp-name': name,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: {
            name,
            arguments: args,
            _meta: {
              'io.modelcontextprotocol/protocolVersion': '2026-07-28',
              'io.modelcontextprotocol/clientCapabilities': {},
            },
          },
        }),
      });
      return { status: res.status, headers: res.headers, body: (await res.json().catch(() => undefined)) as any };
    },
  };
}

describe('SDK-level scope checks (defence in depth, no middleware policy)', () => {
  it('MCP Scope Challenge Handling: add_note without notes:write → 403 insufficient_scope from the SDK', async () => {
    const res = await as('notes:read').callTool('add_note', { text: 'x' });
    expect(res.status).toBe(403);
    const challenge = res.headers.get('www-authenticate') ?? '';
    expect(challenge).toMatch(/error="insufficient_scope"/);
    // All scopes of the operation in one challenge, as the middleware does.
    expect(challenge).toMatch(/scope="notes:read notes:write"/);
    expect(challenge).toContain('resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/mcp"');
  });

  it('list_notes without notes:read → 403 insufficient_scope', async () => {
    const res = await as('notes:write').callTool('list_notes');
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toMatch(/scope="notes:read"/);
  });

  it('whoami without notes:read → 403 insufficient_scope', async () => {
    const res = await as('notes:write').callTool('whoami');
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toMatch(/scope="notes:read"/);
  });

  it('without any authInfo the tools refuse to run (tool error, no data)', async () => {
    const res = await as(undefined).callTool('whoami');
    expect(res.status).toBe(200);
    expect(res.body.result.isError).toBe(true);
    expect(res.body.result.structuredContent).toBeUndefined();
  });

  it('with the scopes, the tools run for the authInfo subject', async () => {
    const caller = as('notes:read notes:write', 'layer-sub');
    expect((await caller.callTool('add_note', { text: 'layer note' })).status).toBe(200);
    const listed = await caller.callTool('list_notes');
    expect(listed.body.result.structuredContent.notes.map((n: { text: string }) => n.text)).toEqual(['layer note']);
    const who = await caller.callTool('whoami');
    expect(who.body.result.structuredContent).toMatchObject({ sub: 'layer-sub', client_id: 'layer-client' });
  });

  it('add_note rejects text over the length limit without storing it', async () => {
    const caller = as('notes:read notes:write', 'long-text');
    const res = await caller.callTool('add_note', { text: 'x'.repeat(2001) });
    expect(res.status).toBeLessThan(500);
    expect(res.body.error !== undefined || res.body.result?.isError === true).toBe(true);
    expect(store.list('long-text')).toEqual([]);
  });
});

describe('NotesStore', () => {
  it('keeps notes per subject, in order, with sequential ids', () => {
    const notes = new NotesStore({ now: () => new Date('2026-01-01T00:00:00Z') });
    notes.add('a', 'one');
    notes.add('a', 'two');
    notes.add('b', 'other');
    expect(notes.list('a')).toEqual([
      { id: 'note-1', text: 'one', createdAt: '2026-01-01T00:00:00.000Z' },
      { id: 'note-2', text: 'two', createdAt: '2026-01-01T00:00:00.000Z' },
    ]);
    expect(notes.list('b').map((n) => n.text)).toEqual(['other']);
    expect(notes.list('nobody')).toEqual([]);
  });

  it('drops the oldest notes beyond maxNotesPerSubject', () => {
    const notes = new NotesStore({ maxNotesPerSubject: 2 });
    for (const text of ['1', '2', '3']) notes.add('a', text);
    expect(notes.list('a').map((n) => n.text)).toEqual(['2', '3']);
  });

  it('list returns copies: callers cannot mutate stored notes', () => {
    const notes = new NotesStore();
    notes.add('a', 'kept');
    // a caller that ignores `readonly` (plain JavaScript) still cannot reach the stored notes
    const listed = notes.list('a') as unknown as Array<{ text: string }>;
    listed[0]!.text = 'changed';
    listed.length = 0;
    expect(notes.list('a').map((n) => n.text)).toEqual(['kept']);
  });
});

describe('callerFrom', () => {
  const base: AuthInfo = { token: 't', clientId: 'cid', scopes: ['notes:read'] };

  it('uses sub as the subject', () => {
    expect(callerFrom({ ...base, extra: { sub: 'alice', iss: 'http://as' } })).toMatchObject({
      subject: 'alice',
      clientId: 'cid',
      issuer: 'http://as',
    });
  });

  it('a token without sub gets a client: subject that cannot collide with a user name', () => {
    expect(callerFrom({ ...base, clientId: 'alice' })?.subject).toBe('client:alice');
  });

  it('no authInfo → no caller', () => {
    expect(callerFrom(undefined)).toBeUndefined();
  });
});
