/**
 * Drives several authorization servers (one per store) from its own process, interleaved: the
 * stores take turns batch by batch (the order rotating), so a load swing on a shared CPU hits
 * every store alike and their same-round ratio stays meaningful. For each store it obtains codes
 * through the real front channel (untimed), times their exchange at each of the given
 * concurrencies in turn, then times refresh chains in short turns.
 * Around every timed window it asks its parent (over the IPC channel, when there is one) to read
 * the CPU meters, and waits for the answer before it starts the clock.
 * Prints one JSON line: [{ exchangesPerSec: [per concurrency], refreshesPerSec, driverCpuPerExchange }, …]
 * in the order of `issuers` (CPU in µs).
 */
import { performance } from 'node:perf_hooks';
import { exchangeCode, fetchMetadata, obtainCode, pool, tokenRequest } from './oauth.mjs';
import { UserAgent } from './user-agent.mjs';

const input = JSON.parse(process.argv[2]);
const { issuers, clientId, redirectUri, resource, scope, codes, batch, concurrencies, refreshChains, refreshes, firstTurn = 0 } = input;
const client = { clientId, redirectUri, resource };
/** Refresh steps each chain takes per turn before the next store's turn. */
const REFRESH_TURN = 5;

const targets = await Promise.all(
  issuers.map(async (issuer) => ({
    metadata: await fetchMetadata(issuer),
    // One cookie jar per concurrent flow: a browser runs one interaction at a time per session.
    agents: Array.from({ length: 4 }, () => new UserAgent()),
    exchangeMs: concurrencies.map(() => 0),
    exchanged: concurrencies.map(() => 0),
    refreshMs: 0,
    refreshed: 0,
    refreshTokens: [],
    exchangeCpu: 0,
  })),
);

/** Tells the parent a timed window of `store` starts or stops, and waits until it has read its meters. */
function mark(message) {
  if (!process.send) return Promise.resolve();
  return new Promise((resolve) => {
    process.once('message', resolve);
    process.send(message);
  });
}

/** The targets in turn `turn`'s order: each store goes first as often as the others. */
const inTurn = (turn) => targets.map((_, k) => targets[(k + turn + firstTurn) % targets.length]);

// Codes live about a minute: obtain and redeem them batch by batch, timing only the redemption.
// `codes` exchanges per store at each concurrency; the order of the concurrencies rotates too.
for (let turn = 0, done = 0; done < codes; turn++) {
  const n = Math.min(batch, codes - done);
  for (const t of inTurn(turn)) {
    const store = targets.indexOf(t);
    for (let k = 0; k < concurrencies.length; k++) {
      const level = (k + turn + firstTurn) % concurrencies.length;
      const obtained = await pool(n, t.agents.length, (_, w) =>
        obtainCode({ metadata: t.metadata, ...client, scope, userAgent: t.agents[w] }),
      );
      await mark({ edge: 'start', store, level, phase: 'exchange' });
      const cpu = process.cpuUsage();
      const start = performance.now();
      const tokens = await pool(n, concurrencies[level], (i) => exchangeCode(t.metadata, client, obtained[i]));
      t.exchangeMs[level] += performance.now() - start;
      const used = process.cpuUsage(cpu);
      t.exchangeCpu += used.user + used.system;
      await mark({ edge: 'stop', store, level, phase: 'exchange', ops: n });
      t.exchanged[level] += n;
      for (const tok of tokens) {
        if (!tok.refresh_token) throw new Error('no refresh token issued');
        t.refreshTokens.push(tok.refresh_token);
      }
    }
  }
  done += n;
}

// Refresh chains: each chain rotates its own refresh token, `refreshChains` chains of a store at once.
const perChain = Math.ceil(refreshes / refreshChains);
for (const t of targets) t.chains = t.refreshTokens.slice(0, refreshChains);
for (let turn = 0, steps = 0; steps < perChain; turn++) {
  const n = Math.min(REFRESH_TURN, perChain - steps);
  for (const t of inTurn(turn)) {
    const start = performance.now();
    await Promise.all(
      t.chains.map(async (_, c) => {
        for (let i = 0; i < n; i++) {
          const tok = await tokenRequest(t.metadata, {
            grant_type: 'refresh_token',
            client_id: clientId,
            refresh_token: t.chains[c],
            resource,
          });
          if (!tok.refresh_token) throw new Error('refresh did not rotate the refresh token');
          t.chains[c] = tok.refresh_token;
        }
      }),
    );
    t.refreshMs += performance.now() - start;
    t.refreshed += t.chains.length * n;
  }
  steps += n;
}

process.stdout.write(
  `${JSON.stringify(
    targets.map((t) => ({
      exchangesPerSec: t.exchanged.map((count, level) => (count * 1000) / t.exchangeMs[level]),
      refreshesPerSec: (t.refreshed * 1000) / t.refreshMs,
      driverCpuPerExchange: t.exchangeCpu / t.exchanged.reduce((sum, count) => sum + count, 0),
    })),
  )}\n`,
);
// An open IPC channel would keep this process alive.
process.disconnect?.();
