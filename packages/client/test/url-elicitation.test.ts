// URL-mode elicitation through the MCP SDK v2 client (`@modelcontextprotocol/client`) against
// loopback servers built with the real SDKs (helpers/eliciting-servers.ts): MCP 2025-11-25
// client/elicitation (capability, URL mode requests, -32042 URL elicitation required,
// notifications/elicitation/complete, response actions) and 2026-07-28 multi round-trip requests
// (InputRequiredResult, inputResponses, requestState; changelog items 7, 8, 11).
import { afterEach, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitationCompleteNotificationSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { createUrlElicitation, ERR, type UrlElicitationOptions, type UrlElicitationPrompt } from '../src/index.js';
import { startV1ElicitingServer, startV2ElicitingServer, type ElicitingServer } from './helpers/eliciting-servers.js';
import { refusal } from './helpers/scratch.js';

let running: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const r of running.reverse()) await r.close();
  running = [];
});

async function server(sdk: 'v1' | 'v2'): Promise<ElicitingServer> {
  const s = sdk === 'v1' ? await startV1ElicitingServer() : await startV2ElicitingServer();
  running.push(s);
  return s;
}

/** A user who answers `action` and, when they accept, finishes on the page (the test's browser visits it). */
function user(action: 'accept' | 'decline' | 'cancel' = 'accept', extra: Partial<UrlElicitationOptions> = {}) {
  const prompts: UrlElicitationPrompt[] = [];
  const opened: string[] = [];
  const options: UrlElicitationOptions = {
    onUrlElicitation: async (prompt) => {
      prompts.push(prompt);
      return action;
    },
    openUrl: async (url) => {
      opened.push(url.href);
      await fetch(url);
    },
    ...extra,
  };
  return { options, prompts, opened };
}

async function connect(s: ElicitingServer, wire: '2025-11-25' | '2026-07-28', options: UrlElicitationOptions) {
  const client = new Client(
    { name: 'elicitation test', version: '1.0.0' },
    wire === '2026-07-28' ? { versionNegotiation: { mode: { pin: wire } } } : {},
  );
  const elicitation = createUrlElicitation(options);
  elicitation.attach(client);
  await client.connect(new StreamableHTTPClientTransport(new URL(s.url)));
  running.push(client);
  return { client, elicitation, files: (tool = 'files') => elicitation.call(() => client.callTool({ name: tool, arguments: {} })) };
}

const FILES = [{ type: 'text', text: 'your files: a.txt, b.txt' }];

describe('capability (2025-11-25 elicitation §Capabilities)', () => {
  it('the client declares elicitation with URL mode, and not form mode (it has no form UI)', async () => {
    const s = await server('v1');
    s.connected = true;
    const { files } = await connect(s, '2025-11-25', user().options);
    await files();
    expect(s.capabilities?.elicitation).toEqual({ url: {} });
  });

  it('handleRequest refuses anything but URL mode with -32602 (a request without mode is form mode)', async () => {
    const { options, prompts } = user();
    const elicitation = createUrlElicitation(options);
    for (const params of [
      { message: 'name?', requestedSchema: { type: 'object', properties: {} } },
      { mode: 'form', message: 'x' },
    ]) {
      await expect(elicitation.handleRequest({ params })).rejects.toMatchObject({ code: -32602 });
    }
    expect(prompts).toEqual([]);
  });
});

