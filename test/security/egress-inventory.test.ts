import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { walkSources } from '@mcp-auth-kit/test-utils';
import { startAttackStack, type AttackStack } from './helpers/support.js';

/**
 * Every outgoing request in the code, listed (issue 19 finding 5; MCP security best practices
 * §SSRF). The scan finds each place that can open a connection in packages/*\/src and apps/*\/src
 * (fetch calls, node:http/https/net/tls clients, HTTP libraries, custom-fetch hooks, undici
 * dispatchers) and each must be one of the sites below, which says how it is routed. A new call
 * site, or one more call in a listed file, fails this test until it is routed and listed.
 *
 * Routes:
 * - egress: through the protocol egress policy (packages/protocol/src/egress-connector.ts), which
 *   checks the resolved address before connecting — the AS's oidc-provider and openid-client
 *   requests, the client's OAuth requests (PRM, AS metadata, registration, token, revocation);
 * - enforcement: the connector itself;
 * - mcp-server: the client's request to the MCP server the user chose (not a URL a peer named);
 * - operator-configured: an endpoint from the deployment's own configuration (the RS's AS, the
 *   demo's readiness probe, the enterprise IdP token endpoint the caller passes);
 * - test-tooling: packages/testing (test helpers, never part of a deployment);
 * - no-request: an HTTP library imported for a function that sends nothing (its proof shows which).
 */
type Route = 'egress' | 'enforcement' | 'mcp-server' | 'operator-configured' | 'test-tooling' | 'no-request';

interface Site {
  file: string;
  /** Matches the hit line(s) of this site. */
  line: RegExp;
  /** Hit lines this site accounts for (one more in the file fails). */
  count: number;
  route: Route;
  why: string;
  /** Text the file must contain for the route to hold. */
  proof?: RegExp;
}

