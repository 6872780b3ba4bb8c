import { describe, expect, it } from 'vitest';
import { openStore } from '../src/storage/index.js';
import { decodeJwt, registerClient, startAs } from './helpers/as.js';
import { authorizeAuto, exchangeCode } from './helpers/flow.js';

async function issueToken(url: string) {
  const clientId = (await registerClient(url)).body.client_id;
  const flow = await authorizeAuto(url, clientId);
  const res = await exchangeCode(url, clientId, flow);
  expect(res.status).toBe(200);
  return decodeJwt(res.body.access_token);
}

describe('signing keys from the store', () => {
  it('RFC 7517 / RFC 9068: tokens are signed with the current key; after rotation the retired key stays published', async () => {
    const store = await openStore({ kind: 'memory' });
    try {
      const before = await store.keys.signingKeys();
      const currentKid = before.find((k) => k.status === 'current')!.jwk.kid;
      const a = await startAs({ devAutoLogin: 'alice', storage: store });
      const first = await issueToken(a.url);
      expect(first.header.kid).toBe(currentKid);
      await a.close();

      await store.keys.rotateSigningKeys(3600);
      const after = await store.keys.signingKeys();
      const newKid = after.find((k) => k.status === 'current')!.jwk.kid;
      expect(newKid).not.toBe(currentKid);

      const b = await startAs({ devAutoLogin: 'alice', storage: store });
      const second = await issueToken(b.url);
      expect(second.header.kid).toBe(newKid);
      const jwks = (await (await fetch(`${b.url}/jwks`)).json()) as { keys: Array<{ kid: string; d?: string }> };
      const kids = jwks.keys.map((k) => k.kid);
      expect(kids).toContain(currentKid);
      expect(kids).toContain(newKid);
      expect(jwks.keys.every((k) => k.d === undefined)).toBe(true);
      await b.close();
    } finally {
      await store.close();
    }
  });
});
