import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSpecialUseAddress as isPrivateAddressLiteral } from '@mcp-auth-kit/protocol';
import { adjustDocument, cacheSeconds, cimdRefusal } from '../src/clients/cimd.js';
import { hostMatches } from '../src/http/urls.js';
import { cimdHostOf, policyVerdict } from '../src/clients/cimd-trust-gate.js';
import { openStore } from '../src/storage/index.js';
import { decodeJwt, REDIRECT, RESOURCE, startAs, tokenRequest, type RunningAs } from './helpers/as.js';
import { authorizeAuto, exchangeCode, codeAuthorizeUrl } from './helpers/flow.js';
import { cimdDocument, startHttpsHost, type HttpsHost } from './helpers/https-host.js';
import { HeadlessBrowser, isUrl, pkcePair, expectOAuthError } from '@mcp-auth-kit/test-utils';
import { startAsForDescribe } from './helpers/for-describe.js';

describe('CIMD trust policy (pure functions)', () => {
  it('MCP client-registration §CIMD: the client_id must be an https URL with a path', () => {
    expect(cimdRefusal('http://app.example/client.json', {})).toMatch(/https/);
    expect(cimdRefusal('https://app.example/', {})).toMatch(/path/);
    expect(cimdRefusal('https://user:pw@app.example/c.json', {})).toMatch(/credentials/);
    expect(cimdRefusal('https://app.example/client.json', {})).toBeUndefined();
  });

  it('MCP security §CIMD SSRF: loopback and private addresses are refused unless the dev switch is on', () => {
    for (const id of [
      'https://127.0.0.1/c.json',
      'https://localhost/c.json',
      'https://10.1.2.3/c.json',
      'https://192.168.1.1/c.json',
      'https://[::1]/c.json',
      'https://169.254.169.254/c.json',
      'https://[fd00::1]/c.json',
    ]) {
      expect(cimdRefusal(id, {}), id).toBeTruthy();
    }
    expect(cimdRefusal('https://127.0.0.1/c.json', { allowPrivateNetwork: true })).toBeUndefined();
    expect(isPrivateAddressLiteral('8.8.8.8')).toBe(false);
    expect(isPrivateAddressLiteral('172.20.0.1')).toBe(true);
  });

  it.each([
    // IPv4-mapped IPv6 is judged by its IPv4 part (MCP security best practices §SSRF: "IPv4-mapped IPv6" tricks)
    ['::ffff:169.254.1.1', 'IPv4-mapped link-local'],
    ['::ffff:100.64.0.1', 'IPv4-mapped CGNAT (RFC 6598)'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['[::ffff:a9fe:101]', 'IPv4-mapped link-local, hex form in brackets'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['100.64.0.1', 'CGNAT (RFC 6598)'],
    ['192.0.2.1', 'TEST-NET-1 (RFC 5737)'],
    ['198.51.100.1', 'TEST-NET-2 (RFC 5737)'],
    ['203.0.113.1', 'TEST-NET-3 (RFC 5737)'],
    ['2001:db8::1', 'IPv6 documentation (RFC 3849)'],
    ['fc00::1', 'IPv6 unique local (RFC 4193, fc00::/7)'],
    ['fe80::1', 'IPv6 link-local (fe80::/10)'],
    ['0.0.0.0', 'IPv4 unspecified'],
    ['::', 'IPv6 unspecified'],
    ['255.255.255.255', 'IPv4 limited broadcast'],
    ['224.0.0.1', 'IPv4 multicast'],
    ['ff02::1', 'IPv6 multicast'],
    ['::a00:1', 'deprecated IPv4-compatible ::/96'],
  ])('MCP security best practices §SSRF / RFC 6890: %s (%s) is a special-use address literal', (address) => {
    expect(isPrivateAddressLiteral(address)).toBe(true);
  });

  it.each([
    ['8.8.8.8'],
    ['1.1.1.1'],
    ['93.184.215.14'],
    ['100.63.255.255'], // just below CGNAT 100.64.0.0/10
    ['100.128.0.1'], // just above CGNAT
    ['172.15.255.255'], // just below 172.16.0.0/12
    ['172.32.0.1'], // just above 172.16.0.0/12
    ['::ffff:8.8.8.8'], // IPv4-mapped public address
    ['2606:4700:4700::1111'],
    ['[2001:4860:4860::8888]'],
  ])('MCP security best practices §SSRF: public unicast %s is not refused as special-use', (address) => {
    expect(isPrivateAddressLiteral(address)).toBe(false);
  });

  it('MCP security best practices §SSRF: host names are not address literals (they are checked after resolution)', () => {
    expect(isPrivateAddressLiteral('app.example')).toBe(false);
    expect(isPrivateAddressLiteral('localhost')).toBe(false);
  });

  it('MCP security best practices §SSRF: encoded loopback / mapped forms in a client_id URL are refused (URL parsing normalises them first)', () => {
    for (const id of [
      'https://0x7f.1/c.json',
      'https://2130706433/c.json',
      'https://[::ffff:127.0.0.1]/c.json',
      'https://[::ffff:169.254.169.254]/c.json',
      'https://100.64.0.1/c.json',
      'https://[fe80::1]/c.json',
    ]) {
      expect(cimdRefusal(id, {}), id).toMatch(/loopback or private/);
    }
    expect(cimdRefusal('https://[2606:4700:4700::1111]/c.json', {})).toBeUndefined();
  });

  it('MCP security §CIMD trust policy: denied hosts win, allowed hosts restrict', () => {
    const policy = { allowedHosts: ['*.trusted.example', 'app.example'], deniedHosts: ['bad.trusted.example'] };
    expect(cimdRefusal('https://app.example/c.json', policy)).toBeUndefined();
    expect(cimdRefusal('https://x.trusted.example/c.json', policy)).toBeUndefined();
    expect(cimdRefusal('https://trusted.example/c.json', policy)).toMatch(/not in the allowed/);
    expect(cimdRefusal('https://bad.trusted.example/c.json', policy)).toMatch(/denied/);
    expect(cimdRefusal('https://other.example/c.json', policy)).toMatch(/not in the allowed/);
  });

  it.each(['https://bad.trusted.example./c.json', 'https://BAD.trusted.example./c.json', 'https://app.example./c.json'])(
    'attack: a trailing dot (the same host to DNS and TLS) neither escapes a denied host nor makes a second client_id: %s',
    (id) => {
      expect(cimdRefusal(id, { deniedHosts: ['bad.trusted.example'] })).toMatch(/dot/);
    },
  );

  it.each([
    ['bad.example', 'bad.example.', true],
    ['bad.example.', 'bad.example', true],
    ['*.bad.example', 'a.bad.example.', true],
    ['*.bad.example', 'bad.example.', false],
    ['bad.example', 'notbad.example.', false],
  ])('hostMatches(%s, %s) is %s: the root dot is ignored on both sides', (pattern, host, expected) => {
    expect(hostMatches(pattern, host)).toBe(expected);
  });

  it('attack: the stored trust policy (console) denies a host however its name ends', () => {
    const policy = { allowedHosts: [], deniedHosts: ['evil.example', '*.evil.example'], approvalRequired: false };
    for (const id of ['https://evil.example./c.json', 'https://a.evil.example./c.json', 'https://EVIL.example./c.json']) {
      expect(policyVerdict(policy, cimdHostOf(id)!, undefined), id).toBe('denied');
    }
  });

  it('oidc-provider defaults application_type to web, and only native clients get any-port loopback: documents with only loopback/private-use redirects and no application_type become native', () => {
    expect(adjustDocument({ redirect_uris: ['http://localhost/cb', 'com.example.app:/cb'] }).application_type).toBe('native');
    // RFC 8252 §7.1: a scheme without a dot is no private-use scheme, so it does not make the client native
    expect(adjustDocument({ redirect_uris: ['http://localhost/cb', 'myapp:/cb'] }).application_type).toBeUndefined();
    expect(adjustDocument({ redirect_uris: ['https://app.example/cb'] }).application_type).toBeUndefined();
    expect(adjustDocument({ redirect_uris: ['http://localhost/cb'], application_type: 'web' }).application_type).toBe('web');
  });
});

describe('CIMD end to end (HTTPS document host on loopback, dev private-network switch)', () => {
  let host: HttpsHost;
  let t: RunningAs;
  let manual: RunningAs;
  beforeAll(async () => {
    host = await startHttpsHost();
    host.documents.set('/good.json', (o) => cimdDocument(`${o}/good.json`));
    host.documents.set('/no-name.json', (o) => cimdDocument(`${o}/no-name.json`, { client_name: undefined }));
    host.documents.set('/no-redirects.json', (o) => cimdDocument(`${o}/no-redirects.json`, { redirect_uris: undefined }));
    host.documents.set('/mismatch.json', (o) => cimdDocument(`${o}/other.json`));
    host.documents.set('/secret.json', (o) => cimdDocument(`${o}/secret.json`, { token_endpoint_auth_method: 'client_secret_basic' }));
    host.documents.set('/web.json', (o) => cimdDocument(`${o}/web.json`, { redirect_uris: ['https://app.example/cb'] }));
    const cimd = { allowPrivateNetwork: true, extraCaCertificates: host.caPem };
    t = await startAs({ devAutoLogin: 'alice', cimd });
    manual = await startAs({ cimd });
  });
  afterAll(async () => {
    await t?.close();
    await manual?.close();
    await host?.close();
  });

  async function errorPageFor(clientId: string, redirect = REDIRECT) {
    const { challenge } = pkcePair();
    const result = await new HeadlessBrowser().follow(
      codeAuthorizeUrl(t.url, challenge, { client_id: clientId, redirect_uri: redirect }),
      redirect,
    );
    if (isUrl(result)) throw new Error(`unexpected redirect to ${result.href}`);
    return result;
  }

  it('MCP client-registration §CIMD: a URL client_id is fetched and completes the flow (portless loopback → any port)', async () => {
    const clientId = `${host.origin}/good.json`;
    const flow = await authorizeAuto(t.url, clientId);
    expect(flow.callback.searchParams.get('error')).toBeNull();
    const res = await exchangeCode(t.url, clientId, flow);
    expect(res.status).toBe(200);
    const { payload } = decodeJwt(res.body.access_token);
    expect(payload.client_id).toBe(clientId);
    expect(payload.aud).toBe(RESOURCE);
    expect(res.body.refresh_token).toBeTypeOf('string');
  });

  it('MCP client-registration §CIMD: redirect_uri not in the document → error page, no redirect', async () => {
    const page = await errorPageFor(`${host.origin}/good.json`, 'http://evil.example/cb');
    expect(page.status).toBe(400);
    expect(page.body).toContain('redirect_uri');
  });

  it('MCP client-registration §CIMD: client_name is required', async () => {
    const page = await errorPageFor(`${host.origin}/no-name.json`);
    expect(page.status).toBeGreaterThanOrEqual(400);
    expect(page.body).toMatch(/invalid_client/);
  });

  it('MCP client-registration §CIMD: redirect_uris are required', async () => {
    const page = await errorPageFor(`${host.origin}/no-redirects.json`);
    expect(page.body).toMatch(/invalid_client/);
  });

  it('CIMD §4.1: the document client_id must equal its URL exactly', async () => {
    const page = await errorPageFor(`${host.origin}/mismatch.json`);
    expect(page.body).toMatch(/invalid_client/);
  });

  it('CIMD §4.1: shared-secret authentication is refused in a document', async () => {
    const page = await errorPageFor(`${host.origin}/secret.json`);
    expect(page.body).toMatch(/invalid_client/);
  });

  it('CIMD: a document that cannot be fetched (404) → invalid_client', async () => {
    const page = await errorPageFor(`${host.origin}/missing.json`);
    expect(page.body).toMatch(/invalid_client/);
  });

  it('MCP security §CIMD: the consent page marks the name unverified and shows the document host and redirect host', async () => {
    const ua = new HeadlessBrowser();
    const { challenge } = pkcePair();
    const login = await ua.follow(codeAuthorizeUrl(manual.url, challenge, { client_id: `${host.origin}/good.json` }), REDIRECT);
    if (isUrl(login)) throw new Error('expected login');
    const consent = await ua.submit(login, { username: 'alice', password: 'alice-password', action: 'login' }, REDIRECT);
    if (isUrl(consent)) throw new Error('expected consent');
    expect(consent.body).toContain('CIMD Test Client');
    expect(consent.body).toContain('unverified');
    expect(consent.body).toContain(new URL(host.origin).host);
    expect(consent.body).toContain('127.0.0.1:7777');
    expect(consent.body).toContain('only redirects to your own computer');
  });
});

describe('CIMD document cache shared through the store', () => {
  it('MCP client-registration §CIMD (SHOULD cache respecting HTTP cache headers): max-age up to 1 h, no-store / no-cache / max-age=0 not kept, 30 s without a directive', () => {
    expect(cacheSeconds('max-age=120')).toBe(120);
    expect(cacheSeconds('public, max-age=5')).toBe(5);
    expect(cacheSeconds('max-age="600"')).toBe(600);
    expect(cacheSeconds('max-age=999999')).toBe(3600);
    expect(cacheSeconds('max-age=0')).toBe(0);
    expect(cacheSeconds('no-store')).toBe(0);
    expect(cacheSeconds('public, max-age=600, no-cache')).toBe(0);
    expect(cacheSeconds('no-cache="set-cookie"')).toBe(0);
    expect(cacheSeconds(null)).toBe(30);
    expect(cacheSeconds('public')).toBe(30);
    expect(cacheSeconds('s-maxage=600')).toBe(30);
    expect(cacheSeconds('max-age=abc')).toBe(30);
  });

  it('a second instance on the same store reuses the fetched document (one fetch)', async () => {
    const host = await startHttpsHost();
    host.documents.set('/shared.json', (o) => cimdDocument(`${o}/shared.json`));
    const store = await openStore({ kind: 'memory' });
    const cimd = { allowPrivateNetwork: true, extraCaCertificates: host.caPem };
    const a = await startAs({ devAutoLogin: 'alice', cimd, storage: store });
    const b = await startAs({ devAutoLogin: 'alice', cimd, storage: store });
    try {
      const clientId = `${host.origin}/shared.json`;
      expect((await authorizeAuto(a.url, clientId)).callback.searchParams.get('code')).toBeTruthy();
      expect((await authorizeAuto(b.url, clientId)).callback.searchParams.get('code')).toBeTruthy();
      expect(host.hits.filter((h) => h === '/shared.json')).toHaveLength(1);
    } finally {
      await a.close();
      await b.close();
      await store.close();
      await host.close();
    }
  });

  it('MCP client-registration §CIMD (respecting HTTP cache headers): a no-store document is fetched again for the next authorization', async () => {
    const host = await startHttpsHost();
    host.documents.set('/fresh.json', (o) => cimdDocument(`${o}/fresh.json`));
    host.cacheControl.set('/fresh.json', 'no-store');
    const t = await startAs({ devAutoLogin: 'alice', cimd: { allowPrivateNetwork: true, extraCaCertificates: host.caPem } });
    try {
      const clientId = `${host.origin}/fresh.json`;
      expect((await authorizeAuto(t.url, clientId)).callback.searchParams.get('code')).toBeTruthy();
      const afterFirst = host.hits.filter((h) => h === '/fresh.json').length;
      expect(afterFirst).toBeGreaterThanOrEqual(1);
      expect((await authorizeAuto(t.url, clientId)).callback.searchParams.get('code')).toBeTruthy();
      expect(host.hits.filter((h) => h === '/fresh.json').length).toBeGreaterThan(afterFirst);
    } finally {
      await t.close();
      await host.close();
    }
  });
});

describe('CIMD without the dev switch', () => {
  let t: RunningAs;
  startAsForDescribe({ devAutoLogin: 'alice', cimd: { deniedHosts: ['blocked.example'] } }, (started) => (t = started));

  it('MCP security §CIMD SSRF: a loopback client_id URL is refused before any fetch', async () => {
    const { challenge } = pkcePair();
    const result = await new HeadlessBrowser().follow(
      codeAuthorizeUrl(t.url, challenge, { client_id: 'https://127.0.0.1:1/client.json' }),
      REDIRECT,
    );
    expect(isUrl(result)).toBe(false);
    if (!isUrl(result)) {
      expect(result.status).toBe(400);
      expect(result.body).toMatch(/invalid_client/);
    }
  });

  it('the token endpoint refuses a refused CIMD client_id with invalid_client', async () => {
    const res = await tokenRequest(t.url, {
      grant_type: 'authorization_code',
      code: 'x',
      redirect_uri: REDIRECT,
      code_verifier: 'y',
      client_id: 'https://blocked.example/client.json',
    });
    // RFC 6749 §5.2: 400 is right when no Authorization header was used.
    expectOAuthError(res, 'invalid_client', 400);
  });

  it('config: allowPrivateNetwork is refused for a non-loopback issuer', async () => {
    await expect(
      startAs({ issuerPath: '', cimd: { allowPrivateNetwork: true }, issuer: 'https://auth.example.com' } as never),
    ).rejects.toThrow(/allowPrivateNetwork/);
  });
});
