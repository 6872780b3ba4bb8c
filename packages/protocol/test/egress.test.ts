import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANY_ADDRESS, PUBLIC_ONLY, checkEgress, checkEgressHost, egressPolicyForPeer } from '../src/egress.js';
import { EgressRefusedError, createEgressDispatcher, egressRefusal, resolveEgress } from '../src/egress-connector.js';

/**
 * The egress policy of the kit (MCP security best practices §SSRF, RFC 9728 §7.7,
 * draft-ietf-oauth-client-id-metadata-document §SSRF). The pure decision is tested with every
 * address class; the connector only ever against this test's own loopback listener, with a stub
 * resolver standing in for DNS (nothing here resolves or connects to anything else).
 */
const LOOPBACK_ONLY = { loopback: true, specialUse: false };

describe('checkEgress: one connection, decided on the resolved addresses', () => {
  it.each([['8.8.8.8'], ['2606:4700:4700::1111'], ['[2001:4860:4860::8888]'], ['::ffff:8.8.8.8']])(
    'public unicast %s is allowed under every policy',
    (address) => {
      for (const policy of [PUBLIC_ONLY, LOOPBACK_ONLY, ANY_ADDRESS]) expect(checkEgress('h', [address], policy).ok).toBe(true);
    },
  );

  it.each([['127.0.0.1'], ['127.9.9.9'], ['::1'], ['[::1]'], ['::ffff:127.0.0.1'], ['::ffff:7f00:1']])(
    'loopback %s: refused by PUBLIC_ONLY, allowed when loopback is',
    (address) => {
      const refused = checkEgress('h', [address], PUBLIC_ONLY);
      expect(refused.ok).toBe(false);
      expect((refused as { reason: string }).reason).toMatch(/loopback or private/);
      expect(checkEgress('h', [address], LOOPBACK_ONLY).ok).toBe(true);
    },
  );

  it.each([
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local, cloud metadata'],
    ['100.64.0.1', 'CGNAT'],
    ['0.0.0.0', 'this network'],
    ['224.0.0.1', 'multicast'],
    ['fd00:ec2::254', 'ULA, cloud metadata'],
    ['fe80::1', 'IPv6 link-local'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped link-local'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 of link-local'],
    ['2002:a9fe:a9fe::', '6to4 of link-local'],
    ['::', 'unspecified'],
  ])('special-use %s (%s): refused unless special-use is allowed — loopback permission does not cover it', (address) => {
    expect(checkEgress('h', [address], PUBLIC_ONLY).ok).toBe(false);
    expect(checkEgress('h', [address], LOOPBACK_ONLY).ok).toBe(false);
    expect(checkEgress('h', [address], ANY_ADDRESS).ok).toBe(true);
  });

  it('a name with one refused answer among public ones is refused as a whole (rebinding mixes answers)', () => {
    expect(checkEgress('rebind.example', ['93.184.215.14', '169.254.169.254'], PUBLIC_ONLY).ok).toBe(false);
    expect(checkEgress('rebind.example', ['127.0.0.1', '93.184.215.14'], PUBLIC_ONLY).ok).toBe(false);
  });

  it('no answer, or an answer that is not an IP address, is refused', () => {
    expect(checkEgress('h', [], ANY_ADDRESS).ok).toBe(false);
    expect(checkEgress('h', ['not-an-ip'], ANY_ADDRESS).ok).toBe(false);
    expect(checkEgress('h', ['0177.0.0.1'], ANY_ADDRESS).ok).toBe(false);
  });

  it('allowed: every checked address, brackets removed, in the resolver order', () => {
    expect(checkEgress('h', ['93.184.215.14', '[2606:4700::1]'], PUBLIC_ONLY)).toEqual({
      ok: true,
      addresses: ['93.184.215.14', '2606:4700::1'],
    });
  });
});

describe('checkEgressHost: decisions that need no DNS', () => {
  it('IP literals are decided on the spot, in every URL-parser spelling', () => {
    for (const spelling of [
      '127.0.0.1',
      '2130706433',
      '0x7f.1',
      '[::1]',
      '[::ffff:127.0.0.1]',
      '169.254.169.254',
      '0xa9.0xfe.0xa9.0xfe',
      '[fe80::1]',
    ]) {
      const host = new URL(`https://${spelling}/`).hostname;
      expect(checkEgressHost(host, PUBLIC_ONLY)?.ok, spelling).toBe(false);
    }
    expect(checkEgressHost('8.8.8.8', PUBLIC_ONLY)?.ok).toBe(true);
  });

  it('RFC 6761 §6.3 loopback names are refused without asking DNS unless loopback is allowed', () => {
    for (const name of ['localhost', 'LOCALHOST', 'app.localhost', 'localhost.'])
      expect(checkEgressHost(name, PUBLIC_ONLY)?.ok, name).toBe(false);
    expect(checkEgressHost('localhost', LOOPBACK_ONLY)).toBeUndefined();
  });

  it('other names are left to their resolved addresses', () => {
    expect(checkEgressHost('app.example', PUBLIC_ONLY)).toBeUndefined();
  });
});

