import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig, printableConfig } from '../src/config.js';

/** Issue 41: the token vault's providers and key from the environment (THIRD_PARTY_PROVIDERS_FILE, THIRD_PARTY_ENCRYPTION_KEY). */
describe('auth-server app: third-party authorization from the environment', () => {
  const dir = mkdtempSync(join(tmpdir(), 'third-party-env-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const KEY = Buffer.alloc(32, 7).toString('base64url');
  const drive = {
    issuer: 'https://drive.example',
    clientId: 'mcp-auth-kit',
    clientSecret: 'drive-client-secret',
    scopes: ['files.read'],
    resources: ['http://localhost:3000/mcp'],
  };
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it('the providers file (a JSON object by name) and the key become thirdParty; --print-config masks the secrets', () => {
    const { config, problems } = loadConfig({
      THIRD_PARTY_PROVIDERS_FILE: file('providers.json', JSON.stringify({ drive })),
      THIRD_PARTY_ENCRYPTION_KEY: KEY,
    });
    expect(problems).toEqual([]);
    expect(config.authorizationServer?.thirdParty).toEqual({ providers: { drive }, encryptionKey: KEY });
    const printed = JSON.stringify(printableConfig(config));
    expect(printed).not.toContain(KEY);
    expect(printed).not.toContain('drive-client-secret');
  });

  it('a provider of the file replaces the config file’s provider of the same name; the others stay', () => {
    const configFile = file(
      'as.json',
      JSON.stringify({
        thirdParty: { providers: { drive: { ...drive, clientId: 'old' }, mail: { ...drive, issuer: 'https://mail.example' } } },
      }),
    );
    const { config, problems } = loadConfig({
      AS_CONFIG_FILE: configFile,
      THIRD_PARTY_PROVIDERS_FILE: file('p2.json', JSON.stringify({ drive })),
    });
    expect(problems).toEqual([]);
    expect(Object.keys(config.authorizationServer?.thirdParty?.providers ?? {})).toEqual(['drive', 'mail']);
    expect(config.authorizationServer?.thirdParty?.providers.drive?.clientId).toBe('mcp-auth-kit');
  });

  it('every problem is listed at start-up, the file never quoted: unreadable, not an object, a bad key, no providers', () => {
    expect(loadConfig({ THIRD_PARTY_PROVIDERS_FILE: join(dir, 'missing.json') }).problems.join('\n')).toMatch(
      /THIRD_PARTY_PROVIDERS_FILE: cannot read .*missing\.json \(ENOENT\)/,
    );
    const secretish = file('bad.json', '{ "drive": { "clientSecret": "s3cr3t-in-a-broken-file" ');
    const broken = loadConfig({ THIRD_PARTY_PROVIDERS_FILE: secretish }).problems.join('\n');
    expect(broken).toMatch(/not a JSON object of providers by name/);
    expect(broken).not.toContain('s3cr3t');
    expect(loadConfig({ THIRD_PARTY_PROVIDERS_FILE: file('list.json', '[]') }).problems.join('\n')).toMatch(/not a JSON object/);
    expect(loadConfig({ THIRD_PARTY_ENCRYPTION_KEY: KEY }).problems.join('\n')).toMatch(/third-party authorization needs providers/);
    const badKey = loadConfig({
      THIRD_PARTY_PROVIDERS_FILE: file('ok.json', JSON.stringify({ drive })),
      THIRD_PARTY_ENCRYPTION_KEY: 'short',
    });
    expect(badKey.problems.join('\n')).toMatch(/thirdParty\.encryptionKey: must be 32 bytes encoded as base64url/);
  });

  it('production refuses providers without THIRD_PARTY_ENCRYPTION_KEY (one ConfigError with the rest)', () => {
    const { problems } = loadConfig({
      NODE_ENV: 'production',
      AS_ISSUER: 'https://auth.example',
      MCP_RESOURCE: 'http://localhost:3000/mcp',
      THIRD_PARTY_PROVIDERS_FILE: file('prod.json', JSON.stringify({ drive })),
    });
    expect(problems.join('\n')).toMatch(/thirdParty\.encryptionKey: required in production .*THIRD_PARTY_ENCRYPTION_KEY/);
  });
});
