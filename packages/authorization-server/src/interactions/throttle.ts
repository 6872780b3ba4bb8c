/**
 * Brute-force brakes for the login form, counted in `store.kv` so every instance shares them:
 * - per (address, username): stops one client guessing one password;
 * - per username, from every address: a temporary lockout against distributed guessing (it
 *   can be triggered by others, so the limit is higher and the lock ends with the window);
 * - per address, over every username: password spraying.
 */
import type { KeyValueStore } from '../storage/types.js';

const NAMESPACE = 'login-failures';

export interface LoginThrottleLimits {
  perAddressAndUser: number;
  perUser: number;
  perAddress: number;
  windowSeconds: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginThrottleLimits = { perAddressAndUser: 10, perUser: 50, perAddress: 100, windowSeconds: 15 * 60 };

function keys(address: string, username: string) {
  const user = username.toLowerCase();
  return [`${address}|${user}`, `user|${user}`, `addr|${address}`] as const;
}

export class LoginThrottle {
  constructor(
    private readonly kv: KeyValueStore,
    private readonly limits: LoginThrottleLimits = DEFAULT_LOGIN_LIMITS,
  ) {}

  /** The brake that is on for this attempt, if any. */
  async blocked(address: string, username: string): Promise<'address-and-user' | 'user' | 'address' | undefined> {
    const [pair, user, addr] = keys(address, username);
    const [a, b, c] = await Promise.all([pair, user, addr].map((k) => this.kv.get<number>(NAMESPACE, k)));
    if ((a ?? 0) >= this.limits.perAddressAndUser) return 'address-and-user';
    if ((b ?? 0) >= this.limits.perUser) return 'user';
    if ((c ?? 0) >= this.limits.perAddress) return 'address';
    return undefined;
  }

  async failed(address: string, username: string): Promise<void> {
    await Promise.all(keys(address, username).map((k) => this.kv.increment(NAMESPACE, k, 1, this.limits.windowSeconds)));
  }

  /** A successful login clears the pair counter (not the others: an attacker may share them). */
  async succeeded(address: string, username: string): Promise<void> {
    await this.kv.delete(NAMESPACE, keys(address, username)[0]);
  }
}
