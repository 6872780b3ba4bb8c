import { describe, expect, it } from 'vitest';
import { signedInAccount } from '../src/client/signed-in-account.js';
import type { TokenEndpointResponse } from '../src/oauth.js';

/**
 * Issue 46 F4/F5: the `account.name` the library hands to applications (login result, `authorized`
 * event) is the AS's free text; it passes the one display rule (protocol `displaySafeText`) before
 * any application shows it, so U+3000 padding cannot push what follows off the screen and a stack
 * of combining marks cannot draw over its neighbours. The `sub` is kept as it is (an identifier).
 */
const ISSUER = 'https://as.example';
const jwt = (claims: object) =>
  `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.sig`;
const response = (claims: object) => ({ access_token: jwt(claims), token_type: 'bearer' }) as unknown as TokenEndpointResponse;

describe('signedInAccount: the display name through displaySafeText', () => {
  it.each([
    ['U+3000 padding', `alice${'\u3000'.repeat(150)}(sub 248289761001)`, 'alice (sub 248289761001)'],
    ['combining-mark stack', `Bob${'\u0336'.repeat(120)}`, 'Bob\u0336\u0336\u0336'],
    ['invisible only', '\u200b\u3164', undefined],
    ['a plain name', 'Alice Smith', 'Alice Smith'],
  ])('%s', (_name, name, shown) => {
    const account = signedInAccount(response({ iss: ISSUER, sub: 'mallory-7', name }), ISSUER);
    expect(account).toEqual({ sub: 'mallory-7', ...(shown !== undefined && { name: shown }), source: 'access_token' });
  });

  it('falls back to preferred_username by the same rule', () => {
    const account = signedInAccount(
      response({ iss: ISSUER, sub: 's', name: '\u200b', preferred_username: `bob${'\u3000'.repeat(9)}x` }),
      ISSUER,
    );
    expect(account?.name).toBe('bob x');
  });
});
