/**
 * Drives one authorization server from its own process: obtains codes through the real
 * front channel (untimed), then times code exchanges and refreshes at a fixed concurrency.
 * Prints one JSON line: { exchangesPerSec, refreshesPerSec }.
 */
import { performance } from 'node:perf_hooks';
import { exchangeCode, fetchMetadata, obtainCode, pool, tokenRequest } from './oauth.mjs';
import { UserAgent } from './user-agent.mjs';

const input = JSON.parse(process.argv[2]);
const { issuer, clientId, redirectUri, resource, scope, codes, batch, concurrency, refreshes } = input;
const client = { clientId, redirectUri, resource };
const metadata = await fetchMetadata(issuer);
// One cookie jar per concurrent flow: a browser runs one interaction at a time per session.
const agents = Array.from({ length: 4 }, () => new UserAgent());

// Codes live about a minute: obtain and redeem them batch by batch, timing only the redemption.
let exchangeMs = 0;
let exchanged = 0;
const refreshTokens = [];
while (exchanged < codes) {
  const n = Math.min(batch, codes - exchanged);
  const obtained = await pool(n, agents.length, (_, w) => obtainCode({ metadata, ...client, scope, userAgent: agents[w] }));
  const start = performance.now();
  const tokens = await pool(n, concurrency, (i) => exchangeCode(metadata, client, obtained[i]));
  exchangeMs += performance.now() - start;
  exchanged += n;
  for (const t of tokens) {
    if (!t.refresh_token) throw new Error('no refresh token issued');
    refreshTokens.push(t.refresh_token);
  }
}

// Refresh chains: each chain rotates its own refresh token, `concurrency` chains at once.
const chains = refreshTokens.slice(0, concurrency);
const perChain = Math.ceil(refreshes / chains.length);
const start = performance.now();
await Promise.all(
  chains.map(async (first) => {
    let rt = first;
    for (let i = 0; i < perChain; i++) {
      const t = await tokenRequest(metadata, { grant_type: 'refresh_token', client_id: clientId, refresh_token: rt, resource });
      if (!t.refresh_token) throw new Error('refresh did not rotate the refresh token');
      rt = t.refresh_token;
    }
  }),
);
const refreshMs = performance.now() - start;
process.stdout.write(
  `${JSON.stringify({ exchangesPerSec: (exchanged * 1000) / exchangeMs, refreshesPerSec: (chains.length * perChain * 1000) / refreshMs })}\n`,
);
