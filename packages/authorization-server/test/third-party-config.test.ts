/**
 * Issue 41: the token vault's configuration (`thirdParty`, `clients[].resource`), checked with the
 * rest of the configuration: every problem in one ConfigError, and the defaults from one tree.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '@mcp-auth-kit/protocol';
import { createAuthorizationServer } from '../src/server.js';
import { configProblems, resolveConfig, type AuthorizationServerConfig } from '../src/config.js';
import { silentLogger } from '../src/ops/logger.js';
import { DEFAULTS } from '../src/config/defaults.js';

const MCP = 'http://localhost:3000/mcp';
const KEY = Buffer.alloc(32, 1).toString('base64url');
const drive = {
  issuer: 'http://127.0.0.1:4000',
  clientId: 'mcp-auth-kit',
  clientSecret: 'drive-secret',
  scopes: ['files.read'],
  resources: [MCP],
};
const base: AuthorizationServerConfig = {
  issuer: 'http://localhost:9000',
  resources: [{ resource: MCP, scopes: { 'notes:read': 'Read' } }],
  storage: { kind: 'memory' },
  logger: silentLogger,
};
const problemsOf = (extra: Record<string, unknown>) => configProblems({ ...base, ...extra }).join('\n');

describe('thirdParty configuration (issue 41)', () => {
  it('a valid provider resolves over the defaults tree', () => {
    const resolved = resolveConfig({
      ...base,
      thirdParty: { providers: { drive } },
      clients: [
        {
          client_id: 'notes',
          client_secret: 'notes-secret-0123456789',
          resource: MCP,
          redirect_uris: [],
          response_types: [],
          grant_types: ['client_credentials'],
        },
      ],
    });
    expect(resolved.thirdParty).toEqual({
      providers: {
        drive: {
          ...drive,
          displayName: 'drive',
          tokenEndpointAuthMethod: DEFAULTS.thirdParty.providers.tokenEndpointAuthMethod,
          allowPrivateNetwork: false,
        },
      },
      previousEncryptionKeys: [],
      connectTicketTTL: DEFAULTS.thirdParty.connectTicketTTL,
    });
    expect(DEFAULTS.thirdParty.connectTicketTTL).toBe(600);
  });

  it('providers: name, endpoints (discovery or both explicit), https (http only for loopback on a loopback AS), client authentication, scopes, resources', () => {
    const text = problemsOf({
      thirdParty: {
        providers: {
          'Bad Name': drive,
          none: { ...drive, issuer: undefined },
          half: { ...drive, issuer: undefined, authorizationEndpoint: 'https://half.example/authorize' },
          plain: { ...drive, issuer: 'http://drive.example' },
          nosecret: { ...drive, clientSecret: undefined },
          both: { ...drive, tokenEndpointAuthMethod: 'none' },
          scopes: { ...drive, scopes: ['two words'] },
          nowhere: { ...drive, resources: ['https://other.example/mcp'] },
          empty: { ...drive, resources: [] },
          shown: { ...drive, displayName: 'line\nbreak' },
        },
      },
    });
    expect(text).toMatch(/thirdParty\.providers\.Bad Name: the name must match/);
    expect(text).toMatch(/thirdParty\.providers\.none: set issuer \(discovery\), or authorizationEndpoint and tokenEndpoint/);
    expect(text).toMatch(/thirdParty\.providers\.half: set both authorizationEndpoint and tokenEndpoint, or neither/);
    expect(text).toMatch(/thirdParty\.providers\.plain\.issuer: must use https/);
    expect(text).toMatch(/thirdParty\.providers\.nosecret\.clientSecret: required for client_secret_basic/);
    expect(text).toMatch(/thirdParty\.providers\.both\.clientSecret: not used with tokenEndpointAuthMethod "none"/);
    expect(text).toMatch(/thirdParty\.providers\.scopes\.scopes: must be an array of scope tokens/);
    expect(text).toMatch(
      /thirdParty\.providers\.nowhere\.resources: "https:\/\/other\.example\/mcp" is not one of resources\[\]\.resource/,
    );
    expect(text).toMatch(/thirdParty\.providers\.empty\.resources: must list the MCP servers/);
    expect(text).toMatch(/thirdParty\.providers\.shown\.displayName: must be a non-empty display name/);
    // explicit endpoints need no issuer; a public client at the provider needs no secret
    expect(
      problemsOf({
        thirdParty: {
          providers: {
            drive: {
              ...drive,
              issuer: undefined,
              authorizationEndpoint: 'https://d.example/a',
              tokenEndpoint: 'https://d.example/t',
              clientSecret: undefined,
              tokenEndpointAuthMethod: 'none',
            },
          },
        },
      }),
    ).toBe('');
  });

  it('keys: 32 bytes base64url; previous keys only with a current one; required in production; the ticket lifetime bounded', () => {
    const text = problemsOf({
      thirdParty: { providers: { drive }, encryptionKey: 'too-short', previousEncryptionKeys: ['x'], connectTicketTTL: 5 },
    });
    expect(text).toMatch(/thirdParty\.encryptionKey: must be 32 bytes encoded as base64url/);
    expect(text).toMatch(/thirdParty\.previousEncryptionKeys: each must be 32 bytes/);
    expect(text).toMatch(/thirdParty\.connectTicketTTL: must be an integer from 60 to 3600/);
    expect(problemsOf({ thirdParty: { providers: { drive }, previousEncryptionKeys: [KEY] } })).toMatch(/only with encryptionKey/);
    expect(problemsOf({ thirdParty: { providers: {} } })).toMatch(/thirdParty\.providers: must name at least one provider/);
    expect(problemsOf({ thirdParty: { providers: { drive }, encryptionKey: KEY, previousEncryptionKeys: [KEY] } })).toBe('');
  });

  it('production refuses to start without the encryption key, in one ConfigError with every other problem', async () => {
    const error = (await createAuthorizationServer({
      ...base,
      issuer: 'https://auth.example',
      production: true,
      storage: { kind: 'memory' },
      thirdParty: { providers: { drive: { ...drive, issuer: 'https://drive.example' } } },
    }).catch((e: unknown) => e)) as ConfigError;
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.problems.join('\n')).toMatch(/thirdParty\.encryptionKey: required in production/);
    expect(error.problems.join('\n')).toMatch(/storage: the memory store/);
  });

  it('clients[].resource: a configured resource, a confidential client, not DPoP-bound only (RFC 8693 §2.1, RFC 9449 §5.2)', () => {
    const client = { client_secret: 'secret-0123456789abcdef', redirect_uris: [], response_types: [], grant_types: ['client_credentials'] };
    const text = problemsOf({
      clients: [
        { ...client, client_id: 'a', resource: 'https://unknown.example/mcp' },
        { client_id: 'b', resource: MCP, token_endpoint_auth_method: 'none', redirect_uris: ['http://127.0.0.1/cb'] },
        { ...client, client_id: 'c', resource: MCP, dpop_bound_access_tokens: true },
      ],
    });
    expect(text).toMatch(/clients\[0\]\.resource: must be one of resources\[\]\.resource/);
    expect(text).toMatch(/clients\[1\]\.resource: a public client cannot exchange tokens/);
    expect(text).toMatch(/clients\[2\]\.resource: not with dpop_bound_access_tokens/);
  });
});
