import { describe, expect, it } from 'vitest';
import { upstreamNameCandidates } from '../src/accounts/account-names.js';

/**
 * The username an upstream sign-up may take (issue 40, review finding 2): a name that is an e-mail
 * address only when the provider vouched for that address (OIDC Core §5.7 `email_verified`), so an
 * unverified claim cannot take the name an operator's or another source's account is known by.
 */
describe('upstream sign-up names', () => {
  it('upstream sign-up (OIDC Core §5.7): an e-mail-like name only when the provider verified that e-mail', () => {
    const rows: [Record<string, unknown>, unknown[]][] = [
      [{ preferred_username: 'alice@corp.example', email: 'alice@corp.example' }, []],
      [{ preferred_username: 'alice@corp.example', email: 'alice@corp.example', email_verified: false }, []],
      [{ preferred_username: 'alice@corp.example', email: 'alice@corp.example', email_verified: 'true' }, []],
      [{ email: 'alice@corp.example', email_verified: true }, ['alice@corp.example']],
      [{ preferred_username: 'boss@corp.example', email: 'me@corp.example', email_verified: true }, ['me@corp.example']],
      [{ preferred_username: 'alice', email: 'x@corp.example' }, ['alice']],
    ];
    for (const [claims, expected] of rows) expect(upstreamNameCandidates(claims), JSON.stringify(claims)).toEqual(expected);
  });
});
