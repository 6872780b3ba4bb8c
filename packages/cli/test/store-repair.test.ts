import { chmodSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileStore } from '@mcp-auth-kit/client';
import { run } from '../src/program.js';
import { recordingIo } from './helpers/io.js';
import { scratch } from '../../client/test/helpers/scratch.js';

/**
 * Review r46 F6 (OAuth 2.1 §7.1), the CLI's side: a token store its user owns but others may read
 * is made private by the file store (packages/client/test/store-trust.test.ts), and the CLI tells
 * the user on stderr.
 */
const { tmp } = scratch('mak-trust-');

describe('the CLI on a store readable by others (review r46 F6)', () => {
  it('end to end: the CLI status on a 0644 store in a 0755 folder says so on stderr and leaves it 0600 / 0700', async () => {
    const dir = join(tmp(), 'cli-home');
    const path = join(dir, 'store.json');
    await new FileStore(path).setTokens({
      issuer: 'https://as',
      resource: 'https://rs',
      access_token: 'secret',
      token_type: 'Bearer',
      client_id: 'c',
    });
    chmodSync(dir, 0o755);
    chmodSync(path, 0o644);
    const { io, out, err } = recordingIo({ MCP_AUTH_KIT_HOME: dir }, { open: async () => false });
    expect(await run(['status'], io)).toBe(0);
    expect(err()).toContain(`the token store directory ${dir} was readable by its group (mode 755); changed it to 700\n`);
    expect(err()).toContain(`the token store file ${path} was readable by its group (mode 644); changed it to 600\n`);
    expect(lstatSync(dir).mode & 0o777).toBe(0o700);
    expect(lstatSync(path).mode & 0o777).toBe(0o600);
    expect(out() + err()).not.toContain('secret');
  });
});
