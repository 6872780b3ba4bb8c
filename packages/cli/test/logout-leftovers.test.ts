import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileStore } from '@mcp-auth-kit/client';
import { run } from '../src/program.js';
import { closeAfterEach, scratch } from '../../client/test/helpers/scratch.js';
import { afterTwoSwitches, issuers } from '../../client/test/helpers/switched-issuers.js';

/**
 * Review r46 F2, the CLI's side: after the MCP server switched authorization server twice,
 * `logout <url>` (RFC 7009 revocation, best effort) leaves no refresh token or client secret of
 * any of them in the store file. The library's side is packages/client/test/logout-leftovers.test.ts.
 */
const startIssuers = closeAfterEach(issuers);
const { tmp } = scratch('mak-leftovers-');

describe('logout after the MCP server switched authorization server (review r46 F2)', () => {
  it('the CLI: `logout <url>` leaves no refresh token or client secret in store.json', async () => {
    const as = await startIssuers();
    const home = tmp();
    const binding = await afterTwoSwitches(new FileStore(join(home, 'store.json')), as.base);
    const out: string[] = [];
    const code = await run(['logout', binding.server], {
      stdout: (t) => void out.push(t),
      stderr: () => undefined,
      env: { MCP_AUTH_KIT_HOME: home },
    });
    expect(code).toBe(0);
    expect(out.join('')).toContain('Logged out of');
    const file = readFileSync(join(home, 'store.json'), 'utf8');
    for (const n of [1, 2, 3]) expect(file).not.toContain(`rt${n}`);
    for (const n of [1, 2]) expect(file).not.toContain(`secret${n}`);
    expect(as.revoked).toHaveLength(3);
  });
});
