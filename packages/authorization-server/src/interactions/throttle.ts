/**
 * Brute-force brakes for the login form, counted in `store.kv` so every instance shares them:
 * - per (address, username): stops one client guessing one password;
 * - per username, from every address: a temporary lockout against distributed guessing (it
 *   can be triggered by others, so the limit is higher and the lock ends with the window);
 * - per address, over every username: password spraying.
 *
 * Count first, then decide: an attempt takes its place in each counter with one atomic
 * increment in the store and is let through only if the count that increment returned is within
 * the limit. Reading the counters and adding failures after the password check let every
 * attempt that arrived before the first failure was written through (N parallel guesses, N
 * checks), on one instance or across several sharing the store.
 */
import { identityKey } from '@mcp-auth-kit/protocol';
import type { KeyValueStore } from '../storage/types.js';

const NAMESPACE = 'login-attempts';

import type { LoginThrottleLimits } from '../config/types.js';

export type { LoginThrottleLimits };

export type LoginBrake = 'address-and-user' | 'user' | 'address';

/**
 * Keyed on the same canonical identity as the account lookup: every spelling that signs in as
 * one account (`bob`, `BOB`, `𝖇𝖔𝖇`) counts toward, and is stopped by, one lock.
 */
function keys(address: string, username: string) {
  const user = identityKey(username);
  return { pair: `${address}|${user}`, user: `user|${user}`, addr: `addr|${address}` };
}

export class LoginThrottle {
  constructor(
    private readonly kv: KeyValueStore,
    private readonly limits: LoginThrottleLimits,
  ) {}

  /**
   * Counts this attempt; the brake that refuses it, or undefined when it may check the password.
   * An attempt let through stays counted: a wrong password needs nothing more, a right one calls
   * {@link succeeded}. A refused attempt is taken back from the counters before the one that
   * refused it, so it only weighs on a brake that is already on: hammering one locked pair does
   * not lock the user out for every address, nor the address for every user. The order (pair,
   * address, user) keeps one address from counting more than its pair limit against a user.
   */
  async attempt(address: string, username: string): Promise<LoginBrake | undefined> {
    const k = keys(address, username);
    const brakes: Array<[LoginBrake, string, number]> = [
      ['address-and-user', k.pair, this.limits.perAddressAndUser],
      ['address', k.addr, this.limits.perAddress],
      ['user', k.user, this.limits.perUser],
    ];
    const counted: string[] = [];
    for (const [brake, key, limit] of brakes) {
      const count = await this.kv.increment(NAMESPACE, key, 1, this.limits.windowSeconds);
      if (count > limit) {
        await Promise.all(counted.map((c) => this.kv.decrement(NAMESPACE, c, 1)));
        return brake;
      }
      counted.push(key);
    }
    return undefined;
  }

  /**
   * The password was right: the pair counter starts again; the attempt is taken back from the
   * per-user and per-address counters (an attacker may share those, so they are not cleared).
   */
  async succeeded(address: string, username: string): Promise<void> {
    const k = keys(address, username);
    await Promise.all([
      this.kv.delete(NAMESPACE, k.pair),
      this.kv.decrement(NAMESPACE, k.user, 1),
      this.kv.decrement(NAMESPACE, k.addr, 1),
    ]);
  }
}
