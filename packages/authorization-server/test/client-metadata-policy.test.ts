import type Provider from 'oidc-provider';
import { describe, expect, it } from 'vitest';
import {
  applyMetadataPolicy,
  fieldRule,
  KNOWN_FIELDS,
  METADATA_SOURCES,
  RESOURCE_SCOPE_PROPERTY,
  USERLESS_GRANTS,
  type FieldRule,
  type MetadataSource,
} from '../src/clients/client-metadata-policy.js';
import { metadataSource } from '../src/clients/client-policy.js';
import { validateConfig } from '../src/config.js';
import { RESOURCE, type RunningAs } from './helpers/as.js';
import { startAsForDescribe } from './helpers/for-describe.js';

// Columns: operator, registration (RFC 7591 body), client_update (RFC 7592 body), cimd (document), stored (DCR record).
type Expected = [FieldRule, FieldRule, FieldRule, FieldRule, FieldRule];
const all = (rule: FieldRule): Expected => [rule, rule, rule, rule, rule];

/** The decisions, restated field by field: a change to the policy must change this table too. */
const EXPECTED: Record<string, Expected> = {
  client_id: ['allow', 'issued', 'allow', 'allow', 'allow'],
  client_secret: ['allow', 'issued', 'issued', 'reject', 'allow'],
  client_secret_expires_at: ['allow', 'issued', 'issued', 'reject', 'allow'],
  client_id_issued_at: ['allow', 'issued', 'issued', 'drop', 'allow'],
  client_name: all('allow'),
  client_uri: all('allow'),
  logo_uri: all('allow'),
  policy_uri: all('allow'),
  tos_uri: all('allow'),
  contacts: all('allow'),
  redirect_uris: all('allow'),
  response_types: all('allow'),
  response_modes: all('allow'),
  application_type: all('allow'),
  grant_types: all('allow'),
  token_endpoint_auth_method: all('allow'),
  token_endpoint_auth_signing_alg: all('allow'),
  jwks: all('allow'),
  jwks_uri: all('allow'),
  scope: all('allow'),
  id_token_signed_response_alg: all('allow'),
  require_auth_time: all('allow'),
  default_max_age: all('allow'),
  default_acr_values: all('allow'),
  subject_type: all('allow'),
  dpop_bound_access_tokens: all('allow'),
  require_pushed_authorization_requests: all('allow'),
  sector_identifier_uri: ['allow', 'drop', 'drop', 'drop', 'drop'],
  initiate_login_uri: ['allow', 'drop', 'drop', 'drop', 'drop'],
  [RESOURCE_SCOPE_PROPERTY]: ['reject', 'reject', 'reject', 'reject', 'drop'],
  // Not recognised by oidc-provider (it strips these before the policy runs): dropped everywhere.
  software_id: all('drop'),
  some_vendor_field: all('drop'),
  post_logout_redirect_uris: all('drop'),
};

describe('client metadata policy: every field × every source (RFC 7591 §2, §3.2.2; RFC 6749 §4.4)', () => {
  it('the sources are the five the table documents', () => {
    expect(METADATA_SOURCES).toEqual(['operator', 'registration', 'client_update', 'cimd', 'stored']);
  });

  for (const [field, expected] of Object.entries(EXPECTED)) {
    it(`${field}: ${METADATA_SOURCES.map((s, i) => `${s}=${expected[i]}`).join(', ')}`, () => {
      expect(METADATA_SOURCES.map((source) => fieldRule(source, field))).toEqual(expected);
    });
  }

  it('the table test covers every field the policy names', () => {
    expect(KNOWN_FIELDS.filter((f) => !(f in EXPECTED))).toEqual([]);
  });

  it('fields of the prototype chain are not fields (no "constructor" / "__proto__" lookups)', () => {
    for (const source of METADATA_SOURCES) {
      expect(fieldRule(source, 'constructor')).toBe('drop');
      expect(fieldRule(source, '__proto__')).toBe('drop');
      expect(fieldRule(source, 'hasOwnProperty')).toBe('drop');
    }
  });
});

