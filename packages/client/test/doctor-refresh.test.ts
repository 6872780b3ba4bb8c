/**
 * `doctor` with a refresh token (issue 45, fresh-eyes review finding 3): the token is a credential of
 * one authorization server. A hostile MCP server names its own AS in its Protected Resource Metadata
 * (RFC 9728 §3) to collect it; the doctor sends it only to the token endpoint of the issuer the user
 * named, and not at all once discovery failed (MCP Authorization §Token Audience Binding; RFC 9700 §4.14).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { checkDeployment } from '../src/doctor/index.js';
import { close, listen } from './helpers/harness.js';

type Handler = (req: IncomingMessage, res: ServerResponse, base: string) => void;

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map(close));
});

async function serve(handler: Handler): Promise<string> {
  let base = '';
  const server = createServer((req, res) => handler(req, res, base));
  servers.push(server);
  base = await listen(server);
  return base;
}

const json = (res: ServerResponse, body: unknown, status = 200) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

/** An AS that records every request its token endpoint receives. */
async function recordingAs(): Promise<{ issuer: string; tokenRequests: string[] }> {
  const tokenRequests: string[] = [];
  const issuer = await serve((req, res, base) => {
    if (req.url === '/token') {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        tokenRequests.push(body);
        json(res, { error: 'invalid_grant' }, 400);
      });
      return;
    }
    if (req.url?.startsWith('/.well-known/')) {
      return json(res, {
        issuer: base,
        authorization_endpoint: `${base}/auth`,
        token_endpoint: `${base}/token`,
        code_challenge_methods_supported: ['S256'],
        response_types_supported: ['code'],
      });
    }
    res.writeHead(404).end();
  });
  return { issuer, tokenRequests };
}

/** An MCP server whose PRM names `asOf(base)` and claims `resourceOf(base)`. */
function mcpServer(asIssuer: string, resourceOf: (base: string) => string): Promise<string> {
  return serve((req, res, base) => {
    if (req.url?.startsWith('/.well-known/oauth-protected-resource')) {
      return json(res, { resource: resourceOf(base), authorization_servers: [asIssuer], scopes_supported: ['read'] });
    }
    res.writeHead(401, {
      'www-authenticate': `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="read"`,
    });
    res.end();
  });
}

describe('doctor: a refresh token goes only to its own issuer', () => {
  it('attack: a PRM naming another resource and its own AS gets no refresh token (discovery failed)', async () => {
    const hostile = await recordingAs();
    const mine = await recordingAs();
    const mcp = await mcpServer(hostile.issuer, () => `${hostile.issuer}/mcp`);
    const report = await checkDeployment(`${mcp}/mcp`, {
      allowPrivate: true,
      refresh: { refreshToken: 'SECRET-REFRESH', clientId: 'cid', issuer: mine.issuer },
    });
    expect(hostile.tokenRequests).toEqual([]);
    expect(mine.tokenRequests).toEqual([]);
    expect(report.findings.find((f) => f.id === 'refresh-rotation')).toMatchObject({ status: 'skip' });
  });

  it('attack: a correct PRM naming an AS other than the refresh token issuer gets no refresh token', async () => {
    const hostile = await recordingAs();
    const mine = await recordingAs();
    const mcp = await mcpServer(hostile.issuer, (base) => `${base}/mcp`);
    const report = await checkDeployment(`${mcp}/mcp`, {
      allowPrivate: true,
      refresh: { refreshToken: 'SECRET-REFRESH', clientId: 'cid', issuer: mine.issuer },
    });
    expect(hostile.tokenRequests).toEqual([]);
    expect(report.findings.find((f) => f.id === 'refresh-rotation')?.title).toMatch(/names no authorization server/);
  });

  it('the issuer the token came from gets it (the check runs)', async () => {
    const mine = await recordingAs();
    const mcp = await mcpServer(mine.issuer, (base) => `${base}/mcp`);
    await checkDeployment(`${mcp}/mcp`, {
      allowPrivate: true,
      refresh: { refreshToken: 'SECRET-REFRESH', clientId: 'cid', issuer: mine.issuer },
    });
    expect(mine.tokenRequests.join('\n')).toContain('refresh_token=SECRET-REFRESH');
  });
});
