import { describe, expect, it } from 'vitest';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { ProtocolError } from '@modelcontextprotocol/server';
import { ThirdPartyAuthorizationRequiredError, ThirdPartyTokenError, withThirdPartyAuthorization } from '../src/index.js';
import { processMetadata } from '../src/core.js';

// withThirdPartyAuthorization on its own: which answer each SDK context gets (the wire tests are
// third-party-sdk.test.ts). MCP 2025-11-25 client/elicitation "URL Elicitation Required Error";
// 2026-07-28 changelog items 7 and 11.

const required = () =>
  new ThirdPartyAuthorizationRequiredError({
    provider: 'drive',
    providerDisplayName: 'Drive',
    url: 'https://as.example/connect/t1',
    expiresIn: 600,
    elicitationId: '7a1c2f64-3c1e-4d5e-9a0b-1c2d3e4f5a6b',
  });
const failing = (err: Error) => withThirdPartyAuthorization(async (_args: unknown, _ctx: unknown) => Promise.reject(err));

const v1Extra = { requestId: 1, signal: new AbortController().signal, sendRequest: async () => ({}), sendNotification: async () => {} };
const v2Legacy = { mcpReq: { id: 1, method: 'tools/call' } };
const v2Modern = (inputResponses?: Record<string, unknown>) => ({
  mcpReq: {
    id: 1,
    method: 'tools/call',
    envelope: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' },
    ...(inputResponses !== undefined ? { inputResponses } : {}),
  },
});

async function thrown(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('no error');
    },
    (e: unknown) => e,
  );
}

describe('withThirdPartyAuthorization', () => {
  it('SDK v1 context: SDK v1’s UrlElicitationRequiredError (-32042, data.elicitations with elicitationId)', async () => {
    const err = (await thrown(failing(required())({}, v1Extra))) as McpError;
    expect(err).toBeInstanceOf(McpError);
    expect(err.code).toBe(-32042);
    expect(err.data).toEqual({
      elicitations: [
        {
          mode: 'url',
          elicitationId: '7a1c2f64-3c1e-4d5e-9a0b-1c2d3e4f5a6b',
          url: 'https://as.example/connect/t1',
          message: 'Connect your Drive account to continue',
        },
      ],
    });
  });

  it('SDK v2 context on the 2025-11-25 wire (no _meta envelope, or one naming 2025-11-25): SDK v2’s -32042', async () => {
    for (const ctx of [v2Legacy, { mcpReq: { envelope: { 'io.modelcontextprotocol/protocolVersion': '2025-11-25' } } }]) {
      const err = (await thrown(failing(required())({}, ctx))) as ProtocolError;
      expect(err).toBeInstanceOf(ProtocolError);
      expect(err.code).toBe(-32042);
      expect((err.data as { elicitations: unknown[] }).elicitations).toHaveLength(1);
    }
  });

  it('SDK v2 context on 2026-07-28: an InputRequiredResult (no elicitationId, requestState = the id by default)', async () => {
    await expect(failing(required())({}, v2Modern())).resolves.toEqual({
      resultType: 'input_required',
      inputRequests: {
        connect_drive: {
          method: 'elicitation/create',
          params: { mode: 'url', message: 'Connect your Drive account to continue', url: 'https://as.example/connect/t1' },
        },
      },
      requestState: '7a1c2f64-3c1e-4d5e-9a0b-1c2d3e4f5a6b',
    });
  });

  it('requestState: minted by the server’s own codec, or left out', async () => {
    const minted = withThirdPartyAuthorization(async (_ctx: unknown) => Promise.reject(required()), {
      requestState: (id) => `signed.${id}`,
    });
    await expect(minted(v2Modern())).resolves.toMatchObject({ requestState: 'signed.7a1c2f64-3c1e-4d5e-9a0b-1c2d3e4f5a6b' });
    const none = withThirdPartyAuthorization(async (_ctx: unknown) => Promise.reject(required()), { requestState: () => undefined });
    expect(await none(v2Modern())).not.toHaveProperty('requestState');
  });

  it('2026-07-28 retry whose inputResponses declined or cancelled the prompt: access_denied, not a new prompt', async () => {
    for (const action of ['decline', 'cancel']) {
      const err = (await thrown(failing(required())({}, v2Modern({ connect_drive: { action } })))) as ThirdPartyTokenError;
      expect(err).toBeInstanceOf(ThirdPartyTokenError);
      expect(err.code).toBe('access_denied');
    }
    // accepted, but still not connected (the page was left): asked again, with the new URL
    await expect(failing(required())({}, v2Modern({ connect_drive: { action: 'accept' } }))).resolves.toMatchObject({
      resultType: 'input_required',
    });
  });

  it('other errors, results and unknown contexts pass through unchanged', async () => {
    const refusal = new ThirdPartyTokenError('invalid_target', 'photos', '"photos" is not a provider this MCP server may use');
    await expect(thrown(failing(refusal)({}, v1Extra))).resolves.toBe(refusal);
    const plain = new Error('boom');
    await expect(thrown(failing(plain)({}, v2Modern()))).resolves.toBe(plain);
    const original = required();
    await expect(thrown(failing(original)({}, { something: 'else' }))).resolves.toBe(original);
    const ok = withThirdPartyAuthorization(async function (this: { n: number }, a: number) {
      return this.n + a;
    });
    await expect(ok.call({ n: 1 }, 2)).resolves.toBe(3);
  });
});

describe('processMetadata keeps token_endpoint (RFC 8414 §2) for the exchanges', () => {
  it('a URL is kept; anything else is dropped without failing the document (token checks need only jwks_uri)', () => {
    const issuer = 'https://as.example';
    expect(processMetadata(issuer, { issuer, jwks_uri: `${issuer}/jwks`, token_endpoint: `${issuer}/token` }).token_endpoint).toBe(
      `${issuer}/token`,
    );
    expect(processMetadata(issuer, { issuer, jwks_uri: `${issuer}/jwks`, token_endpoint: 42 })).toEqual({
      issuer,
      jwks_uri: `${issuer}/jwks`,
    });
  });
});