describe('client metadata policy: grants without a user (RFC 6749 §4.4: confidential, known clients only)', () => {
  const authMethods = ['none', 'client_secret_basic', 'client_secret_post', 'private_key_jwt'] as const;
  /** operator: allowed when it authenticates; cimd: the grant value is dropped; others: refused. */
  const expectation = (source: MetadataSource, method: string): 'allow' | 'drop' | 'reject' =>
    source === 'operator' ? (method === 'none' ? 'reject' : 'allow') : source === 'cimd' ? 'drop' : 'reject';

  for (const grant of USERLESS_GRANTS) {
    for (const source of METADATA_SOURCES) {
      for (const method of authMethods) {
        const expected = expectation(source, method);
        it(`${source} + ${method} + ${grant} → ${expected}`, () => {
          const metadata: Record<string, unknown> = {
            client_id: 'c',
            token_endpoint_auth_method: method,
            grant_types: ['authorization_code', grant],
          };
          const refusals = applyMetadataPolicy(source, metadata);
          if (expected === 'reject') {
            expect(refusals).toHaveLength(1);
            expect(refusals[0]).toContain(grant);
          } else {
            expect(refusals).toEqual([]);
            expect(metadata.grant_types).toEqual(expected === 'allow' ? ['authorization_code', grant] : ['authorization_code']);
          }
        });
      }
    }
  }

  it('user-delegated grants are untouched for every source', () => {
    for (const source of METADATA_SOURCES) {
      const metadata: Record<string, unknown> = {
        token_endpoint_auth_method: 'none',
        grant_types: ['authorization_code', 'refresh_token'],
      };
      expect(applyMetadataPolicy(source, metadata)).toEqual([]);
      expect(metadata.grant_types).toEqual(['authorization_code', 'refresh_token']);
    }
  });

  it('applyMetadataPolicy drops what the table drops and names what it rejects', () => {
    const metadata: Record<string, unknown> = {
      client_id: 'https://app.example/c.json',
      client_name: 'x',
      sector_identifier_uri: 'https://attacker.example/s.json',
      client_id_issued_at: 1,
      [RESOURCE_SCOPE_PROPERTY]: 'notes:write',
    };
    const refusals = applyMetadataPolicy('cimd', metadata);
    expect(refusals).toEqual([expect.stringContaining(RESOURCE_SCOPE_PROPERTY)]);
    expect(metadata).not.toHaveProperty('sector_identifier_uri');
    expect(metadata).not.toHaveProperty('client_id_issued_at');
    expect(metadata.client_name).toBe('x');

    const stored: Record<string, unknown> = { client_id: 'abc', [RESOURCE_SCOPE_PROPERTY]: 'notes:write' };
    expect(applyMetadataPolicy('stored', stored)).toEqual([]);
    expect(stored).not.toHaveProperty(RESOURCE_SCOPE_PROPERTY);
  });
});

describe('client metadata policy: where the metadata came from', () => {
  const operators = new Set(['svc', 'https://operator.example/client.json']);
  it.each([
    [{ oidc: { route: 'registration' } }, 'generated-id', 'registration'],
    [{ oidc: { route: 'client_update' } }, 'generated-id', 'client_update'],
    [undefined, 'svc', 'operator'],
    [undefined, 'https://operator.example/client.json', 'operator'],
    [undefined, 'https://app.example/client.json', 'cimd'],
    [undefined, 'generated-id', 'stored'],
    [{ oidc: { route: 'token' } }, 'generated-id', 'stored'],
  ] as const)('ctx route %j, client_id %s → %s', (ctx, clientId, expected) => {
    expect(metadataSource(ctx, clientId, operators)).toBe(expected);
  });
});

