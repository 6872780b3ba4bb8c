import { describe, expect, it } from 'vitest';
import { assertClientBoundTo, boundClient, boundRecord, credentialProblems } from '../src/credential-binding.js';
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

  it('credentialProblems: issuers required and checked; http only on loopback unless allowed; every problem at once', () => {
    expect(credentialProblems({ preRegistered: [{ client_id: 'p', issuer: 'http://as.example' }] }, {})).toEqual([
      expect.stringContaining('"preRegistered[0].issuer"'),
    ]);
    expect(
      credentialProblems({ preRegistered: [{ client_id: 'p', issuer: 'http://as.example' }] }, { allowInsecureRequests: true }),
    ).toEqual([]);
    expect(credentialProblems({ preRegistered: [{ client_id: 'p', issuer: 'http://localhost:9000' }] }, {})).toEqual([]);
    expect(credentialProblems({ preRegistered: {} as never }, {})).toEqual(['"preRegistered" must be an array']);
    expect(credentialProblems({ clientCredentials: null as never }, {})).toEqual(['"clientCredentials" must be an object']);
    expect(credentialProblems({}, {})).toEqual([]);
    // RFC 8414 §2 and MCP Authorization Server Binding, all reported together
    expect(
      credentialProblems(
        {
          clientCredentials: { client_id: '', issuer: 'https://as.example?tenant=1' },
          jwtBearer: { client_id: 'j', issuer: undefined, assertion: 'not a function' },
        },
        {},
      ),
    ).toEqual([
      '"clientCredentials.client_id" is required',
      '"clientCredentials.issuer" must be an issuer identifier without query or fragment (RFC 8414 §2)',
      expect.stringMatching(/^"jwtBearer.issuer" is required: /),
      '"jwtBearer.assertion" must be a function',
    ]);
  });
});
