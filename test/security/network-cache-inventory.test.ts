import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { walkSources } from '@mcp-auth-kit/test-utils';

/**
 * A fetched document is used only for the purpose it was fetched for (issue 40 item 2; MCP client
 * registration §Client ID Metadata Documents; draft-ietf-oauth-client-id-metadata-document-00
 * §6). This scan lists, for the authorization server:
 *
 * - every fetcher (a `createEgressFetch` call: one purpose, one egress policy) and the cache its
 *   answers fill — a new fetcher fails here until it is listed;
 * - every write to the shared kv store (`store.kv`, shared by every instance), with its namespace
 *   and whether what it keeps came from the network — a new write site fails here; only the CIMD
 *   fetcher writes network data (`cimd-document`);
 * - the request shapes of oidc-provider by which provider-fetch.ts tells a CIMD request from a
 *   `jwks_uri` request — an oidc-provider upgrade that changes them fails here.
 *
 * The same inventory, in prose: packages/authorization-server/README.md, "Caches filled from the
 * network". The reproduction of the attack it closes: cimd-cache.attack.test.ts.
 */

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const AS_SRC = 'packages/authorization-server/src';

interface Fetcher {
  file: string;
  /** The `purpose` the fetcher logs refusals under. */
  purpose: RegExp;
  /** What its answers fill, and who else may write there (nobody). */
  fills: string;
}

const FETCHERS: Fetcher[] = [
  {
    file: `${AS_SRC}/clients/cimd.ts`,
    purpose: /purpose: 'client_metadata'/,
    fills: 'store.kv `cimd-document` (shared, ≤ 1 h) and oidc-provider’s in-memory CIMD client cache (same max-age)',
  },
  {
    file: `${AS_SRC}/provider/provider-fetch.ts`,
    purpose: /purpose: 'jwks_uri'/,
    fills:
      'oidc-provider’s key store of that one client (memory, the response’s lifetime, ≥ 60 s), and the client-assertion grant’s jose remote JWKS of that one client (grants/jwt-bearer/client-keys.ts: memory, 10 min, keyed by client_id and jwks_uri)',
  },
  {
    file: `${AS_SRC}/upstream/login.ts`,
    purpose: /purpose: `upstream:\$\{p\.name\}`/,
    fills: 'the openid-client Configuration of that upstream provider (memory: discovery document, its JWKS)',
  },
  {
    file: `${AS_SRC}/grants/jwt-bearer/idp-keys.ts`,
    purpose: /purpose: `id-jag-jwks:\$\{config\.name \?\? config\.issuer\}`/,
    fills: 'jose’s remote JWKS of that trusted IdP (memory, 10 min, redirects not followed)',
  },
  {
    file: `${AS_SRC}/third-party/providers.ts`,
    purpose: /purpose: `third-party:\$\{p\.name\}`/,
    fills:
      'the openid-client Configuration of that third-party provider (memory: its metadata document, fetched without redirects, issuer compared); its token answers go to the vault (store.connections, sealed), never to the kv store',
  },
];

interface KvWrite {
  file: string;
  line: RegExp;
  count: number;
  namespace: string;
  /** `network`: the value is (derived from) a fetched document; `state`: the AS's own records and counters. */
  holds: 'network' | 'state' | 'pass-through';
  why: string;
}

