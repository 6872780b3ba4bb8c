import express from 'express';
import { expect } from 'vitest';
import { createResourceServer, type ResourceServer } from '../../src/index.js';
import { startIssuerWithKey, RESOURCE, type StubIssuer, type SigningKey } from './harness.js';

export interface NotesApp {
  as: StubIssuer;
  key: SigningKey;
  rs: ResourceServer;
  app: express.Express;
  close(): Promise<void>;
}

/**
 * A stub issuer with one ES256 key, and an express app serving the resource's metadata and the MCP
 * endpoint `mount` adds (notes:read by default, the `add_note` tool needs notes:write).
 */
export async function startNotesApp(mount: (app: express.Express, rs: ResourceServer) => void): Promise<NotesApp> {
  const { as, key } = await startIssuerWithKey();
  const rs = createResourceServer({
    resource: RESOURCE,
    authorizationServers: [as.issuer],
    scopesSupported: ['notes:read', 'notes:write'],
    scopePolicy: { default: ['notes:read'], tools: { add_note: ['notes:write'] } },
  });
  const app = express();
  app.use(rs.metadataHandler);
  mount(app, rs);
  return {
    as,
    key,
    rs,
    app,
    async close() {
      await rs.close();
      await as.stop();
    },
  };
}

interface McpTransportLike {
  close(): Promise<void>;
  handleRequest(req: express.Request, res: express.Response, body?: unknown): Promise<void>;
}

interface McpServerLike {
  /** Each SDK's server takes its own transport type: checked by the SDK, not here. */
  connect(transport: never): Promise<void>;
  close(): Promise<void>;
}

/**
 * The handler of a stateless MCP endpoint (SDK v1 or v2), as an existing express MCP server
 * mounts it behind `rs.protect`: a new server and transport per request, closed with the response.
 */
export function statelessMcp(server: () => McpServerLike, transport: () => McpTransportLike) {
  return async (req: express.Request, res: express.Response): Promise<void> => {
    const s = server();
    const t = transport();
    res.on('close', () => void t.close().then(() => s.close()));
    await s.connect(t as never);
    await t.handleRequest(req, res, req.body);
  };
}

/**
 * The `authInfo` an SDK handed the `whoami` tool (echoed as JSON in its first content item),
 * checked to be the one `protect` built for a `notes:read` token of `user-1` at `client-1`;
 * `more`: the members a given SDK adds.
 */
export function expectWhoamiAuthInfo(
  res: { body: { result: { content: Array<{ text: string }> } } },
  expected: { token: string; issuer: string; jti: string; more?: Record<string, unknown> },
): Record<string, unknown> {
  const authInfo = JSON.parse(res.body.result.content[0]!.text) as Record<string, unknown>;
  expect(authInfo).toMatchObject({
    token: expected.token,
    clientId: 'client-1',
    scopes: ['notes:read'],
    resource: RESOURCE,
    ...expected.more,
    extra: { sub: 'user-1', iss: expected.issuer, jti: expected.jti },
  });
  return authInfo;
}
