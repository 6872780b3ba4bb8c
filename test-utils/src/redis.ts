import { connect } from 'node:net';

/** The machine's shared Redis (`.ci/run` starts it when it does not answer); tests use their own key prefix. */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Whether a Redis answers `PING` at `url` within `timeoutMs`. A raw RESP exchange over TCP, so
 * this workspace needs no Redis client.
 */
export function redisAnswers(url: string = TEST_REDIS_URL, timeoutMs = 2000): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port || 6379) });
    let reply = '';
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}

/**
 * Whether to run the Redis tests: when the shared Redis answers. Outside CI they are skipped
 * without it (never faked); under CI (`.ci/run` starts Redis) they run anyway, and fail if it is down.
 */
export async function shouldRunRedisTests(url: string = TEST_REDIS_URL): Promise<boolean> {
  return process.env.CI ? true : redisAnswers(url);
}
