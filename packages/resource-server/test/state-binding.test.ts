import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Request, Response } from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { McpServer as McpServerV1 } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport as TransportV1 } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createStateBinding, type StateBinding } from '../src/core.js';
import type { McpAuthInfo } from '../src/index.js';
import { rpc, signToken } from './helpers/harness.js';
import { startNotesApp, type NotesApp } from './helpers/notes-app.js';

/**
 * createStateBinding (MCP security best practices: 2026-07-28 "State Handle Hijacking", 2025-11-25
 * "Session Hijacking"): a handle or session id minted for one user is refused with another user's
 * token, on the 2026-07-28 wire (a state handle passed as a tool argument, SDK v2 server and
 * client over loopback HTTP) and on the 2025-11-25 wire (`Mcp-Session-Id` of a stateful SDK v1
 * server behind `rs.protect`).
 */
const SECRET = 'state-binding-secret-0123456789-abcdef';
const auth = (sub: string, clientId = 'client-1', iss = 'https://as.example'): McpAuthInfo => ({
  token: 't',
  clientId,
  scopes: ['notes:read'],
  extra: { sub, iss },
});

describe('createStateBinding(): mint / owns', () => {
  let clock = 1_800_000_000;
  const binding = createStateBinding({ secret: SECRET, ttlSeconds: 60, now: () => clock });

  it('a handle is owned by the caller it was minted for, and by no one else (sub, client, issuer)', () => {
    const handle = binding.mint(auth('alice'));
    expect(handle).toMatch(/^v1\.[A-Za-z0-9_-]{22}\.[0-9a-z]+\.\.[A-Za-z0-9_-]{43}$/);
    expect(binding.owns(auth('alice'), handle)).toBe(true);
    expect(binding.owns(auth('bob'), handle)).toBe(false);
    expect(binding.owns(auth('alice', 'client-2'), handle)).toBe(false);
    expect(binding.owns(auth('alice', 'client-1', 'https://other-as.example'), handle)).toBe(false);
    expect(binding.owns(undefined, handle)).toBe(false);
    expect(binding.mint(auth('alice'))).not.toBe(handle);
  });

  it('refuses tampered, guessed, expired and foreign handles; a binding with another secret owns none', () => {
    const handle = binding.mint(auth('alice'));
    const [v, nonce, expiry, data, tag] = handle.split('.') as [string, string, string, string, string];
    expect(binding.owns(auth('alice'), `${v}.${nonce}.${(Number.parseInt(expiry, 36) + 3600).toString(36)}.${data}.${tag}`)).toBe(false);
    expect(binding.owns(auth('alice'), `${v}.${'A'.repeat(22)}.${expiry}.${data}.${tag}`)).toBe(false);
    // data is covered by the MAC: another position cannot be written into someone's handle
    const withData = binding.mint(auth('alice'), '20');
    expect(binding.open(auth('alice'), withData)).toBe('20');
    expect(binding.open(auth('bob'), withData)).toBeUndefined();
    const [, n2, e2, , t2] = withData.split('.') as [string, string, string, string, string];
    expect(binding.open(auth('alice'), `v1.${n2}.${e2}.${Buffer.from('0').toString('base64url')}.${t2}`)).toBeUndefined();
    expect(() => binding.mint(auth('alice'), 'x'.repeat(257))).toThrow(TypeError);
    for (const junk of ['', 'cart-1', '1', null, 42, `${handle} `, handle.toUpperCase()])
      expect(binding.owns(auth('alice'), junk)).toBe(false);
    expect(createStateBinding({ secret: `${SECRET}-other` }).owns(auth('alice'), handle)).toBe(false);
    clock += 61;
    expect(binding.owns(auth('alice'), handle)).toBe(false);
  });

  it('attack: a handle has one spelling (the MAC re-spelt in base64url padding bits is refused)', () => {
    const handle = binding.mint(auth('alice'), '7');
    const tag = handle.slice(handle.lastIndexOf('.') + 1);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    // 43 characters carry 258 bits for a 256-bit MAC: the last character's 2 low bits are unused
    const last = alphabet.indexOf(tag.at(-1)!);
    for (let low = 1; low < 4; low++) {
      const respelt = `${handle.slice(0, -1)}${alphabet[(last & ~3) | ((last + low) & 3)]}`;
      expect(Buffer.from(respelt.slice(respelt.lastIndexOf('.') + 1), 'base64url')).toEqual(Buffer.from(tag, 'base64url'));
      expect(binding.open(auth('alice'), respelt), respelt).toBeUndefined();
    }
    expect(binding.open(auth('alice'), handle)).toBe('7');
  });

  it('needs a verified caller and a real secret', () => {
    expect(() => binding.mint(undefined)).toThrow(TypeError);
    expect(() => binding.mint({ token: 't', clientId: 'c', scopes: [] })).toThrow(TypeError);
    expect(() => createStateBinding({ secret: 'short' })).toThrow(/32 bytes/);
    expect(() => createStateBinding({ secret: SECRET, ttlSeconds: 0 })).toThrow(TypeError);
  });
});

