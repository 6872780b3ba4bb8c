/**
 * The CIMD approval gate (issue 44; MCP client registration §Client ID Metadata Documents: the
 * AS decides which client_id URLs it trusts), end to end with a loopback HTTPS document host: a
 * client from a host the stored policy does not trust waits on a clear page (202, not an error),
 * an operator's approval lets its user finish the authorization, a denial or a denied host is
 * refused, and a disabled client is refused at every endpoint.
 */
import { describe, expect, it } from 'vitest';
import { HeadlessBrowser, isUrl, pkcePair } from '@mcp-auth-kit/test-utils';
import { type Actor, createAdminService, type AdminService } from '../src/index.js';
import { openStore, type Store } from '../src/storage/index.js';
import { REDIRECT, registerClient, startAs, type RunningAs } from './helpers/as.js';
import { openForDescribe } from './helpers/for-describe.js';
import { authorizeAuto, codeAuthorizeUrl, exchangeCode, refreshWith } from './helpers/flow.js';
import { cimdDocument, startHttpsHost, type HttpsHost } from './helpers/https-host.js';

const OPERATOR: Actor = { sub: 'op-1', via: 'console' };
const doc = (url: string) => cimdDocument(url, { client_name: 'CIMD <script>alert(1)</script> Client' });

describe('CIMD approval gate (stored trust policy)', () => {
  let host: HttpsHost;
  let store: Store;
  let t: RunningAs;
  let service: AdminService;

  // Closed in reverse order (vitest runs after-hooks as a stack): the AS, then its store, then the host.
  const documents = {
    ...Object.fromEntries(
      ['waiting', 'denied', 'allowed', 'free'].map((name) => [`/${name}.json`, (o: string) => doc(`${o}/${name}.json`)]),
    ),
    '/mismatch.json': (o: string) => doc(`${o}/other.json`),
  };
  openForDescribe(
    () => startHttpsHost(documents),
    (opened) => (host = opened),
  );
  openForDescribe(
    () => openStore({ kind: 'memory' }, { cleanupIntervalSeconds: 0 }),
    (opened) => {
      store = opened;
      service = createAdminService({ store });
    },
  );
  openForDescribe(
    () => startAs({ devAutoLogin: 'alice', storage: store, cimd: { allowPrivateNetwork: true, extraCaCertificates: host.caPem } }),
    (opened) => (t = opened),
  );

  /** Opens /auth for the client in a fresh browser; the first page it stops at, or the redirect. */
  async function open(clientId: string) {
    const { challenge } = pkcePair();
    return new HeadlessBrowser().follow(codeAuthorizeUrl(t.url, challenge, { client_id: clientId }), REDIRECT);
  }

  it('approval required: a new client from an untrusted host waits on a clear page (202, escaped name, page headers), queued as pending', async () => {
    await service.setCimdPolicy(OPERATOR, { allowedHosts: [], deniedHosts: [], approvalRequired: true });
    const clientId = `${host.origin}/waiting.json`;
    const res = await fetch(codeAuthorizeUrl(t.url, pkcePair().challenge, { client_id: clientId }), { redirect: 'manual' });
    const body = await res.text();
    expect(res.status).toBe(202);
    expect(body).toContain('Waiting for approval');
    expect(body).not.toContain('<script>alert(1)</script>');
    expect(body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(res.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(await store.cimdTrust.get(clientId)).toMatchObject({ status: 'pending', host: new URL(host.origin).hostname });
    // the browser flow stops there: no code for a waiting client
    const page = await open(clientId);
    expect(isUrl(page)).toBe(false);
    expect((await service.searchAudit({ clientId, event: 'cimd.client_waiting' })).length).toBe(1);
  });

  it('an operator approves: the same user then completes the authorization and gets tokens', async () => {
    const clientId = `${host.origin}/waiting.json`;
    await service.decideCimdClient(OPERATOR, clientId, 'approved');
    const flow = await authorizeAuto(t.url, clientId);
    const tokens = await exchangeCode(t.url, clientId, flow);
    expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
    expect(tokens.body.access_token).toBeTruthy();
  });

  it('an operator denies an approved client: its grants are revoked, its refresh token refused, a new authorization refused (no waiting page)', async () => {
    const clientId = `${host.origin}/waiting.json`;
    const flow = await authorizeAuto(t.url, clientId);
    const tokens = await exchangeCode(t.url, clientId, flow);
    expect(tokens.status).toBe(200);
    await service.decideCimdClient(OPERATOR, clientId, 'denied');
    const refreshed = await refreshWith(t.url, clientId, tokens.body.refresh_token);
    expect(refreshed.status).toBeGreaterThanOrEqual(400);
    const page = await open(clientId);
    expect(isUrl(page)).toBe(false);
    if (!isUrl(page)) expect(page.body).not.toContain('Waiting for approval');
  });

  it('a host in the stored denied hosts is refused before its document is fetched', async () => {
    const hostname = new URL(host.origin).hostname;
    await service.setCimdPolicy(OPERATOR, { allowedHosts: [], deniedHosts: [hostname], approvalRequired: true });
    const before = host.hits.filter((h) => h === '/denied.json').length;
    const page = await open(`${host.origin}/denied.json`);
    expect(isUrl(page)).toBe(false);
    if (!isUrl(page)) expect(page.body).not.toContain('Waiting for approval');
    expect(host.hits.filter((h) => h === '/denied.json').length).toBe(before);
  });

  it('a host in the stored allowed hosts needs no approval; with approval off every other host is admitted (and listed)', async () => {
    const hostname = new URL(host.origin).hostname;
    await service.setCimdPolicy(OPERATOR, { allowedHosts: [hostname], deniedHosts: [], approvalRequired: true });
    expect(isUrl((await authorizeAuto(t.url, `${host.origin}/allowed.json`)).callback)).toBe(true);
    await service.setCimdPolicy(OPERATOR, { allowedHosts: [], deniedHosts: [], approvalRequired: false });
    expect(isUrl((await authorizeAuto(t.url, `${host.origin}/free.json`)).callback)).toBe(true);
    const listed = (await service.listClients()).filter((c) => c.origin === 'cimd').map((c) => c.clientId);
    expect(listed).toContain(`${host.origin}/free.json`);
  });

  it('an invalid document never enters the approval queue and gets no waiting page', async () => {
    await service.setCimdPolicy(OPERATOR, { allowedHosts: [], deniedHosts: [], approvalRequired: true });
    const clientId = `${host.origin}/mismatch.json`;
    const page = await open(clientId);
    expect(isUrl(page)).toBe(false);
    if (!isUrl(page)) expect(page.body).not.toContain('Waiting for approval');
    expect(await store.cimdTrust.get(clientId)).toBeUndefined();
  });

  it('a disabled client is refused at the authorization and token endpoints; enabled again it works', async () => {
    await service.setCimdPolicy(OPERATOR, { allowedHosts: [], deniedHosts: [], approvalRequired: false });
    const clientId = (await registerClient(t.url)).body.client_id as string;
    const flow = await authorizeAuto(t.url, clientId);
    const tokens = await exchangeCode(t.url, clientId, flow);
    expect(tokens.status).toBe(200);
    await service.setClientDisabled(OPERATOR, clientId, true);
    // disabling revoked the client's grants: its refresh token is dead (the gate needs no second
    // look at the disabled mark for a grant's own code or refresh token: client-gate.ts)
    expect((await refreshWith(t.url, clientId, tokens.body.refresh_token)).body.error).toBe('invalid_grant');
    expect(isUrl(await open(clientId))).toBe(false);
    await service.setClientDisabled(OPERATOR, clientId, false);
    expect(isUrl((await authorizeAuto(t.url, clientId)).callback)).toBe(true);
  });
});
