/**
 * Case 5 — Client ID Metadata Documents: a client's first authorization (authorize → code →
 * token) when the AS has never seen its metadata document (cold: the AS fetches it over HTTPS)
 * vs when the document is already in the AS's cache (warm), each with a fresh browser session.
 * The document host is the testing kit's HTTPS host on 127.0.0.1 with a self-signed certificate,
 * trusted through the AS's dev-only private-network allowance.
 */
import { performance } from 'node:perf_hooks';
import { startClientMetadataHost } from '@mcp-auth-kit/testing';
import { startBenchAs } from '../lib/as.mjs';
import { exchangeCode, obtainCode } from '../lib/oauth.mjs';
import { closeAll } from '../lib/servers.mjs';

const REDIRECT = 'http://127.0.0.1/callback';

export async function runCimd({ rounds, flowsPerRound }) {
  const resource = 'http://localhost:3000/mcp';
  const closers = [];
  try {
    const host = await startClientMetadataHost();
    closers.push(() => host.close());
    const as = await startBenchAs({
      resource,
      cimd: { allowPrivateNetwork: true, extraCaCertificates: host.certificate.cert },
    });
    closers.push(() => as.close());

    let docs = 0;
    const publish = () => {
      const path = `/clients/bench-${++docs}.json`;
      const clientId = host.publish(path, {
        client_name: `bench CIMD client ${docs}`,
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      });
      return { path, clientId };
    };
    const flow = async (clientId) => {
      const client = { clientId, redirectUri: REDIRECT, resource };
      const start = performance.now();
      const tokens = await exchangeCode(as.metadata, client, await obtainCode({ metadata: as.metadata, ...client, scope: 'notes:read' }));
      if (!tokens.access_token) throw new Error('no access token');
      return performance.now() - start;
    };

    const warm = publish();
    await flow(warm.clientId);
    if (host.fetchCount(warm.path) < 1) throw new Error('the AS never fetched the client metadata document');
    // A cold flow to warm the JIT and the AS's HTTPS connection handling too.
    await flow(publish().clientId);

    const rows = [
      { label: 'first authorization, cold document cache', unit: 'ms', values: [] },
      { label: 'first authorization, warm document cache', unit: 'ms', values: [] },
      { label: 'document fetches per cold flow', unit: 'count', values: [] },
      { label: 'document fetches per warm flow', unit: 'count', values: [] },
    ];
    for (let round = 0; round < rounds; round++) {
      const sums = [0, 0];
      const fetches = [0, 0];
      for (let f = 0; f < flowsPerRound; f++) {
        for (let k = 0; k < 2; k++) {
          const kind = (k + f + round) % 2;
          const doc = kind === 0 ? publish() : warm;
          const before = host.fetchCount(doc.path);
          sums[kind] += await flow(doc.clientId);
          fetches[kind] += host.fetchCount(doc.path) - before;
        }
      }
      rows[0].values[round] = sums[0] / flowsPerRound;
      rows[1].values[round] = sums[1] / flowsPerRound;
      rows[2].values[round] = fetches[0] / flowsPerRound;
      rows[3].values[round] = fetches[1] / flowsPerRound;
    }
    return {
      title: `5. CIMD — first authorization (authorize + token), ${flowsPerRound} flows per kind per round, ${rounds} rounds`,
      notes: [
        'Cold: a never-seen https client_id on a loopback HTTPS host (dev-only private-network allowance); warm: a client_id the AS fetched before. Fresh cookie jar per flow.',
      ],
      rows,
      ratios: [{ label: 'cold / warm', of: [rows[0].label, rows[1].label] }],
    };
  } finally {
    await closeAll(closers);
  }
}