const KV_WRITES: KvWrite[] = [
  {
    file: `${AS_SRC}/clients/cimd.ts`,
    line: /await kv\.set\(CIMD_CACHE_NAMESPACE, url, /,
    count: 1,
    namespace: 'cimd-document',
    holds: 'network',
    why: 'the CIMD fetcher: a document fetched at exactly its client_id URL, no redirect, client_id equal to the URL',
  },
  {
    file: `${AS_SRC}/ops/cimd-metrics.ts`,
    line: /await kv\.set\(namespace, key, value, ttlSeconds\)|kv\.increment\(namespace, key, by, ttlSeconds\)|kv\.decrement\(namespace, key, by\)/,
    count: 3,
    namespace: '(the wrapped CIMD fetcher’s)',
    holds: 'pass-through',
    why: 'the metrics wrapper around the CIMD fetcher only (provider.ts), counting its hits and misses',
  },
  {
    file: `${AS_SRC}/upstream/login.ts`,
    line: /await this\.o\.store\.kv\.set\(FLOWS, handle, flow, FLOW_TTL\)/,
    count: 1,
    namespace: 'upstream-flow',
    holds: 'state',
    why: 'PKCE verifier, state, nonce the AS generated for an upstream login',
  },
  {
    file: `${AS_SRC}/interactions/upstream-routes.ts`,
    line: /await o\.store\.kv\.set\(/,
    count: 1,
    namespace: 'upstream-done',
    holds: 'state',
    why: 'the local account an upstream login resolved to (after openid-client verified the ID token)',
  },
  {
    file: `${AS_SRC}/interactions/remembered-grants.ts`,
    line: /store\.kv\.set\((?:PAIRS|NAMESPACE), /,
    count: 4,
    namespace: 'account-grants, account-client-grant',
    holds: 'state',
    why: 'which grants a user approved (or got by an ID-JAG)',
  },
  {
    file: `${AS_SRC}/storage/kv-lock.ts`,
    line: /await kv\.increment\(namespace, key, 1, options\.ttlSeconds\)/,
    count: 1,
    namespace: '(its callers’: account-client-grant-lock, connection-refresh-lock)',
    holds: 'state',
    why: 'the lock that keeps one grant per (account, client) and one refresh per third-party connection',
  },
  {
    file: `${AS_SRC}/third-party/tickets.ts`,
    line: /await this\.kv\.(?:set\((?:TICKETS|FLOWS), |increment\(TAKEN, )/,
    count: 4,
    namespace: 'connect-ticket, connect-ticket-taken, connect-flow',
    holds: 'state',
    why: 'a connect URL’s binding (sub, provider, resource: from a verified access token) under the ticket’s hash, its single use, and the PKCE verifier and state the AS made for the provider flow',
  },
  {
    file: `${AS_SRC}/interactions/throttle.ts`,
    line: /this\.kv\.(?:increment|decrement)\(NAMESPACE, /,
    count: 4,
    namespace: 'login-attempts',
    holds: 'state',
    why: 'login throttle counters',
  },
  {
    file: `${AS_SRC}/http/rate-limit.ts`,
    line: /await kv\.increment\(namespace, key, 1, limit\.windowSeconds\)/,
    count: 1,
    namespace: 'dcr-rate',
    holds: 'state',
    why: 'DCR rate-limit counters',
  },
  {
    file: `${AS_SRC}/tokens/refresh-grace.ts`,
    line: /this\.kv\.(?:increment|set)\(REFRESH_GRACE_NAMESPACE, /,
    count: 2,
    namespace: 'refresh-grace',
    holds: 'state',
    why: 'the refresh grace window’s claim and sealed response',
  },
  {
    file: `${AS_SRC}/grants/jwt-bearer/grant.ts`,
    line: /await kv\.increment\(REPLAY_NAMESPACE, key, 1, ttlSeconds\)/,
    count: 1,
    namespace: 'id-jag-jti',
    holds: 'state',
    why: 'ID-JAG jti replay counter',
  },
  {
    file: `${AS_SRC}/grants/jwt-bearer/client-assertion-grant.ts`,
    line: /await kv\.increment\(REPLAY_NAMESPACE, key, 1, ttlSeconds\)/,
    count: 1,
    namespace: 'client-assertion-jti',
    holds: 'state',
    why: 'jti replay counter of clients’ own assertions (RFC 7523 §3 item 7)',
  },
  {
    file: `${AS_SRC}/grants/jwt-bearer/dpop-binding.ts`,
    line: /await options\.kv\.increment\(PROOF_NAMESPACE, /,
    count: 1,
    namespace: 'id-jag-dpop-jti',
    holds: 'state',
    why: 'DPoP proof replay counter of the ID-JAG grant',
  },
  {
    file: `${AS_SRC}/accounts/accounts.ts`,
    line: /await store\.kv\.set\(PRODUCTION_MARK\.namespace, PRODUCTION_MARK\.key, /,
    count: 1,
    namespace: 'store-marks',
    holds: 'state',
    why: 'a production server marks its store, so a development instance refuses to seed the demo account into it',
  },
  {
    file: `${AS_SRC}/tokens/revocation-outbox.ts`,
    line: /await kv\?\.set\(REVOCATION_RECORD_NAMESPACE, grantId, /,
    count: 1,
    namespace: 'revoked-grant',
    holds: 'state',
    why: 'durable revocation record: a grant the AS revoked, republished to Redis until its tokens expire',
  },
  {
    file: `${AS_SRC}/admin/change-token.ts`,
    line: /await kv\.(?:set\(NAMESPACE, token, |increment\(NAMESPACE, `spent:)/,
    count: 2,
    namespace: 'console-change-token',
    holds: 'state',
    why: 'the operator console’s one-time change tokens (CSRF and replay), bound to the session, 10 min',
  },
  {
    file: `${AS_SRC}/admin/client-disabled.ts`,
    line: /await kv\.set\(CLIENT_DISABLED_NAMESPACE, clientId, /,
    count: 1,
    namespace: 'client-disabled',
    holds: 'state',
    why: 'a client the operator disabled (refused wherever oidc-provider finds a client, client-gate.ts)',
  },
];

const KV_WRITE = /\bkv\??\.(?:set|increment|decrement)\s*\(/;

interface Hit {
  file: string;
  line: number;
  text: string;
}

/** The kv lock is a user of the kv store that lives beside its implementations. */
const KV_USERS_IN_STORAGE = new Set([`${AS_SRC}/storage/kv-lock.ts`]);

/** Code lines (comments skipped) of the AS sources matching `pattern`; the kv implementations themselves excluded. */
function scan(pattern: RegExp, root = AS_SRC): Hit[] {
  const hits: Hit[] = [];
  for (const path of walkSources(join(ROOT, root))) {
    const file = relative(ROOT, path).split('\\').join('/');
    const implementation = file.startsWith(`${AS_SRC}/storage/`) && !KV_USERS_IN_STORAGE.has(file);
    if (implementation || file.startsWith(`${AS_SRC}/redis/`)) continue;
    readFileSync(path, 'utf8')
      .split('\n')
      .forEach((raw, index) => {
        const text = raw.trim();
        if (text.startsWith('*') || text.startsWith('//') || text.startsWith('/*')) return;
        if (pattern.test(text)) hits.push({ file, line: index + 1, text });
      });
  }
  return hits;
}

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

describe('network cache inventory: every fetcher of the AS and what it fills', () => {
  const fetchers = scan(/\bcreateEgressFetch\(\{/);

  it('every createEgressFetch call is a listed fetcher — a new one fails here until its purpose and cache are listed', () => {
    expect(fetchers.map((h) => h.file).sort()).toEqual(FETCHERS.map((f) => f.file).sort());
  });

  it.each(FETCHERS.map((f) => [`${f.file} → ${f.fills}`, f] as const))('%s', (_name, fetcher) => {
    expect(read(fetcher.file)).toMatch(fetcher.purpose);
  });

  it('oidc-provider gets one fetcher per purpose, and only provider.ts builds the CIMD and jwks_uri fetchers', () => {
    expect(scan(/(?<!function )\bcreateCimdFetch\(/).map((h) => h.file)).toEqual([
      `${AS_SRC}/provider/provider.ts`,
      `${AS_SRC}/provider/provider.ts`,
    ]);
    expect(scan(/(?<!function )\bcreateJwksUriFetch\(/).map((h) => h.file)).toEqual([`${AS_SRC}/provider/provider.ts`]);
    expect(scan(/(?<!function )\bmeteredCimdFetch\(/).map((h) => h.file)).toEqual([`${AS_SRC}/provider/provider.ts`]);
    expect(read(`${AS_SRC}/provider/provider.ts`)).toMatch(
      /fetch: createProviderFetch\(\s*\{\s*client_metadata: metrics\s*\?\s*meteredCimdFetch\(\(kv\) => createCimdFetch\([\s\S]*?: createCimdFetch\([\s\S]*?jwks_uri: jwksUriFetch,\s*\}/,
    );
    expect(read(`${AS_SRC}/provider/provider.ts`)).toMatch(/const jwksUriFetch = createJwksUriFetch\(cimd, logger\);/);
  });
});

describe('network cache inventory: every write to the shared kv store', () => {
  const hits = scan(KV_WRITE);

  it('the scan finds the known writes (it is not blind)', () => {
    expect(hits.length).toBeGreaterThanOrEqual(KV_WRITES.reduce((n, w) => n + w.count, 0));
  });

  it('every kv write belongs to exactly one listed site — a new write site fails here', () => {
    const unlisted = hits.filter((hit) => KV_WRITES.filter((w) => w.file === hit.file && w.line.test(hit.text)).length !== 1);
    expect(unlisted.map((h) => `${h.file}:${h.line} ${h.text}`)).toEqual([]);
  });

  it.each(KV_WRITES.map((w) => [`${w.file} — ${w.namespace} (${w.holds}): ${w.why}`, w] as const))(
    '%s: found as often as listed',
    (_name, site) => {
      expect(hits.filter((h) => h.file === site.file && site.line.test(h.text)).map((h) => `${h.line}: ${h.text}`)).toHaveLength(
        site.count,
      );
    },
  );

  it('network data reaches the kv store only through the CIMD fetcher', () => {
    expect(KV_WRITES.filter((w) => w.holds === 'network').map((w) => w.file)).toEqual([`${AS_SRC}/clients/cimd.ts`]);
  });

  it('the CIMD namespace is spelt once, and only createCimdFetch writes it', () => {
    const literal = [...scan(/'cimd-document'/, 'packages'), ...scan(/'cimd-document'/, 'apps')];
    expect(literal.map((h) => h.file)).toEqual([`${AS_SRC}/clients/cimd.ts`]);
    const users = scan(/\bCIMD_CACHE_NAMESPACE\b/).map((h) => h.file);
    expect([...new Set(users)].sort()).toEqual([`${AS_SRC}/clients/cimd.ts`, `${AS_SRC}/ops/cimd-metrics.ts`]);
    // In cimd.ts the one write sits inside createCimdFetch, after its GET and trust-policy checks.
    const cimd = read(`${AS_SRC}/clients/cimd.ts`);
    const start = cimd.indexOf('export function createCimdFetch(');
    expect(start).toBeGreaterThan(0);
    const body = cimd.slice(start);
    expect(cimd.slice(0, start)).not.toMatch(KV_WRITE);
    expect(body).toMatch(/const refusal = cimdRefusal\(url, config\);\s*if \(refusal\) throw/);
    expect(body).toMatch(/await egressFetch\(url, \{ \.\.\.options, redirect: 'manual' \}\)/);
    expect(body).toMatch(/\.client_id === url\) \{[\s\S]*?await kv\.set\(CIMD_CACHE_NAMESPACE, url, /);
    // The metrics wrapper only observes: it writes what the CIMD fetcher hands it, to the same key.
    expect(read(`${AS_SRC}/ops/cimd-metrics.ts`)).not.toMatch(/kv\.set\(CIMD_CACHE_NAMESPACE/);
  });
});

describe("network cache inventory: oidc-provider's request shapes that provider-fetch.ts routes by", () => {
  const lib = join(ROOT, 'node_modules/oidc-provider/lib');

  /** Each `fetchRequest(provider, …, { … })` call: its file, method and redirect option. */
  function calls(): string[] {
    const out: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (name.endsWith('.js')) {
          const text = readFileSync(path, 'utf8');
          for (const match of text.matchAll(/(?<!function )fetchRequest\(provider, /g)) {
            const open = text.indexOf('{', match.index);
            let depth = 0;
            let end = open;
            for (; end < text.length; end++) {
              if (text[end] === '{') depth++;
              if (text[end] === '}' && --depth === 0) break;
            }
            const options = text.slice(open, end + 1);
            const method = /method: '(\w+)'/.exec(options)?.[1] ?? 'GET';
            const redirect = /redirect: '(\w+)'/.exec(options)?.[1] ?? '(follow)';
            out.push(`${relative(lib, path)} ${method} ${redirect}`);
          }
        }
      }
    };
    walk(lib);
    return out.sort();
  }

  it('CIMD: GET with redirect manual; jwks_uri and sector_identifier_uri: GET without it; the rest POST', () => {
    expect(calls()).toEqual([
      // resolveClientByMetadataDocument → client_metadata (the CIMD fetcher)
      'helpers/client_id_metadata_document.js GET manual',
      // sector_identifier_uri: refused for every client (client-url-fields.ts), never fetched
      'helpers/sector_validate.js GET (follow)',
      // client jwks_uri → jwks_uri; CIBA ping and back-channel logout: features off → refused
      'models/client.js GET (follow)',
      'models/client.js POST manual',
      'models/client.js POST manual',
    ]);
    expect(read('node_modules/oidc-provider/lib/models/client.js')).toMatch(
      /fetchRequest\(provider, new URL\(this\.jwksUri\)\.href, \{\s*method: 'GET',/,
    );
  });
});
