import { describe, expect, it } from 'vitest';
import { assertClientBoundTo, assertCredentialsBound, boundClient, boundRecord } from '../src/credential-binding.js';
import { ERR, type ClientInformation, type ServerBinding, type StoredTokens } from '../src/index.js';

// MCP 2026-07-28 client-registration §Authorization Server Binding.
const AS = 'https://as.example';
const binding: ServerBinding = {
  server: 'https://mcp.example/mcp',
  resource: 'https://mcp.example/mcp',
  issuer: AS,
  as_metadata: { issuer: AS, token_endpoint: `${AS}/token` },
};
const client: ClientInformation = { issuer: AS, client_id: 'c', client_secret: 's', source: 'dcr' };

describe('credential binding', () => {
  it('assertClientBoundTo: client, binding and AS metadata must name one issuer', () => {
    expect(() => assertClientBoundTo(binding, client)).not.toThrow();
    expect(() => assertClientBoundTo(binding, { ...client, issuer: 'https://evil.example' })).toThrowError(
      expect.objectContaining({ code: ERR.AS_MISMATCH }),
    );
    expect(() =>
      assertClientBoundTo(
        { ...binding, as_metadata: { issuer: 'https://evil.example', token_endpoint: 'https://evil.example/token' } },
        client,
      ),
    ).toThrowError(expect.objectContaining({ code: ERR.AS_MISMATCH }));
    expect(() => assertClientBoundTo({ ...binding, issuer: 'https://evil.example' }, client)).toThrowError(
      expect.objectContaining({ code: ERR.AS_MISMATCH }),
    );
  });

  it('boundRecord: a stored record is used only for the (issuer, resource) it names', () => {
    const tokens: StoredTokens = { issuer: AS, resource: binding.resource, access_token: 'a', token_type: 'Bearer', client_id: 'c' };
    expect(boundRecord(tokens, binding)).toBe(tokens);
    expect(boundRecord({ ...tokens, issuer: 'https://evil.example' }, binding)).toBeUndefined();
    expect(boundRecord({ ...tokens, resource: 'https://mcp.example/other' }, binding)).toBeUndefined();
    expect(boundRecord(undefined, binding)).toBeUndefined();
  });

  it('boundClient: a stored registration is used only with the issuer it names', () => {
    expect(boundClient(client, AS)).toBe(client);
    expect(boundClient(client, 'https://evil.example')).toBeUndefined();
    expect(boundClient(undefined, AS)).toBeUndefined();
  });

  it('assertCredentialsBound: issuers required and checked; http only on loopback unless allowed', () => {
    expect(() => assertCredentialsBound({ preRegistered: [{ client_id: 'p', issuer: 'http://as.example' }] }, {})).toThrowError(
      expect.objectContaining({ code: ERR.INVALID_ARGUMENT }),
    );
    expect(() =>
      assertCredentialsBound({ preRegistered: [{ client_id: 'p', issuer: 'http://as.example' }] }, { allowInsecureRequests: true }),
    ).not.toThrow();
    expect(() => assertCredentialsBound({ preRegistered: [{ client_id: 'p', issuer: 'http://localhost:9000' }] }, {})).not.toThrow();
    expect(() => assertCredentialsBound({ preRegistered: {} as never }, {})).toThrowError(
      expect.objectContaining({ code: ERR.INVALID_ARGUMENT }),
    );
    expect(() => assertCredentialsBound({ clientCredentials: null as never }, {})).toThrowError(
      expect.objectContaining({ code: ERR.INVALID_ARGUMENT }),
    );
    expect(() => assertCredentialsBound({}, {})).not.toThrow();
  });
});
