/**
 * A stand-in for our authorization server's connect pages, exactly as the issue-41 contract fixes
 * them, for the headless driver's tests until the AS serves them (then these tests move to the
 * real AS): `GET <issuer>/connect/<ticket>` (single-use, bound to a `sub`; 404 once unknown)
 * asks for our login (the AS's field names) and refuses another signed-in user with 403; the
 * confirmation is a CSRF-protected form with a submit named `connect`; its post redirects to
 * the provider with PKCE S256 and `state`; `<issuer>/connect/callback` checks `state` and `iss`
 * (RFC 9207), redeems the code as a confidential client and says the account is connected.
 */
import { randomBytes } from 'node:crypto';
import express, { type Request, type Response } from 'express';
import { escapeHtml } from '@mcp-auth-kit/protocol';
import { createPkcePair, startLoopbackServer, type ThirdPartyProvider } from '@mcp-auth-kit/testing';

export interface ConnectStandIn {
  issuer: string;
  /** A connect URL for `sub` (what the token exchange's `connect_uri` would be). */
  connectUrl(sub: string, ttlSeconds?: number): string;
  /** The provider tokens stored per `sub`. */
  connections: Map<string, { access_token: string; refresh_token: string }>;
  close(): Promise<void>;
}

const random = () => randomBytes(18).toString('base64url');
const html = (res: Response, status: number, body: string) =>
  res.status(status).type('html').send(`<!DOCTYPE html><html><head><title>AS</title></head><body><main>${body}</main></body></html>`);

export async function startConnectStandIn(provider: ThirdPartyProvider, users: Record<string, string>): Promise<ConnectStandIn> {
  const server = await startLoopbackServer();
  const issuer = server.origin;
  const client = provider.registerClient({ clientId: 'our-as', name: 'MCP auth kit', redirectUris: [`${issuer}/connect/callback`] });
  const tickets = new Map<string, { sub: string; expiresAt: number }>();
  const sessions = new Map<string, { sub: string; csrf: string }>();
  const pending = new Map<string, { sub: string; verifier: string }>();
  const connections: ConnectStandIn['connections'] = new Map();

  const session = (req: Request) => sessions.get(/(?:^|;\s*)as_session=([^;]+)/.exec(req.headers.cookie ?? '')?.[1] ?? '');
  const loginPage = (res: Response, ticket: string, status: number) =>
    html(
      res,
      status,
      `<form method="post" action="/login?ticket=${escapeHtml(ticket)}"><input type="hidden" name="csrf" value="x">
<input type="text" name="username"><input type="password" name="password">
<button type="submit" name="action" value="login">Sign in</button></form>`,
    );

  const app = express();
  app.use(express.urlencoded({ extended: false }));
  app.get('/connect/callback', async (req, res) => {
    const state = String(req.query.state ?? '');
    const flow = pending.get(state);
    pending.delete(state);
    if (!flow) return void html(res, 400, '<p>Unknown or used state.</p>');
    if (req.query.iss !== provider.issuer) return void html(res, 400, '<p>The provider did not identify itself (RFC 9207).</p>');
    if (typeof req.query.code !== 'string') return void html(res, 400, '<p>Your Drive account is not connected.</p>');
    const answer = await fetch(provider.metadata.token_endpoint as string, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}` },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: req.query.code,
        code_verifier: flow.verifier,
        redirect_uri: `${issuer}/connect/callback`,
      }),
    });
    if (!answer.ok) return void html(res, 400, '<p>Your Drive account is not connected.</p>');
    connections.set(flow.sub, (await answer.json()) as { access_token: string; refresh_token: string });
    html(res, 200, '<h1>Drive connected</h1><p>Your Drive account is connected. You may return to your application.</p>');
  });
  app.get('/connect/:ticket', (req, res) => {
    const ticket = tickets.get(req.params.ticket);
    if (!ticket || ticket.expiresAt <= Date.now()) return void html(res, 404, '<p>This link expired or was already used.</p>');
    const signedIn = session(req);
    if (!signedIn) return void loginPage(res, req.params.ticket, 200);
    if (signedIn.sub !== ticket.sub) return void html(res, 403, '<p>This link was made for another account.</p>');
    html(
      res,
      200,
      `<form method="post" action="/connect/${escapeHtml(req.params.ticket)}"><input type="hidden" name="csrf" value="${escapeHtml(signedIn.csrf)}">
<button type="submit" name="connect" value="drive">Connect Drive</button></form>`,
    );
  });
  app.post('/login', (req, res) => {
    const ticket = String(req.query.ticket ?? '');
    const { username, password } = req.body as Record<string, string>;
    if (!username || users[username] === undefined || users[username] !== password) return void loginPage(res, ticket, 401);
    const id = random();
    sessions.set(id, { sub: username, csrf: random() });
    res.cookie('as_session', id, { httpOnly: true, sameSite: 'lax', path: '/' });
    res.redirect(303, `/connect/${encodeURIComponent(ticket)}`);
  });
  app.post('/connect/:ticket', (req, res) => {
    const ticket = tickets.get(req.params.ticket);
    const signedIn = session(req);
    if (!ticket || !signedIn || signedIn.sub !== ticket.sub || req.body.csrf !== signedIn.csrf) {
      return void html(res, 403, '<p>Refused.</p>');
    }
    tickets.delete(req.params.ticket);
    const state = random();
    const { verifier, challenge } = createPkcePair();
    pending.set(state, { sub: ticket.sub, verifier });
    const url = new URL(provider.metadata.authorization_endpoint as string);
    for (const [k, v] of Object.entries({
      response_type: 'code',
      client_id: client.clientId,
      redirect_uri: `${issuer}/connect/callback`,
      scope: 'files.read',
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }))
      url.searchParams.set(k, v);
    res.redirect(303, url.href);
  });
  server.handle(app);

  return {
    issuer,
    connectUrl(sub, ttlSeconds = 600) {
      const ticket = random();
      tickets.set(ticket, { sub, expiresAt: Date.now() + ttlSeconds * 1000 });
      return `${issuer}/connect/${ticket}`;
    },
    connections,
    close: () => server.close(),
  };
}
