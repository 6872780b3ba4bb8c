/**
 * The two things the Redis-backed state needs from a client, as structural types: node-redis
 * (`redis` 5 or 6, the client the kit is tested with) fits them as it is, so this entry never
 * imports a Redis client itself and users without Redis install none.
 */

/** A connection that runs commands: node-redis's `sendCommand(['SET', …])`. */
export interface RedisCommandConnection {
  sendCommand(args: string[]): Promise<unknown>;
}

/**
 * A connection in subscriber mode (a separate one: RESP2 connections that subscribe run no other
 * command), e.g. `client.duplicate()` after `connect()`. node-redis resubscribes by itself after
 * a reconnect; what was published meanwhile is caught by the periodic resync.
 */
export interface RedisSubscriberConnection {
  subscribe(channel: string, listener: (message: string) => void): Promise<unknown>;
  unsubscribe(channel: string, listener: (message: string) => void): Promise<unknown>;
}

/** `SCAN MATCH` pattern of keys starting with `prefix` (glob characters escaped). */
export function scanPattern(prefix: string): string {
  return `${prefix.replace(/[*?[\]\\]/g, (c) => `\\${c}`)}*`;
}

/** Every key starting with `prefix`, by `SCAN` (never `KEYS`: it would block Redis). */
export async function scanKeys(connection: RedisCommandConnection, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  const match = scanPattern(prefix);
  let cursor = '0';
  do {
    const reply = (await connection.sendCommand(['SCAN', cursor, 'MATCH', match, 'COUNT', '1000'])) as [unknown, unknown];
    cursor = String(reply[0]);
    for (const key of reply[1] as unknown[]) keys.push(String(key));
  } while (cursor !== '0');
  return keys;
}