describe('egressPolicyForPeer: what a peer may make us fetch', () => {
  it('a remote peer (name or public literal): public addresses only', () => {
    for (const url of ['https://mcp.example/mcp', 'https://8.8.8.8/mcp', 'https://localhost.example.com/mcp']) {
      expect(egressPolicyForPeer(url), url).toEqual(PUBLIC_ONLY);
    }
  });

  it('a peer on a private literal does not earn private targets (only an explicit opt-in does)', () => {
    expect(egressPolicyForPeer('https://10.0.0.5/mcp')).toEqual(PUBLIC_ONLY);
    expect(egressPolicyForPeer('https://idp.corp.example', { allowPrivateNetwork: true })).toEqual({ loopback: false, specialUse: true });
  });

  it('a loopback peer (local development) may name loopback targets, unless loopback is blocked', () => {
    for (const url of ['http://localhost:3000/mcp', 'http://127.0.0.1:3000/mcp', 'http://[::1]:3000/mcp']) {
      expect(egressPolicyForPeer(url), url).toEqual(LOOPBACK_ONLY);
      expect(egressPolicyForPeer(url, { blockLoopback: true }), url).toEqual(PUBLIC_ONLY);
    }
  });

  it('an unparsable peer URL earns nothing', () => {
    expect(egressPolicyForPeer('not a url')).toEqual(PUBLIC_ONLY);
  });
});

describe('resolveEgress: one resolution, then the decision', () => {
  it('a name is resolved once and its answers decide; a resolver failure is a refusal', async () => {
    let calls = 0;
    const stub = async (name: string) => (calls++, name === 'metadata.test' ? ['169.254.169.254'] : ['93.184.215.14']);
    expect(await resolveEgress('metadata.test', PUBLIC_ONLY, stub)).toMatchObject({ ok: false });
    expect(await resolveEgress('public.test', PUBLIC_ONLY, stub)).toEqual({ ok: true, addresses: ['93.184.215.14'] });
    expect(calls).toBe(2);
    const failing = async () => {
      throw new Error('ENOTFOUND');
    };
    expect(await resolveEgress('nx.test', ANY_ADDRESS, failing)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/does not resolve/),
    });
  });

  it('literals and loopback names never reach the resolver', async () => {
    const never = async (): Promise<string[]> => expect.unreachable('no DNS for literals');
    expect((await resolveEgress('127.0.0.1', PUBLIC_ONLY, never)).ok).toBe(false);
    expect((await resolveEgress('localhost', PUBLIC_ONLY, never)).ok).toBe(false);
  });
});

describe('createEgressDispatcher: the check happens before the connection (loopback listener only)', () => {
  let server: Server;
  let port: number;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => res.end(`hello ${req.headers.host}`));
    server.on('connection', (socket) => sockets.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  it('an IP literal outside the policy: fetch fails with the refusal, the listener sees NO connection', async () => {
    const dispatcher = createEgressDispatcher({ policy: PUBLIC_ONLY });
    const before = sockets.length;
    const error = await fetch(`http://127.0.0.1:${port}/`, { dispatcher } as RequestInit).catch((e: unknown) => e);
    expect(egressRefusal(error)).toBeInstanceOf(EgressRefusedError);
    expect(sockets.length - before).toBe(0);
    await dispatcher.close();
  });

  it('a name whose answer is loopback (stub DNS): refused, NO connection; the refusal is reported', async () => {
    const refused: string[] = [];
    const dispatcher = createEgressDispatcher({
      policy: PUBLIC_ONLY,
      resolve: async () => ['127.0.0.1'],
      onRefused: (host) => refused.push(host),
    });
    const before = sockets.length;
    const error = await fetch(`http://rebind.test:${port}/`, { dispatcher } as RequestInit).catch((e: unknown) => e);
    expect(egressRefusal(error)?.host).toBe('rebind.test');
    expect(refused).toEqual(['rebind.test']);
    expect(sockets.length - before).toBe(0);
    await dispatcher.close();
  });

  it('an allowed name connects to the CHECKED address: a name no DNS knows reaches the listener through its stub answer', async () => {
    const dispatcher = createEgressDispatcher({ policy: LOOPBACK_ONLY, resolve: async () => ['127.0.0.1'] });
    const res = await fetch(`http://pinned.test:${port}/`, { dispatcher } as RequestInit);
    expect(await res.text()).toBe(`hello pinned.test:${port}`);
    await dispatcher.close();
  });

  it('checked answers are tried in order: a refused first address falls through to the next checked one', async () => {
    // ::1 first: nothing of ours listens there (or it is not configured), 127.0.0.1 answers.
    const dispatcher = createEgressDispatcher({ policy: LOOPBACK_ONLY, resolve: async () => ['::1', '127.0.0.1'] });
    const res = await fetch(`http://two.test:${port}/`, { dispatcher } as RequestInit);
    expect(res.status).toBe(200);
    await res.body?.cancel();
    await dispatcher.close();
  });

  it('a mixed answer (one refused address) is refused before any connection, even with an allowed one first', async () => {
    const dispatcher = createEgressDispatcher({ policy: LOOPBACK_ONLY, resolve: async () => ['127.0.0.1', '10.0.0.1'] });
    const before = sockets.length;
    const error = await fetch(`http://mixed.test:${port}/`, { dispatcher } as RequestInit).catch((e: unknown) => e);
    expect(egressRefusal(error)).toBeDefined();
    expect(sockets.length - before).toBe(0);
    await dispatcher.close();
  });
});
