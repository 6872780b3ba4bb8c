/**
 * Authorization servers on loopback for the storage tests: an AS whose process-level state can
 * be thrown away and rebuilt from its store ("restart") while keeping its port (hence issuer).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import { createAuthorizationServer, silentLogger, type AuthorizationServer } from '../../src/index.js';
import type { StorageConfig } from '../../src/storage/index.js';
import { registerClient, RESOURCE } from '../helpers/as.js';
import { afterAll, beforeAll, expect } from 'vitest';
import { dropSchema, TEST_DATABASE_URL } from './pg-helpers.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export interface Instance {
  /** Base URL this instance listens on. */
  url: string;
  as(): AuthorizationServer;
  /** Closes the AS (and its store) and builds a new one from the same storage. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export async function listenLoopback(): Promise<{ server: Server; url: string; setHandler(h: Handler): void }> {
  let handler: Handler = (_req, res) => {
    res.statusCode = 503;
    res.end();
  };
  const server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}`, setHandler: (h) => (handler = h) };
}

/** A loopback URL nothing listens on: the public issuer of instances behind an imaginary load balancer. */
export async function vacantLoopbackUrl(): Promise<string> {
  const lb = await listenLoopback();
  await new Promise<void>((resolve) => lb.server.close(() => resolve()));
  return lb.url;
}

/** Two instances on one PostgreSQL schema and one issuer; B starts while A is serving (a rolling deploy). */
export async function startPair(schema: string): Promise<{ a: Instance; b: Instance; issuer: string }> {
  const issuer = await vacantLoopbackUrl();
  const storage = { kind: 'postgres', url: TEST_DATABASE_URL, schema } as const;
  const a = await startInstance(storage, issuer);
  const b = await startInstance(storage, issuer);
  return { a, b, issuer };
}

/** For the enclosing describe: `startPair(schema)` before its tests, both closed and the schema dropped after them. */
export function pairForDescribe(schema: string, use: (pair: { a: Instance; b: Instance; issuer: string }) => void | Promise<void>): void {
  let pair: { a: Instance; b: Instance } | undefined;
  beforeAll(async () => {
    const started = await startPair(schema);
    pair = started;
    await use(started);
  });
  afterAll(async () => {
    await Promise.all([pair?.a.close(), pair?.b.close()]);
    await dropSchema(schema);
  });
}

/** `pairForDescribe` with one public client registered on A (the instances share it). */
export function pairWithClientForDescribe(
  schema: string,
  use: (pair: { a: Instance; b: Instance; issuer: string; clientId: string }) => unknown,
): void {
  pairForDescribe(schema, async (pair) => {
    const reg = await registerClient(pair.a.url);
    expect(reg.status).toBe(201);
    await use({ ...pair, clientId: reg.body.client_id as string });
  });
}

/** One AS instance on its own port; `issuer` defaults to its own URL (several instances share one). */
export async function startInstance(storage: StorageConfig, issuer?: string): Promise<Instance> {
  const http = await listenLoopback();
  const build = () =>
    createAuthorizationServer({
      issuer: issuer ?? http.url,
      resources: [{ resource: RESOURCE, scopes: { 'notes:read': 'Read your notes', 'notes:write': 'Change your notes' } }],
      storage,
      logger: silentLogger,
      devAutoLogin: 'alice',
      users: [{ username: 'alice', password: 'alice-password' }],
    });
  let as = await build();
  http.setHandler(as.app as unknown as Handler);
  return {
    url: http.url,
    as: () => as,
    async restart() {
      await as.close();
      as = await build();
      http.setHandler(as.app as unknown as Handler);
    },
    async close() {
      http.server.closeAllConnections();
      await new Promise<void>((resolve) => http.server.close(() => resolve()));
      await as.close();
    },
  };
}

export async function getJwks(base: string): Promise<JSONWebKeySet> {
  const meta = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as { jwks_uri: string };
  // Fetch from this instance even if the issuer names another one.
  const path = new URL(meta.jwks_uri).pathname;
  return (await (await fetch(`${base}${path}`)).json()) as JSONWebKeySet;
}

export async function verifyAccessToken(token: string, jwks: JSONWebKeySet, issuer: string) {
  const { payload } = await jwtVerify(token, createLocalJWKSet(jwks), { issuer, audience: RESOURCE, typ: 'at+jwt' });
  return payload;
}