describe('2026-07-28 wire: a state handle (a tool argument) presented with another user’s token is refused', () => {
  let notes: NotesApp;
  let http: Server;
  let url: string;
  const binding: StateBinding = createStateBinding({ secret: SECRET });
  const carts = new Map<string, string[]>();

  beforeAll(async () => {
    const handler = createMcpHandler(
      () => {
        const server = new McpServer({ name: 'carts', version: '1.0.0' });
        server.registerTool('open_cart', { description: 'a new cart' }, (ctx) => {
          const handle = binding.mint(ctx.http?.authInfo as McpAuthInfo);
          carts.set(handle, []);
          return { content: [{ type: 'text', text: handle }] };
        });
        server.registerTool('add_to_cart', { inputSchema: z.object({ cart: z.string(), item: z.string() }) }, ({ cart, item }, ctx) => {
          // the handle is no credential: it must be the caller's own
          if (!binding.owns(ctx.http?.authInfo as McpAuthInfo, cart))
            return { isError: true, content: [{ type: 'text', text: 'unknown cart' }] };
          carts.get(cart)?.push(item);
          return { content: [{ type: 'text', text: JSON.stringify(carts.get(cart)) }] };
        });
        return server;
      },
      { legacy: 'stateless' },
    );
    const node = toNodeHandler(handler);
    notes = await startNotesApp((app, rs) => app.all('/mcp', rs.protect, (req: Request, res: Response) => void node(req, res, req.body)));
    http = notes.app.listen(0, '127.0.0.1');
    await new Promise((r) => http.once('listening', r));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  });
  afterAll(async () => {
    http?.closeAllConnections();
    http?.close();
    await notes?.close();
  });

  const connect = async (sub: string) => {
    const token = await signToken({ key: notes.key, issuer: notes.as.issuer, claims: { sub } });
    const client = new Client({ name: 'cart-user', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } } as never);
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    );
    return client;
  };
  const text = (result: unknown) => (result as { content: Array<{ text: string }> }).content[0]?.text ?? '';

  it('alice opens a cart and adds to it; bob, holding her handle, cannot (and her cart is untouched)', async () => {
    const alice = await connect('alice');
    const cart = text(await alice.callTool({ name: 'open_cart', arguments: {} }));
    expect(text(await alice.callTool({ name: 'add_to_cart', arguments: { cart, item: 'tea' } }))).toBe('["tea"]');
    const bob = await connect('bob');
    const hijack = await bob.callTool({ name: 'add_to_cart', arguments: { cart, item: 'bomb' } });
    expect(hijack.isError).toBe(true);
    expect(text(hijack)).toBe('unknown cart');
    expect(carts.get(cart)).toEqual(['tea']);
    // a guessed handle of the right shape is no better
    const guessed = await bob.callTool({
      name: 'add_to_cart',
      arguments: { cart: cart.replace(/\.[^.]+$/, `.${'A'.repeat(43)}`), item: 'x' },
    });
    expect(guessed.isError).toBe(true);
    await alice.close();
    await bob.close();
  });
});

describe('2025-11-25 wire: an Mcp-Session-Id presented with another user’s token is refused (404, as unknown)', () => {
  let notes: NotesApp;
  const binding = createStateBinding({ secret: SECRET });
  const transports = new Map<string, TransportV1>();

  beforeAll(async () => {
    notes = await startNotesApp((app, rs) =>
      app.post('/mcp', rs.protect, binding.sessions, async (req: Request, res: Response) => {
        const id = req.headers['mcp-session-id'];
        let transport = typeof id === 'string' ? transports.get(id) : undefined;
        if (!transport) {
          transport = new TransportV1({
            sessionIdGenerator: binding.sessionIdGenerator,
            enableJsonResponse: true,
            onsessioninitialized: (sid) => void transports.set(sid, transport!),
          });
          const server = new McpServerV1({ name: 'stateful', version: '1.0.0' });
          server.registerTool('whoami', { description: 'who' }, (extra) => ({
            content: [{ type: 'text', text: String(extra.authInfo?.extra?.sub) }],
          }));
          await server.connect(transport);
        }
        await transport.handleRequest(req, res, req.body);
      }),
    );
  });
  afterAll(async () => notes?.close());

  const post = async (sub: string, body: unknown, session?: string) => {
    const token = await signToken({ key: notes.key, issuer: notes.as.issuer, claims: { sub } });
    const r = request(notes.app)
      .post('/mcp')
      .set('Authorization', `Bearer ${token}`)
      .set('Accept', 'application/json, text/event-stream')
      .set('MCP-Protocol-Version', '2025-11-25');
    if (session) r.set('Mcp-Session-Id', session);
    return r.send(body as object);
  };

  it('the session id the server assigns is bound to alice: hers works, bob with it gets 404, guessed ids get 404', async () => {
    const init = await post(
      'alice',
      rpc('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } }),
    );
    expect(init.status, init.text).toBe(200);
    const session = String(init.headers['mcp-session-id']);
    expect(binding.owns({ token: 't', clientId: 'client-1', scopes: [], extra: { sub: 'alice', iss: notes.as.issuer } }, session)).toBe(
      true,
    );
    expect((await post('alice', { jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status).toBe(202);
    const mine = await post('alice', rpc('tools/call', { name: 'whoami', arguments: {} }, 2), session);
    expect(mine.status, mine.text).toBe(200);
    expect(JSON.stringify(mine.body)).toContain('alice');

    const hijack = await post('bob', rpc('tools/call', { name: 'whoami', arguments: {} }, 3), session);
    expect(hijack.status).toBe(404);
    expect(hijack.body).toMatchObject({ error: { code: -32001, message: 'Session not found' } });
    expect(JSON.stringify(hijack.body)).not.toContain('alice');
    expect((await post('bob', rpc('tools/list', {}, 4), 'session-1')).status).toBe(404);
  });
});
