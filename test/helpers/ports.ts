import { createServer } from 'node:net';

/**
 * A loopback port that was free a moment ago. The AS and the MCP server each need the
 * other's URL before they start, so one of the two ports must be known in advance.
 */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') return reject(new Error('no port'));
      server.close(() => resolve(address.port));
    });
  });
}
