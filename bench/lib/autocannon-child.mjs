/**
 * Runs one autocannon measurement in its own process (so the load generator does not share an
 * event loop with the servers it measures) and prints the result as one JSON line.
 */
import autocannon from 'autocannon';

const { bearerTokens, ...options } = JSON.parse(process.argv[2]);
if (bearerTokens?.length) {
  // Each connection keeps one token of the set (the next one in turn), as an MCP client keeps
  // its access token on its connection until it refreshes.
  let next = 0;
  options.setupClient = (client) => {
    client.setHeaders({ ...options.headers, authorization: `Bearer ${bearerTokens[next++ % bearerTokens.length]}` });
  };
}
const result = await autocannon({ ...options, workers: undefined });
process.stdout.write(
  `${JSON.stringify({
    rps: result.requests.average,
    total: result.requests.total,
    duration: result.duration,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    latencyP50: result.latency.p50,
    latencyP99: result.latency.p99,
  })}\n`,
);