const SITES: Site[] = [
  // Authorization server
  {
    file: 'packages/authorization-server/src/http/egress.ts',
    line: /=> fetch\(url, \{ \.\.\.init, dispatcher \}/,
    count: 1,
    route: 'egress',
    why: 'the only fetch of the AS: every request carries the egress dispatcher',
    proof: /const dispatcher = tryCreateEgressDispatcher\(/,
  },
  {
    file: 'packages/authorization-server/src/http/egress.ts',
    line: /return fetch\(url, rest as RequestInit\)/,
    count: 1,
    route: 'egress',
    why: 'where Node’s undici cannot be reached (jest VM): only after every resolved address passed the policy',
    proof: /const decision = await resolveEgress\(host, options\.policy, options\.resolve\);\n\s*if \(!decision\.ok\)/,
  },
  {
    file: 'packages/authorization-server/src/upstream/login.ts',
    line: /from 'openid-client'/,
    count: 1,
    route: 'egress',
    why: 'openid-client (upstream discovery, JWKS, token, userinfo) with customFetch = the egress fetch',
    proof: /\[oidc\.customFetch\]: \(url, options\) => egressFetch\(/,
  },
  {
    file: 'packages/authorization-server/src/upstream/login.ts',
    line: /\[oidc\.customFetch\]: \(url, options\) => egressFetch\(/,
    count: 1,
    route: 'egress',
    why: 'the egress fetch of the provider configuration',
  },
  {
    file: 'packages/authorization-server/src/third-party/providers.ts',
    line: /from 'openid-client'/,
    count: 1,
    route: 'egress',
    why: 'openid-client (third-party provider: token, refresh, revocation) with customFetch = the egress fetch of that provider; its metadata is fetched with the same egress fetch',
    proof:
      /config\[oidc\.customFetch\] = \(url, options\) => fetcher\(url, options as RequestInit\);[\s\S]*fetcher = createEgressFetch\(|fetcher = createEgressFetch\([\s\S]*config\[oidc\.customFetch\] = \(url, options\) => fetcher\(url, options as RequestInit\);/,
  },
  {
    file: 'packages/authorization-server/src/grants/jwt-bearer/idp-keys.ts',
    line: /createRemoteJWKSet\(new URL\(config\.jwksUri!\)|\[customFetch\]: \(url: string, init: RequestInit\) => egressFetch\(/,
    count: 2,
    route: 'egress',
    why: 'JWKS of a trusted ID-JAG issuer (operator-configured jwksUri): jose customFetch = the egress fetch, redirects not followed',
    proof: /const egressFetch = createEgressFetch\(\{\s*policy: upstreamEgressPolicy\(config\.jwksUri!, config\.allowPrivateNetwork\)/,
  },
  {
    file: 'packages/authorization-server/src/grants/jwt-bearer/client-keys.ts',
    line: /createRemoteJWKSet\(new URL\(client\.jwksUri\)|\[customFetch\]: \(url: string, init: RequestInit\) => jwksUriFetch\(/,
    count: 2,
    route: 'egress',
    why: "a configured client's jwks_uri (client-assertion grant): jose customFetch = provider.ts's one jwks_uri fetcher (createJwksUriFetch: egress policy for client-named URLs)",
    proof: /export function createClientKeys\(jwksUriFetch: FetchLike\)/,
  },
  // Client library
  {
    file: 'packages/client/src/http.ts',
    line: /res = await deps\.fetch\(input, \{ \.\.\.init, signal \}\)/,
    count: 1,
    route: 'egress',
    why: 'limitedFetch, the only deps.fetch of the client (deadline and size bound): OAuth requests reach it through egressFetch with the egress dispatcher, MCP-server requests through resourceFetch',
    proof:
      /const dispatcher = policy && egressDispatcher\(policy, deps\.resolve\);\n[\s\S]*return await limitedFetch\(deps, input, options, what, 'whole'\)/,
  },
  {
    file: 'packages/client/src/oauth.ts',
    line: /from 'oauth4webapi'/,
    count: 1,
    route: 'egress',
    why: 'oauth4webapi token and revocation requests get requestOptions(deps)',
    proof: /\[oauth\.customFetch\]: policyFetch\(deps\)/,
  },
  {
    file: 'packages/client/src/oauth.ts',
    line: /\[oauth\.customFetch\]: policyFetch\(deps\)/,
    count: 1,
    route: 'egress',
    why: 'policyFetch: URL policy, egress pre-check, egress dispatcher',
  },
  {
    file: 'packages/client/src/client/signed-in-account.ts',
    line: /from 'oauth4webapi'/,
    count: 1,
    route: 'no-request',
    why: 'reads the ID Token claims oauth4webapi already validated in the token response; sends nothing',
    proof: /^(?![\s\S]*oauth\.(?!getValidatedIdTokenClaims\b)\w+\()[\s\S]*oauth\.getValidatedIdTokenClaims\(/,
  },
  {
    file: 'packages/client/src/dpop.ts',
    line: /from 'oauth4webapi'/,
    count: 1,
    route: 'mcp-server',
    why: 'protectedResourceRequest: the DPoP request to the MCP server',
  },
  {
    file: 'packages/client/src/dpop.ts',
    line: /\[oauth\.customFetch\]: \(url, init\) => resourceFetch\(deps, url, init/,
    count: 1,
    route: 'mcp-server',
    why: 'the DPoP request to the MCP server',
  },
  {
    file: 'packages/client/src/client/context.ts',
    line: /const baseFetch = options\.fetch \?\? \(\(input, init\) => globalThis\.fetch\(input, init\)\)/,
    count: 1,
    route: 'egress',
    why: 'the base fetch: OAuth requests reach it only through http.ts egressFetch (depsFor(server) sets the egress policy)',
    proof: /const egress = mode === 'allow' \? ANY_ADDRESS : egressPolicyForPeer\(server, /,
  },
  {
    file: 'packages/client/src/client/mcp-auth-client.ts',
    line: /^async fetch\(input: string \| URL \| Request, init\?: RequestInit\)/,
    count: 1,
    route: 'mcp-server',
    why: 'McpAuthClient.fetch, the MCP request API (a definition)',
  },
  {
    file: 'packages/client/src/client/sdk-adapters.ts',
    line: /return \(input, init\) => client\.fetch\(input, init\)/,
    count: 1,
    route: 'mcp-server',
    why: 'createAuthFetch',
  },
  {
    file: 'packages/client/src/client/enterprise-managed.ts',
    line: /fetch: options\.fetch \?\? \(\(i, init\) => globalThis\.fetch\(i, init\)\)/,
    count: 1,
    route: 'operator-configured',
    why: 'enterpriseManagedAssertion: the IdP token endpoint the caller configures (through policyFetch, URL policy only)',
  },
  {
    file: 'packages/cli/src/program.ts',
    line: /from '@modelcontextprotocol\/client'/,
    count: 1,
    route: 'mcp-server',
    why: 'the SDK transport to the MCP server, with fetch = createAuthFetch (wrapped by withMcp to observe and time its bodies)',
    proof:
      /const authFetch = createAuthFetch\(auth\);[\s\S]*?const res = await authFetch\(input, init\);[\s\S]*?new StreamableHTTPClientTransport\(new URL\(url\), \{ fetch \}\)/,
  },
  // The enforcement itself
  {
    file: 'packages/protocol/src/egress-connector.ts',
    line: /from 'node:(?:net|tls)'/,
    count: 2,
    route: 'enforcement',
    why: 'connects only to addresses resolveEgress allowed',
  },
  {
    file: 'packages/protocol/src/egress-connector.ts',
    line: /undici\.globalDispatcher/,
    count: 1,
    route: 'enforcement',
    why: "the Agent class of Node's fetch, for the egress dispatcher",
  },
  // Resource server: its own configured authorization server only
  {
    file: 'packages/resource-server/src/key-memo.ts',
    line: /createRemoteJWKSet|customFetch\]:/,
    count: 2,
    route: 'operator-configured',
    why: 'JWKS of the configured issuer',
  },
  {
    file: 'packages/resource-server/src/introspection.ts',
    line: /ctx\.fetch\(options\.endpoint/,
    count: 1,
    route: 'operator-configured',
    why: 'introspection endpoint of the configured issuer',
  },
  {
    file: 'packages/resource-server/src/as-metadata.ts',
    line: /options\.fetch\(url/,
    count: 1,
    route: 'operator-configured',
    why: 'metadata of the configured issuer',
  },
  {
    file: 'packages/resource-server/src/third-party/exchange.ts',
    line: /request\.fetch\(request\.tokenEndpoint/,
    count: 1,
    route: 'operator-configured',
    why: 'RFC 8693 token exchange (thirdPartyToken) at the token endpoint of the MCP token’s own configured issuer, from its metadata or thirdParty.tokenEndpoint (https, or http on loopback); redirects not followed',
    proof: /redirect: 'manual'/,
  },
  {
    file: 'apps/demo-mcp-server/src/app.ts',
    line: /fetch\(url, \{ signal: AbortSignal\.timeout\(2000\) \}\)/,
    count: 1,
    route: 'operator-configured',
    why: 'readiness probe of the configured issuer',
  },
  {
    file: 'apps/demo-mcp-server/src/drive-tool.ts',
    line: /fetch\(filesUrl, \{/,
    count: 1,
    route: 'operator-configured',
    why: "drive_list_files: the demo drive's API at DEMO_DRIVE_API (set by npm start), with the drive token from the exchange; redirects refused",
    proof: /redirect: 'error'/,
  },
  // Test helpers
  {
    file: 'packages/testing/src/test-clients.ts',
    line: /fetch\(metadata\.registration_endpoint/,
    count: 1,
    route: 'test-tooling',
    why: 'registers a test client at the test AS',
  },
  { file: 'packages/testing/src/code-flow.ts', line: /fetch\(/, count: 2, route: 'test-tooling', why: 'drives a code flow in tests' },
  {
    file: 'packages/testing/src/mcp-wire.ts',
    line: /fetch\(context\.url/,
    count: 2,
    route: 'test-tooling',
    why: 'MCP request helper (request and session end)',
  },
  {
    file: 'packages/testing/src/headless-browser.ts',
    line: /this\.fetch\(url|=> fetch\(input, init\)/,
    count: 2,
    route: 'test-tooling',
    why: 'headless browser: its requests, through the global fetch or the one a test passes',
  },
];

/** What can open a connection, one pattern per kind. */
const DETECTORS: Array<[string, RegExp]> = [
  ['fetch call', /(?<![\w$])fetch\s*\(/],
  ['node http client', /import\s+(?:\*\s+as\s+\w+|\w+|\{[^}]*\b(?:request|get|Agent)\b[^}]*\})\s+from\s+'node:(?:https?|http2)'/],
  ['node socket', /import\s+(?:\*\s+as\s+\w+|\w+|\{[^}]*\b(?:connect|createConnection|Socket)\b[^}]*\})\s+from\s+'node:(?:net|tls)'/],
  ['HTTP library', /from\s+'(?:openid-client|oauth4webapi|undici|node-fetch|axios|got|@modelcontextprotocol\/(?:client|sdk)[^']*)'/],
  ['remote JWKS', /createRemoteJWKSet\s*\(/],
  ['custom fetch hook', /customFetch\]\s*:/],
  ['undici dispatcher', /undici\.globalDispatcher/],
];

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

interface Hit {
  file: string;
  line: number;
  text: string;
  kind: string;
}

function scan(): Hit[] {
  const hits: Hit[] = [];
  for (const group of ['packages', 'apps']) {
    for (const pkg of readdirSync(join(ROOT, group))) {
      const src = join(ROOT, group, pkg, 'src');
      if (!statSync(join(ROOT, group, pkg)).isDirectory() || !readdirSync(join(ROOT, group, pkg)).includes('src')) continue;
      for (const path of walkSources(src)) {
        const file = relative(ROOT, path).split('\\').join('/');
        readFileSync(path, 'utf8')
          .split('\n')
          .forEach((raw, index) => {
            const text = raw.trim();
            if (text.startsWith('*') || text.startsWith('//') || text.startsWith('/*')) return; // comments
            const detector = DETECTORS.find(([, pattern]) => pattern.test(text));
            if (detector) hits.push({ file, line: index + 1, text, kind: detector[0] });
          });
      }
    }
  }
  return hits;
}

describe('egress inventory: every outgoing request in packages/*/src and apps/*/src is a known, routed site', () => {
  const hits = scan();

  it('the scan finds the known sites (it is not blind)', () => {
    expect(hits.length).toBeGreaterThanOrEqual(SITES.reduce((n, s) => n + s.count, 0));
  });

  it('every hit belongs to exactly one listed site — a new, unrouted request fails here', () => {
    const unlisted = hits.filter((hit) => SITES.filter((s) => s.file === hit.file && s.line.test(hit.text)).length !== 1);
    expect(unlisted.map((h) => `${h.file}:${h.line} [${h.kind}] ${h.text}`)).toEqual([]);
  });

  it.each(SITES.map((s) => [`${s.file} — ${s.why}`, s] as const))('%s: found as often as listed, and its route holds', (_name, site) => {
    const found = hits.filter((hit) => hit.file === site.file && site.line.test(hit.text));
    expect(
      found.map((h) => `${h.line}: ${h.text}`),
      `${site.file} (${site.route})`,
    ).toHaveLength(site.count);
    if (site.proof) expect(readFileSync(join(ROOT, site.file), 'utf8')).toMatch(site.proof);
  });

  it('the AS hands oidc-provider the egress-wrapped fetch, and the provider fetch calls nothing else', () => {
    const provider = readFileSync(join(ROOT, 'packages/authorization-server/src/provider/provider.ts'), 'utf8');
    // One fetcher per purpose (provider-fetch.ts; test/security/network-cache-inventory.test.ts).
    expect(provider).toMatch(
      /fetch: createProviderFetch\(\s*\{\s*client_metadata: metrics\s*\?\s*meteredCimdFetch\(\(kv\) => createCimdFetch\(cimd, logger, kv[,)][\s\S]*?: createCimdFetch\(cimd, logger, store\.kv[,)][\s\S]*?jwks_uri: jwksUriFetch,\s*\},/,
    );
    // one jwks_uri fetcher, shared by oidc-provider and the client-assertion grant (client-keys.ts)
    expect(provider).toMatch(/const jwksUriFetch = createJwksUriFetch\(cimd, logger\);/);
    const cimd = readFileSync(join(ROOT, 'packages/authorization-server/src/clients/cimd.ts'), 'utf8');
    expect(cimd).toMatch(/const egressFetch = createEgressFetch\(\{\s*policy: clientUrlEgressPolicy\(config\)/);
    expect(cimd).toMatch(/await egressFetch\(url, \{ \.\.\.options, redirect: 'manual' \}\)/);
    const purposes = readFileSync(join(ROOT, 'packages/authorization-server/src/provider/provider-fetch.ts'), 'utf8');
    expect(purposes).toMatch(/const egressFetch = createEgressFetch\(\{\s*policy: clientUrlEgressPolicy\(config\)/);
    expect(purposes).toMatch(/return \(url, options\) => egressFetch\(url, options\);/);
  });

  it('the client applies a policy to every request made for an MCP server (depsFor), never the bare deps', () => {
    const dir = join(ROOT, 'packages/client/src/client');
    const read = (name: string) => readFileSync(join(dir, name), 'utf8');
    const bare = readdirSync(dir).flatMap((name) =>
      [...read(name).matchAll(/\.deps\b(?!, original\.url, )/g)].map(
        (m) =>
          `${name}: ${read(name)
            .slice(m.index! - 60, m.index! + 30)
            .replace(/\s+/g, ' ')}`,
      ),
    );
    // Allowed: building deps once, spreading it in depsFor, the MCP request (DPoP) and the authorization URL scheme check.
    expect(bare).toHaveLength(4);
    expect(read('context.ts')).toMatch(/\{ \.\.\.this\.deps, egress \}/);
    // sendWithTokens: the Bearer request to the MCP server (McpAuthClient.fetch and checkAccess), with its deadline
    expect(read('auth-fetch.ts')).toMatch(/return resourceFetch\(parts\.context\.deps, original\.url, \{/);
    expect(read('auth-fetch.ts')).toMatch(
      /dpopResourceRequest\(original, await original\.body\(\), tokens\.access_token, dpopKey, parts\.context\.deps\)/,
    );
    expect(read('authorization-flows.ts')).toMatch(/assertAllowedUrl\(url, 'authorization URL', this\.context\.deps\)/);
    // Token and revocation requests: the grant context carries the server's policy.
    expect(read('credentials.ts')).toMatch(/deps: context\.depsFor\(binding\.server\)/);
  });

  it('oauth4webapi request functions: only the token, revocation and resource requests that the sites above route', () => {
    const used = (file: string) =>
      [...new Set([...readFileSync(join(ROOT, file), 'utf8').matchAll(/oauth\.(\w+Request)\(/g)].map((m) => m[1]))].sort();
    expect(used('packages/client/src/oauth.ts')).toEqual([
      'authorizationCodeGrantRequest',
      'clientCredentialsGrantRequest',
      'genericTokenEndpointRequest',
      'refreshTokenGrantRequest',
      'revocationRequest',
    ]);
    expect(used('packages/client/src/dpop.ts')).toEqual(['protectedResourceRequest']);
    expect(readFileSync(join(ROOT, 'packages/client/src/oauth.ts'), 'utf8').match(/\.\.\.requestOptions\((?:ctx\.)?deps\)/g)).toHaveLength(
      2,
    );
  });

  it('openid-client: every discovery gets the egress customFetch, and no configuration is built another way', () => {
    const login = readFileSync(join(ROOT, 'packages/authorization-server/src/upstream/login.ts'), 'utf8');
    expect(login.match(/oidc\.discovery\(/g)).toHaveLength(1);
    expect(login.match(/\[oidc\.customFetch\]/g)).toHaveLength(1);
    expect(login).not.toMatch(/new oidc\.Configuration|oidc\.dynamicClientRegistration/);
  });
});

describe("egress inventory: oidc-provider's own outgoing requests all go through the configured fetch", () => {
  const lib = join(ROOT, 'node_modules/oidc-provider/lib');

  function jsFiles(dir: string): string[] {
    const out: string[] = [];
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) out.push(...jsFiles(path));
      else if (name.endsWith('.js')) out.push(path);
    }
    return out;
  }

  it('fetchRequest (→ configuration.fetch, our egress fetch) is its only way out, used at the known places only', () => {
    const calls: string[] = [];
    const raw: string[] = [];
    for (const path of jsFiles(lib)) {
      const file = relative(lib, path);
      readFileSync(path, 'utf8')
        .split('\n')
        .forEach((line) => {
          if (/(?<!function )fetchRequest\(provider/.test(line)) calls.push(file);
          const networking =
            /(?<![\w$.])fetch\(|globalThis\.fetch|undici/.test(line) ||
            (/from 'node:(?:https?|http2|net|tls)'/.test(line) && !/^import \{ STATUS_CODES \}/.test(line.trim()));
          if (networking && !line.trim().startsWith('//')) raw.push(`${file}: ${line.trim()}`);
        });
    }
    // sector_identifier_uri (never reached: refused, and sectorIdentifierUriValidate is false),
    // CIMD documents, client jwks_uri, CIBA notification and back-channel logout (features off).
    expect(calls.sort()).toEqual([
      'helpers/client_id_metadata_document.js',
      'helpers/sector_validate.js',
      'models/client.js',
      'models/client.js',
      'models/client.js',
    ]);
    // The default `fetch` option (replaced by ours) and the dispatcher helper, nothing else.
    expect(
      raw.filter(
        (l) =>
          !/^helpers\/defaults\.js: fetch: \(url, options\) => globalThis\.fetch\(url, options\),$/.test(l) &&
          !/^helpers\/fetch_request\.js: .*undici\.globalDispatcher/.test(l),
      ),
    ).toEqual([]);
    expect(readFileSync(join(lib, 'helpers/fetch_request.js'), 'utf8')).toMatch(
      /return instance\(provider\)\.configuration\.fetch\(url, options\);/,
    );
    // A remote request object (request_uri) is never fetched: only pushed-request URNs are read.
    expect(readFileSync(join(lib, 'actions/authorization/pushed_authorization_requests.js'), 'utf8')).toMatch(
      /throw new RequestUriNotSupported\(\)/,
    );
  });

  describe('the features behind the other fetchRequest places are off in our AS', () => {
    let stack: AttackStack;
    beforeAll(async () => {
      stack = await startAttackStack();
    });
    afterAll(async () => {
      await stack?.close();
    });

    it('no CIBA (client notification endpoint), no back-channel logout, no request objects by reference', () => {
      expect(stack.metadata.backchannel_token_delivery_modes_supported).toBeUndefined();
      expect(stack.metadata.backchannel_logout_supported).not.toBe(true);
      expect(stack.metadata.request_uri_parameter_supported).not.toBe(true);
    });
  });
});