describe('client metadata policy at start-up (validateConfig)', () => {
  const config = (client: Record<string, unknown>) => ({
    issuer: 'http://127.0.0.1:9000',
    resources: [{ resource: RESOURCE, scopes: { 'notes:read': 'r' } }],
    storage: { kind: 'memory' as const },
    clients: [client as never],
  });

  it('RFC 6749 §4.4: client_credentials with auth "none" is a configuration error', () => {
    expect(() =>
      validateConfig(config({ client_id: 'svc', grant_types: ['client_credentials'], token_endpoint_auth_method: 'none' })),
    ).toThrow(/clients\[0\]: client_credentials needs client authentication/);
  });

  it(`${RESOURCE_SCOPE_PROPERTY} in a configured client is a configuration error`, () => {
    expect(() =>
      validateConfig(config({ client_id: 'svc', client_secret: 's'.repeat(32), [RESOURCE_SCOPE_PROPERTY]: 'notes:read' })),
    ).toThrow(new RegExp(`clients\\[0\\]: ${RESOURCE_SCOPE_PROPERTY} is internal`));
  });

  it('a confidential machine client (default or explicit secret auth, or private_key_jwt) is accepted', () => {
    for (const method of [undefined, 'client_secret_basic', 'client_secret_post', 'private_key_jwt']) {
      expect(() =>
        validateConfig(
          config({
            client_id: 'svc',
            client_secret: 's'.repeat(32),
            grant_types: ['client_credentials'],
            token_endpoint_auth_method: method,
            scope: 'notes:read',
          }),
        ),
      ).not.toThrow();
    }
  });
});

describe('the policy and oidc-provider agree on the fields', () => {
  let t: RunningAs;
  startAsForDescribe({}, (started) => (t = started));

  // Test-only look into oidc-provider's internals: if an upgrade or a newly enabled feature makes
  // it recognise another client field, this fails until the table decides that field.
  it('every client field oidc-provider recognises (and our extra property) has a row in the table', async () => {
    const weakCache = 'oidc-provider/lib/helpers/weak_cache.js';
    const { default: instance } = (await import(weakCache)) as { default: (p: unknown) => Record<string, unknown> };
    void t.as.provider.Client; // builds the client schema, which records the recognised fields
    const state = instance(t.as.provider) as {
      RECOGNIZED_METADATA: string[];
      configuration: { extraClientMetadata: { properties: string[] } };
    };
    const fields = [...state.RECOGNIZED_METADATA, ...state.configuration.extraClientMetadata.properties];
    expect(fields.length).toBeGreaterThan(20);
    expect(fields.filter((f) => !KNOWN_FIELDS.includes(f))).toEqual([]);
  });
});

describe('token endpoint guard: grants without a user (defence in depth behind the policy)', () => {
  let t: RunningAs;
  startAsForDescribe(
    {
      clients: [
        {
          client_id: 'svc-secret',
          client_secret: 'svc-secret-0123456789abcdef',
          grant_types: ['client_credentials'],
          response_types: [],
          redirect_uris: [],
        },
      ],
    },
    (started) => (t = started),
  );

  /** A client object whose grant_types list client_credentials, as if the metadata policy had been bypassed. */
  const clientLike = (clientId: string, tokenEndpointAuthMethod: string) => {
    // the published type is a subset of oidc-provider's; the full one for this white-box check
    const provider = t.as.provider as unknown as Provider;
    return Object.assign(Object.create(provider.Client.prototype) as InstanceType<typeof provider.Client>, {
      clientId,
      tokenEndpointAuthMethod,
      grantTypes: ['authorization_code', 'client_credentials'],
    });
  };

  it('RFC 6749 §4.4: refused for a client the operator did not configure, even with private_key_jwt', () => {
    expect(clientLike('https://app.example/c.json', 'private_key_jwt').grantTypeAllowed('client_credentials')).toBe(false);
    expect(clientLike('dcr-generated-id', 'client_secret_basic').grantTypeAllowed('client_credentials')).toBe(false);
  });

  it('RFC 6749 §4.4: refused for a configured client that does not authenticate ("none")', () => {
    expect(clientLike('svc-secret', 'none').grantTypeAllowed('client_credentials')).toBe(false);
  });

  it('allowed for a configured client that authenticates; other grants are unaffected', () => {
    expect(clientLike('svc-secret', 'client_secret_basic').grantTypeAllowed('client_credentials')).toBe(true);
    expect(clientLike('https://app.example/c.json', 'none').grantTypeAllowed('authorization_code')).toBe(true);
    expect(clientLike('https://app.example/c.json', 'none').grantTypeAllowed('refresh_token')).toBe(false);
  });
});
