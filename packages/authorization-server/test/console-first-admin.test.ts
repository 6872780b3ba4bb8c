/**
 * `console.firstAdmin` (issue 44): the configured name gets the admin role only when the operator
 * made that account; a name someone else could take first (upstream sign-up, ID-JAG just in time)
 * is never promoted by configuration.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startAs } from './helpers/as.js';

describe('console.firstAdmin promotes only an operator-made account', () => {
  const dir = mkdtempSync(join(tmpdir(), 'first-admin-'));
  const storage = { kind: 'sqlite' as const, file: join(dir, 'as.db') };
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('attack: an account from self sign-up that holds the configured name stays a plain user', async () => {
    const first = await startAs({ storage, users: [{ username: 'root', password: 'root-password' }] });
    try {
      await first.as.store.accounts.create({
        id: 'upstream-mallory',
        username: 'ops@example.com',
        passwordHash: null,
        disabled: false,
        source: 'upstream:https://idp.example',
      });
    } finally {
      await first.close();
    }
    const again = await startAs({ storage, users: [], console: { path: '/console', firstAdmin: 'ops@example.com' } });
    try {
      expect((await again.as.store.accounts.findByUsername('ops@example.com'))?.admin).toBeFalsy();
    } finally {
      await again.close();
    }
    const operator = await startAs({ storage, users: [], console: { path: '/console', firstAdmin: 'root' } });
    try {
      expect((await operator.as.store.accounts.findByUsername('root'))?.admin).toBe(true);
    } finally {
      await operator.close();
    }
  });
});
