import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '@mcp-auth-kit/authorization-server';
import {
  authorizeCode,
  codeGrantForm,
  dpopKey,
  dpopPostProof,
  pkcePair,
  postForm,
  postRegistration,
  registerClient,
  startAttackStack,
} from './helpers/support.js';
import type { AttackStack, DpopKey, JsonResponse } from './helpers/support.js';

/**
 * The refresh grace window (packages/authorization-server/src/tokens/refresh-grace.ts) repeats the
 * answer of a refresh for a short time, so that concurrent refreshes of one client do not trip
 * reuse detection (RFC 9700 §4.14.2). A repeated answer hands out live tokens without rotating
 * anything, so it is served only to the holder that got it first: the same authenticated client
 * and, when the tokens are DPoP-bound, a fresh proof by the same key (RFC 9449 §5). Every time it
 * is served, an audit line says so. Anything else is refused; a rotated token presented by
 * another client ends the grant.
 */

interface Line {
  level: string;
  message: string;
  fields: Record<string, unknown>;
}

describe('attack: replaying a rotated refresh token within the grace window', () => {
  const lines: Line[] = [];
  const record =
    (level: string) =>
    (message: string, fields: Record<string, unknown> = {}) =>
      void lines.push({ level, message, fields });
  const logger: Logger = { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') };
  let stack: AttackStack;

  beforeAll(async () => {
    stack = await startAttackStack({ quiet: false, logger });
  });
  afterAll(async () => stack?.close());

  const proof = (key: DpopKey) => dpopPostProof(key, stack.metadata.token_endpoint);

  /** A client_secret_post client registered through DCR: its id and secret. */
  async function confidentialClient(): Promise<{ id: string; secret: string }> {
    const res = await postRegistration(stack, {
      client_name: 'grace attack confidential client',
      token_endpoint_auth_method: 'client_secret_post',
    });
    expect(res.status, res.text).toBe(201);
    return { id: res.body.client_id as string, secret: res.body.client_secret as string };
  }

  /** Credentials in the form: a public client's id, or a confidential client's id and secret. */
  const credentials = (client: string | { id: string; secret: string }): Record<string, string> =>
    typeof client === 'string' ? { client_id: client } : { client_id: client.id, client_secret: client.secret };

  /** Code flow; with `key`, the code exchange carries a proof (DPoP-bound tokens). */
  async function tokensFor(client: string | { id: string; secret: string }, key?: DpopKey): Promise<Record<string, string>> {
    const { verifier, challenge } = pkcePair();
    const clientId = typeof client === 'string' ? client : client.id;
    const params = await authorizeCode(stack, { clientId, challenge, ...(key && { extra: { dpop_jkt: key.jkt } }) });
    const res = await postForm(
      stack.metadata.token_endpoint,
      { ...codeGrantForm({ code: params.get('code')!, clientId, verifier, resource: stack.mcpUrl }), ...credentials(client) },
      key ? { dpop: await proof(key) } : {},
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.token_type).toBe(key ? 'DPoP' : 'Bearer');
    return res.body as Record<string, string>;
  }

  const refresh = async (client: string | { id: string; secret: string }, refreshToken: string, key?: DpopKey): Promise<JsonResponse> =>
    postForm(
      stack.metadata.token_endpoint,
      { grant_type: 'refresh_token', refresh_token: refreshToken, ...credentials(client), resource: stack.mcpUrl },
      key ? { dpop: await proof(key) } : {},
    );

  const expectNothingServed = (res: JsonResponse) => {
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toBe('invalid_grant');
    expect(res.body.access_token).toBeUndefined();
    expect(res.body.refresh_token).toBeUndefined();
  };

  const served = () => lines.filter((l) => l.fields.audit === 'refresh_grace.served');

  it('RFC 9700 §4.14.2: another client replaying the rotated token within the window is refused, the grant is revoked, and no grace line is written', async () => {
    const victim = await registerClient(stack);
    const thief = await registerClient(stack);
    const tokens = await tokensFor(victim);
    const first = await refresh(victim, tokens.refresh_token!);
    expect(first.status, first.text).toBe(200);
    const before = served().length;

    expectNothingServed(await refresh(thief, tokens.refresh_token!));
    // The leak ends the grant: the victim's newest refresh token is dead too, and so (RFC 7662
    // §2.2) is the access token that came with it, for any resource server that asks.
    expectNothingServed(await refresh(victim, first.body.refresh_token as string));
    const introspection = await postForm(stack.metadata.introspection_endpoint!, {
      token: first.body.access_token as string,
      client_id: victim,
    });
    expect(introspection.status, introspection.text).toBe(200);
    expect(introspection.body).toEqual({ active: false });
    expect(served().length).toBe(before);
  });

  /** A DPoP-bound grant of `client`, refreshed once with its key; `before`: the grace audit lines so far. */
  async function boundAndRefreshed(client: string | { id: string; secret: string }) {
    const key = await dpopKey();
    const tokens = await tokensFor(client, key);
    const first = await refresh(client, tokens.refresh_token!, key);
    expect(first.status, first.text).toBe(200);
    return { key, tokens, first, before: served().length };
  }

  it('RFC 9700 §4.14.2: another client racing the first refresh is never served the pair', async () => {
    const victim = await registerClient(stack);
    const thief = await registerClient(stack);
    const tokens = await tokensFor(victim);
    const [mine, stolen] = await Promise.all([refresh(victim, tokens.refresh_token!), refresh(thief, tokens.refresh_token!)]);
    expect(mine.status, mine.text).toBe(200);
    expectNothingServed(stolen);
  });

  it('RFC 9449 §5: a DPoP-bound refresh token replayed within the window without a proof or with another key is refused', async () => {
    const client = await registerClient(stack);
    const { tokens, before } = await boundAndRefreshed(client);

    const noProof = await refresh(client, tokens.refresh_token!);
    expect(noProof.status).toBe(400);
    expect(noProof.body.access_token).toBeUndefined();
    expect(noProof.body.refresh_token).toBeUndefined();
    expectNothingServed(await refresh(client, tokens.refresh_token!, await dpopKey()));
    expect(served().length).toBe(before);
  });

  it("RFC 9449 §5: a confidential client's refresh answered with a DPoP-bound access token is not repeated without the proof or with another key; the replay is reuse and ends the grant", async () => {
    for (const replayKey of [undefined, await dpopKey()]) {
      const client = await confidentialClient();
      const { key, tokens, first, before } = await boundAndRefreshed(client);
      expect(first.body.token_type).toBe('DPoP');

      expectNothingServed(await refresh(client, tokens.refresh_token!, replayKey));
      expectNothingServed(await refresh(client, first.body.refresh_token as string, key));
      expect(served().length).toBe(before);
    }
  });

  it('grace policy: the same client with the same DPoP key gets the same pair, and each time an audit line (client, account, key) without any token', async () => {
    const client = await registerClient(stack);
    const { key, tokens, first, before } = await boundAndRefreshed(client);

    const [again, andAgain] = await Promise.all([refresh(client, tokens.refresh_token!, key), refresh(client, tokens.refresh_token!, key)]);
    for (const repeat of [again, andAgain]) {
      expect(repeat.status, repeat.text).toBe(200);
      expect(repeat.body.access_token).toBe(first.body.access_token);
      expect(repeat.body.refresh_token).toBe(first.body.refresh_token);
    }
    const audit = served().slice(before);
    expect(audit).toHaveLength(2);
    for (const line of audit) {
      expect(line.level).toBe('info');
      expect(line.message).toBe('audit refresh_grace.served');
      expect(line.fields).toMatchObject({ audit: 'refresh_grace.served', client_id: client, dpop_jkt: key.jkt });
      expect(line.fields.account).toBeTypeOf('string');
    }
    const text = JSON.stringify(audit);
    for (const secret of [
      tokens.refresh_token!,
      tokens.access_token!,
      first.body.refresh_token as string,
      first.body.access_token as string,
    ]) {
      expect(text.includes(secret)).toBe(false);
    }
    // The pair stays usable: nothing was revoked by the repeats.
    expect((await refresh(client, first.body.refresh_token as string, key)).status).toBe(200);
  });
});