describe('-32042 URL elicitation required (2025-11-25 §URL Elicitation Required Error)', () => {
  it('SDK v1 server: asks, opens, the completion notification ends the wait, the call is retried and succeeds', async () => {
    const s = await server('v1');
    const u = user('accept', { completionTimeoutMs: 60_000 });
    const { files } = await connect(s, '2025-11-25', u.options);
    const started = Date.now();
    expect((await files()).content).toEqual(FILES);
    // the notification, not the 60 s limit, ended the wait
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(u.prompts).toHaveLength(1);
    const [prompt] = u.prompts;
    expect(prompt).toMatchObject({ message: s.message, host: new URL(s.url).host, punycode: false, elicitationId: s.visits[0] });
    expect(prompt!.url.href).toBe(`${s.connectBase}/${s.visits[0]}`);
    expect(u.opened).toEqual([prompt!.url.href]);
    expect(s.calls.map((c) => c.tool)).toEqual(['files', 'files']);
  });

  it('without a notification: the user says they are done (waitForCompletion), then the call is retried', async () => {
    const s = await server('v1');
    s.notify = false;
    const seen: { id?: string | undefined; abortedAtStart: boolean }[] = [];
    let signal: AbortSignal | undefined;
    const u = user('accept', {
      completionTimeoutMs: 60_000,
      waitForCompletion: async (prompt, aborted) => {
        signal = aborted;
        seen.push({ id: prompt.elicitationId, abortedAtStart: aborted.aborted });
        // §Completion Notifications: a notification for an unknown id MUST be ignored
        elicitation.complete('not-the-pending-id');
        await new Promise((r) => setTimeout(r, 50));
        expect(aborted.aborted).toBe(false);
      },
    });
    const { files, elicitation } = await connect(s, '2025-11-25', u.options);
    expect((await files()).content).toEqual(FILES);
    expect(seen).toEqual([{ id: s.visits[0], abortedAtStart: false }]);
    expect(signal?.aborted).toBe(true);
  });

  it('the notification of a finished page aborts the signal given to waitForCompletion (whichever comes first)', async () => {
    const s = await server('v1');
    let aborted: AbortSignal | undefined;
    const u = user('accept', {
      completionTimeoutMs: 60_000,
      waitForCompletion: (_prompt, signal) =>
        new Promise<void>((_resolve, reject) => {
          aborted = signal;
          signal.addEventListener('abort', () => reject(new Error('stopped waiting for Enter')));
        }),
    });
    const { files } = await connect(s, '2025-11-25', u.options);
    expect((await files()).content).toEqual(FILES);
    expect(aborted?.aborted).toBe(true);
  });

  it('SDK v2 server on the stateless 2025-11-25 wire: retried after waitForCompletion', async () => {
    // (On the 2026-07-28 wire the SDK v2 server refuses to send -32042: URL elicitation is an InputRequiredResult there.)
    const s = await server('v2');
    const u = user('accept', { waitForCompletion: async () => undefined });
    const { files } = await connect(s, '2025-11-25', u.options);
    expect((await files('files_error')).content).toEqual(FILES);
    expect(u.prompts.map((p) => p.elicitationId)).toEqual([s.visits[0]]);
    expect(s.calls.map((c) => c.tool)).toEqual(['files_error', 'files_error']);
  });

  it('decline: nothing is opened, the call is not retried, MCP_AUTH_ELICITATION_DECLINED names the host', async () => {
    const s = await server('v1');
    const u = user('decline');
    const { files } = await connect(s, '2025-11-25', u.options);
    const { err } = await refusal(files());
    expect(err.code).toBe(ERR.ELICITATION_DECLINED);
    expect(err.message).toContain(new URL(s.url).host);
    expect(u.opened).toEqual([]);
    expect(s.visits).toEqual([]); // never pre-fetched (§Safe URL Handling 1)
    expect(s.calls).toHaveLength(1);
  });

  it('cancel, or an answer that is no action at all: MCP_AUTH_ELICITATION_CANCELLED, nothing opened', async () => {
    for (const answer of ['cancel', 'yes', undefined]) {
      const s = await server('v1');
      const u = user('accept', { onUrlElicitation: async () => answer as 'cancel' });
      const { files } = await connect(s, '2025-11-25', u.options);
      expect((await refusal(files())).err.code).toBe(ERR.ELICITATION_CANCELLED);
      expect(u.opened).toEqual([]);
      expect(s.calls).toHaveLength(1);
    }
  });

  it('bounded: a server that still asks after maxRetries retries gets MCP_AUTH_ELICITATION_LIMIT', async () => {
    const s = await server('v1');
    // the user accepts but the page never completes the connection
    const prompts: UrlElicitationPrompt[] = [];
    const { files } = await connect(s, '2025-11-25', {
      onUrlElicitation: async (p) => {
        prompts.push(p);
        return 'accept';
      },
      waitForCompletion: async () => undefined,
      maxRetries: 2,
    });
    expect((await refusal(files())).err.code).toBe(ERR.ELICITATION_LIMIT);
    expect(s.calls).toHaveLength(3);
    expect(prompts).toHaveLength(2);
  });

  it('other errors pass through untouched, and are not retried', async () => {
    const u = user();
    const elicitation = createUrlElicitation(u.options);
    const boom = Object.assign(new Error('boom'), { code: -32603 });
    let calls = 0;
    const failing = async () => {
      calls++;
      throw boom;
    };
    await expect(elicitation.call(failing)).rejects.toBe(boom);
    expect(calls).toBe(1);
    expect(u.prompts).toEqual([]);
  });
});

