/** Production mode: what is fine on a laptop is refused on a server, each with how to fix it. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configProblems } from './helpers/config.js';
import { createAuthorizationServer, type AuthorizationServerConfig } from '../src/index.js';
import { openStore } from '../src/storage/index.js';
import { silentLogger } from '../src/ops/logger.js';

const resources = [{ resource: 'https://mcp.example.com/mcp', scopes: { 'notes:read': 'Read' } }];
const base: AuthorizationServerConfig = {
  issuer: 'https://auth.example.com',
  resources,
  storage: { kind: 'sqlite', file: '/nonexistent/unused.sqlite' },
  production: true,
};

describe('production mode refusals', () => {
  it('a production configuration (https issuer, persistent store) passes', () => {
    expect(configProblems(base)).toEqual([]);
    expect(configProblems({ ...base, storage: { kind: 'postgres', url: 'postgres://u@127.0.0.1/db' } })).toEqual([]);
  });

  it('DEV_AUTO_LOGIN is refused, even for a loopback issuer, and the message says what to unset', () => {
    const problems = configProblems({ ...base, issuer: 'http://localhost:9000', devAutoLogin: 'demo' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/devAutoLogin \(DEV_AUTO_LOGIN\): dev-only switch refused in production; unset it/);
  });

  it('CIMD_ALLOW_PRIVATE_NETWORK is refused, even for a loopback issuer', () => {
    const problems = configProblems({ ...base, issuer: 'http://127.0.0.1:9000', cimd: { allowPrivateNetwork: true } });
    expect(problems).toEqual([
      expect.stringMatching(/cimd\.allowPrivateNetwork \(CIMD_ALLOW_PRIVATE_NETWORK\): dev-only switch refused in production; unset it/),
    ]);
  });

  it('the memory store (no persistent keys, clients or grants) is refused, as config and as an open Store', async () => {
    expect(configProblems({ ...base, storage: { kind: 'memory' } })).toEqual([
      expect.stringMatching(/^storage: the memory store loses .* signing keys on restart; set DATABASE_URL=postgres:\/\//),
    ]);
    const store = await openStore({ kind: 'memory' });
    try {
      await expect(createAuthorizationServer({ ...base, storage: store, logger: silentLogger })).rejects.toThrow(/memory store/);
    } finally {
      await store.close();
    }
  });

  it('an http issuer that is not loopback is refused with how to fix it', () => {
    const problems = configProblems({ ...base, issuer: 'http://auth.example.com' });
    expect(problems).toEqual([
      expect.stringMatching(/issuer: must use https .*terminate TLS at a proxy and set trustProxy \/ TRUST_PROXY=1/),
    ]);
  });

  it('every problem is listed at once', () => {
    const problems = configProblems({
      ...base,
      issuer: 'http://auth.example.com',
      devAutoLogin: 'demo',
      cimd: { allowPrivateNetwork: true },
      storage: { kind: 'memory' },
    });
    expect(problems.join('\n')).toMatch(/issuer: must use https/);
    expect(problems.join('\n')).toMatch(/DEV_AUTO_LOGIN\): dev-only switch refused in production/);
    expect(problems.join('\n')).toMatch(/CIMD_ALLOW_PRIVATE_NETWORK\): dev-only switch refused in production/);
    expect(problems.join('\n')).toMatch(/memory store/);
  });

  it('issue 46 item 9: an issuer with user information is refused (RFC 8414 §2), never echoing it', () => {
    for (const issuer of ['https://user:pw-123456@auth.example.com', 'https://user@auth.example.com', 'https://@auth.example.com']) {
      const problems = configProblems({ ...base, issuer });
      expect(problems, issuer).toEqual([expect.stringMatching(/^issuer: must not contain user information \(credentials\)/)]);
      expect(problems.join('\n')).not.toContain('pw-123456');
    }
  });

  it('issue 46 item 9: a loopback http issuer is refused while listening on an address reachable from outside', () => {
    for (const host of ['0.0.0.0', '::', '10.1.2.3']) {
      const problems = configProblems({ ...base, issuer: 'http://localhost:9000', listenHosts: ['127.0.0.1', host] });
      expect(problems, host).toEqual([
        expect.stringMatching(
          new RegExp(`^issuer: the http issuer http://localhost:9000 is refused in production while the server listens on ${host}`),
        ),
      ]);
    }
    const withCredentials = configProblems({ ...base, issuer: 'http://u:pw-123456@localhost:9000', listenHosts: ['0.0.0.0'] });
    expect(withCredentials.join('\n')).not.toContain('pw-123456');
    expect(configProblems({ ...base, issuer: 'http://localhost:9000', listenHosts: ['127.0.0.1', '::1'] })).toEqual([]);
    expect(configProblems({ ...base, issuer: 'https://auth.example.com', listenHosts: ['0.0.0.0'] })).toEqual([]);
  });

  it('issue 46 item 1: outside production, dev switches are refused while listening on an address reachable from outside, whatever the issuer', () => {
    const dev = { ...base, production: false, issuer: 'http://localhost:9000', devAutoLogin: 'demo', cimd: { allowPrivateNetwork: true } };
    for (const host of ['0.0.0.0', '::', '192.168.1.20', 'auth.example.com']) {
      const problems = configProblems({ ...dev, listenHosts: [host] });
      expect(problems, host).toEqual([
        expect.stringMatching(
          /^devAutoLogin \(DEV_AUTO_LOGIN\): dev-only switch refused because the server listens on .* reachable from outside/,
        ),
        expect.stringMatching(
          /^cimd\.allowPrivateNetwork \(CIMD_ALLOW_PRIVATE_NETWORK\): dev-only switch refused because the server listens on/,
        ),
      ]);
    }
    expect(configProblems({ ...dev, listenHosts: ['127.0.0.1', '::1'] })).toEqual([]);
    expect(configProblems({ ...dev, listenHosts: ['localhost'] })).toEqual([]);
  });

  it('outside production the loopback dev setup is allowed (runtime contract)', () => {
    expect(
      configProblems({
        ...base,
        production: false,
        issuer: 'http://localhost:9000',
        devAutoLogin: 'demo',
        cimd: { allowPrivateNetwork: true },
        storage: { kind: 'memory' },
      }),
    ).toEqual([]);
  });

  it('a production server starts on SQLite with an https issuer, and warns while /metrics has no token', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ops-prod-'));
    const warnings: string[] = [];
    const logger = { ...silentLogger, warn: (m: string) => void warnings.push(m) };
    try {
      const open = await createAuthorizationServer({ ...base, storage: { kind: 'sqlite', file: join(dir, 'as.sqlite') }, logger });
      await open.close();
      expect(warnings.filter((w) => w.includes('/metrics is open'))).toHaveLength(1);
      warnings.length = 0;
      const guarded = await createAuthorizationServer({
        ...base,
        storage: { kind: 'sqlite', file: join(dir, 'as.sqlite') },
        logger,
        metrics: { token: 'scrape-token-0123456789' },
      });
      await guarded.close();
      expect(warnings.filter((w) => w.includes('/metrics is open'))).toHaveLength(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
