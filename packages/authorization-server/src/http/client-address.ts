/**
 * The one derivation of "who is the client" for every decision keyed on its address (login
 * brakes, the registration rate limit, audit and access-log lines). Behind an appending proxy
 * (nginx `$proxy_add_x_forwarded_for`) the leftmost X-Forwarded-For entries are whatever the
 * client sent, so only the entries added by proxies we trust may be believed: express walks the
 * list from the right and stops at the first address that is not a trusted proxy.
 */
import { isIP } from 'node:net';
import type { Request } from 'express';

/**
 * `trustProxy`: how many proxies stand in front (a hop count), or their addresses / CIDRs (or
 * express's names `loopback`, `linklocal`, `uniquelocal`). `true` is exactly one hop: the
 * immediate peer is the proxy and the entry it appended is the client; never "trust every hop".
 */
export type TrustProxy = boolean | number | string | readonly string[];

/** The value for express's `trust proxy` setting; `false` = X-Forwarded-* ignored. */
export function trustProxySetting(value: TrustProxy | undefined): false | number | string[] {
  if (value === undefined || value === false || value === 0) return false;
  if (value === true) return 1;
  if (typeof value === 'number') return value;
  return (typeof value === 'string' ? value.split(',') : [...value]).map((s) => s.trim()).filter(Boolean);
}

/** Hop count the X-Forwarded-For list may be read back to, for koa (`app.maxIpsCount`); 0 = no limit. */
export function forwardedHops(value: TrustProxy | undefined): number {
  const setting = trustProxySetting(value);
  return typeof setting === 'number' ? setting : 0;
}

const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function validEntry(entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true;
  const [address, prefix, ...rest] = entry.split('/');
  if (rest.length || !address) return false;
  const family = isIP(address);
  if (!family) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/** A configuration problem with `trustProxy`, or undefined when the value is usable. */
export function trustProxyProblem(value: unknown): string | undefined {
  if (value === undefined || typeof value === 'boolean') return undefined;
  const hint = 'trustProxy: must be the number of proxies in front of the server (e.g. 1) or their addresses/CIDRs (e.g. ["10.0.0.0/8"])';
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 && value <= 32 ? undefined : hint;
  const entries = typeof value === 'string' ? value.split(',').map((s) => s.trim()) : value;
  if (!Array.isArray(entries) || entries.length === 0) return hint;
  const bad = entries.filter((e) => typeof e !== 'string' || !validEntry(e.trim()));
  return bad.length ? `${hint}; not an address or CIDR: ${bad.map((b) => JSON.stringify(b)).join(', ')}` : undefined;
}

/** The client's address as the trusted proxies report it (the socket peer without a proxy). */
export function clientAddress(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}
