/**
 * Case 2 — token validation micro-benchmark, in process: our verify with the validated-token
 * cache off (every call verifies the ES256 signature) and on (a hit), jose's `jwtVerify` alone
 * with an imported key (the ceiling for any validator that verifies every request), and
 * decode-only (the floor). Within each round the cases alternate in slices of a few milliseconds.
 */
import { performance } from 'node:perf_hooks';
import { createResourceServer } from '@mcp-auth-kit/resource-server';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import { startBenchAs } from '../lib/as.mjs';
import { shuffledOrder } from '../lib/order.mjs';
import { closeAll } from '../lib/servers.mjs';

/** Mean µs per call of `fn` over about `ms` milliseconds (calls are awaited one after another). */
async function timePerCall(fn, ms) {
  const batch = 50;
  let calls = 0;
  const start = performance.now();
  let elapsed = 0;
  do {
    for (let i = 0; i < batch; i++) await fn();
    calls += batch;
    elapsed = performance.now() - start;
  } while (elapsed < ms);
  return (elapsed * 1000) / calls;
}

/**
 * Mean µs per call of each of `fns`, measured in short alternating slices (about `sliceMs` of
 * one, then of the next, …) until each has run about `ms` milliseconds: every case sees the same
 * moments of a shared CPU, so their ratio is not skewed by load that came and went between
 * two long samples. Each turn has a new order (lib/order.mjs), so no case always follows the
 * same one.
 */
export async function timeInterleaved(fns, ms, sliceMs = 5) {
  const spent = fns.map(() => 0);
  const calls = fns.map(() => 0);
  for (let turn = 0; spent.some((t) => t < ms); turn++) {
    for (const i of shuffledOrder(fns.length, turn)) {
      const start = performance.now();
      let elapsed = 0;
      do {
        for (let c = 0; c < 5; c++) await fns[i]();
        calls[i] += 5;
        elapsed = performance.now() - start;
      } while (elapsed < sliceMs);
      spent[i] += elapsed;
    }
  }
  return spent.map((t, i) => (t * 1000) / calls[i]);
}

export async function runValidation({ rounds, sampleMs }) {
  const resource = 'http://127.0.0.1:1/mcp';
  const as = await startBenchAs({ resource });
  const closers = [() => as.close()];
  try {
    const { access_token: token } = await as.issueTokens('notes:read');
    const options = { resource, authorizationServers: [as.issuer] };
    const cached = createResourceServer(options);
    const cold = createResourceServer({ ...options, cache: false });
    closers.push(
      () => cached.close(),
      () => cold.close(),
    );

    const { kid } = decodeProtectedHeader(token);
    const jwks = await (await fetch(as.metadata.jwks_uri)).json();
    const jwk = jwks.keys.find((k) => k.kid === kid);
    if (!jwk) throw new Error('signing key not in the JWKS');
    const key = await importJWK(jwk, 'ES256');
    const joseOptions = { issuer: as.issuer, audience: resource, typ: 'at+jwt', algorithms: ['ES256'] };
    // What an application typically writes (and case 1's SDK verifier uses): a remote JWKS set.
    const remoteSet = createRemoteJWKSet(new URL(as.metadata.jwks_uri));

    const cases = [
      ['ours, cache off (cold)', () => cold.verifyAccessToken(token)],
      ['ours, cache hit', () => cached.verifyAccessToken(token)],
      ['jose jwtVerify (imported key)', () => jwtVerify(token, key, joseOptions)],
      ['decode only (jose decodeJwt)', async () => decodeJwt(token)],
      ['jose jwtVerify (remote JWKS set)', () => jwtVerify(token, remoteSet, joseOptions)],
    ];
    // Every path must accept the token (and fetch its keys) before it is timed.
    for (const [label, fn] of cases) {
      const out = await fn();
      if (!out) throw new Error(`${label}: no result`);
      await timePerCall(fn, Math.min(200, sampleMs));
    }
    const rows = cases.map(([label]) => ({ label, unit: 'µs/call', values: [] }));
    for (let round = 0; round < rounds; round++) {
      const perCall = await timeInterleaved(
        cases.map(([, fn]) => fn),
        sampleMs,
      );
      for (const [i, us] of perCall.entries()) rows[i].values[round] = us;
    }
    const [coldRow, hitRow, joseRow, decodeRow, remoteRow] = rows.map((r) => r.label);
    return {
      title: `2. token validation — one ES256 access token from our AS, ${rounds} rounds × ${sampleMs} ms per case, alternating in 5 ms slices`,
      notes: [
        'Ratios are times: "jose / cache hit" is how many times faster a hit is; "cold / jose" our whole cold validation against jose\'s `jwtVerify` (below 1: faster; ours verifies the signature with node:crypto, jose with WebCrypto).',
      ],
      rows,
      ratios: [
        { label: 'jose / ours cache hit (speed-up)', of: [joseRow, hitRow], target: { op: '>=', value: 10 } },
        { label: 'ours cold / jose', of: [coldRow, joseRow], target: { op: '<=', value: 1.05 } },
        { label: 'ours cold / jose remote JWKS set', of: [coldRow, remoteRow] },
        { label: 'ours cache hit / decode only', of: [hitRow, decodeRow] },
      ],
    };
  } finally {
    await closeAll(closers);
  }
}