describe('server-initiated elicitation/create in URL mode (2025-11-25 §URL Mode Elicitation Requests)', () => {
  it('accept: the page is opened and the server is answered accept (consent, not completion)', async () => {
    const s = await server('v1');
    const u = user('accept');
    const { files } = await connect(s, '2025-11-25', u.options);
    expect((await files('ask')).content).toEqual([{ type: 'text', text: 'answer: accept' }]);
    expect(s.answers).toEqual(['accept']);
    expect(u.prompts[0]).toMatchObject({ message: s.message, elicitationId: s.visits[0] });
    expect(u.opened).toHaveLength(1);
  });

  it('decline and cancel reach the server as the user chose; nothing is opened', async () => {
    for (const action of ['decline', 'cancel'] as const) {
      const s = await server('v1');
      const u = user(action);
      const { files } = await connect(s, '2025-11-25', u.options);
      expect((await files('ask')).content).toEqual([{ type: 'text', text: `answer: ${action}` }]);
      expect(s.answers).toEqual([action]);
      expect(u.opened).toEqual([]);
      expect(s.visits).toEqual([]);
    }
  });
});

describe('InputRequiredResult with a URL-mode elicitation (2026-07-28 multi round-trip requests)', () => {
  it('accept: opened, waitForCompletion awaited, then retried with inputResponses and the exact requestState', async () => {
    const s = await server('v2');
    const order: string[] = [];
    const u = user('accept', {
      waitForCompletion: async () => {
        order.push(`done after ${s.visits.length} visit(s)`);
      },
    });
    const { files } = await connect(s, '2026-07-28', u.options);
    expect((await files()).content).toEqual(FILES);
    expect(order).toEqual(['done after 1 visit(s)']);
    // changelog 11: no elicitationId on this wire
    expect(u.prompts).toHaveLength(1);
    expect(u.prompts[0]!.elicitationId).toBeUndefined();
    expect(u.prompts[0]).toMatchObject({ message: s.message, host: new URL(s.url).host });
    expect(s.calls).toEqual([
      { tool: 'files', inputResponses: undefined, requestState: undefined },
      { tool: 'files', inputResponses: { connect: { action: 'accept' } }, requestState: 'opaque-state-1' },
    ]);
  });

  it('decline and cancel are sent back as the inputResponses of the retry; nothing is opened', async () => {
    for (const action of ['decline', 'cancel'] as const) {
      const s = await server('v2');
      const u = user(action);
      const { files } = await connect(s, '2026-07-28', u.options);
      const result = await files();
      expect(result.isError).toBe(true);
      expect(result.content).toEqual([{ type: 'text', text: `not connected: ${action}` }]);
      expect(s.calls[1]).toEqual({ tool: 'files', inputResponses: { connect: { action } }, requestState: 'opaque-state-1' });
      expect(u.opened).toEqual([]);
    }
  });
});

describe('the MCP SDK v1 client, wired by hand as the README shows', () => {
  async function v1Client(s: ElicitingServer, options: UrlElicitationOptions) {
    const elicitation = createUrlElicitation(options);
    const client = new ClientV1({ name: 'v1 host', version: '1.0.0' }, { capabilities: elicitation.capabilities });
    client.setRequestHandler(ElicitRequestSchema, (req, extra) => elicitation.handleRequest(req, { mcpReq: { signal: extra.signal } }));
    client.setNotificationHandler(ElicitationCompleteNotificationSchema, (n) => elicitation.complete(n.params.elicitationId));
    await client.connect(new TransportV1(new URL(s.url)));
    running.push(client);
    return (tool: string) => elicitation.call(() => client.callTool({ name: tool, arguments: {} }));
  }

  it('-32042 (the notification ends the wait) and a server-initiated elicitation/create', async () => {
    const s = await server('v1');
    const u = user('accept', { completionTimeoutMs: 60_000 });
    const call = await v1Client(s, u.options);
    expect((await call('files')).content).toEqual(FILES);
    expect(s.capabilities?.elicitation).toEqual({ url: {} });
    const s2 = await server('v1');
    const u2 = user('decline');
    const call2 = await v1Client(s2, u2.options);
    expect((await call2('ask')).content).toEqual([{ type: 'text', text: 'answer: decline' }]);
  });
});
