import { connect, createServer } from 'node:net';

/**
 * A loopback port that was free a moment ago, for a process that must be told its port up front.
 * Picked at random below the kernel's ephemeral range (32768+ here): a port from that range can
 * be taken again at once by any outgoing connection or `listen(0)` of a parallel test, which
 * made the child's later `listen` fail with EADDRINUSE. Tried until one binds.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (await canListen(port)) return port;
  }
  throw new Error('no free loopback port found in 20000-31999');
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Whether something accepts TCP connections on host:port (loopback only). */
export function isListening(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
