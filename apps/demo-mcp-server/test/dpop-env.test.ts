import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { useFakeAuthorizationServer } from './helpers/fake-as.js';
import { freePort } from '@mcp-auth-kit/test-utils';
import { cleanEnv, run } from './helpers/process.js';

const main = fileURLToPath(new URL('../dist/main.js', import.meta.url));

// RFC 9449 at the demo: DPoP and Bearer by default; MCP_DPOP_REQUIRED=1 refuses Bearer.
describe.skipIf(!existsSync(main))('dist/main.js: DPoP', () => {
  const as = useFakeAuthorizationServer();

  async function withServer(env: Record<string, string>, fn: (port: number) => Promise<void>) {
    const port = await freePort();
    const proc = run(process.execPath, [main], cleanEnv({ MCP_PORT: String(port), AS_ISSUER: as().issuer, ...env }));
    try {
      await proc.waitForOutput(/MCP endpoint/);
      await fn(port);
    } finally {
      proc.child.kill('SIGINT');
      await proc.exited;
    }
  }

  const post = (port: number, authorization?: string) =>
    fetch(`http://127.0.0.1:${port}/mcp`, {
      method: 'POST',
      headers: {
        ...(authorization ? { authorization } : {}),
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });

  it('RFC 9728 §2 / RFC 9449 §7.1: by default the PRM announces DPoP, not required, and challenges offer Bearer and DPoP', async () => {
    await withServer({}, async (port) => {
      const prm = (await (await fetch(`http://localhost:${port}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<string, any>;
      expect(prm.dpop_signing_alg_values_supported).toContain('ES256');
      expect(prm.dpop_bound_access_tokens_required).toBe(false);
      const res = await post(port);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer .*, DPoP .*algs="/);
    });
  });

  it('RFC 9449 §7.2: MCP_DPOP_REQUIRED=1 → PRM dpop_bound_access_tokens_required, a valid Bearer token refused with a DPoP challenge', async () => {
    await withServer({ MCP_DPOP_REQUIRED: '1' }, async (port) => {
      const prm = (await (await fetch(`http://localhost:${port}/.well-known/oauth-protected-resource/mcp`)).json()) as Record<string, any>;
      expect(prm.dpop_bound_access_tokens_required).toBe(true);
      const token = await as().sign({ aud: `http://localhost:${port}/mcp` });
      const res = await post(port, `Bearer ${token}`);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^DPoP error="invalid_token"/);
    });
  });
});
