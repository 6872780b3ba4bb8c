import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieJar } from 'tough-cookie';
import { pinoLogger } from '@mcp-auth-kit/authorization-server';
import {
  authorizationUrl,
  authorizeCode,
  callWhoami,
  codeGrantForm,
  frontChannel,
  fullFlow,
  pkcePair,
  postForm,
  postRegistration,
  refresh,
  registerClient,
  startAttackStack,
  type AttackStack,
} from './helpers/support.js';

/**
 * Credentials never reach the logs (MCP security best practices §Token handling; RFC 6749 §10.3
 * / §10.5; our code rules): the AS runs with its default logger (pino JSON, at debug level,
 * captured here), stderr is captured too, and the MCP middleware's logger, through flows, failures and attacks that make it log refusals;
 * then no token, code, verifier, secret or password may appear in any captured line.
 */
describe('attack: credentials in logs while the stack is under attack', () => {
  let stack: AttackStack;
  let loginStack: AttackStack;
  const captured: string[] = [];
  const secrets = new Set<string>();
  const originalWrite = process.stderr.write.bind(process.stderr);

  beforeAll(async () => {
    process.stderr.write = ((chunk: unknown, ...rest: unknown[]) => {
      captured.push(String(chunk));
      return originalWrite(chunk as string, ...(rest as []));
    }) as typeof process.stderr.write;
    const mcpLogger = {
      debug: (m: string, d?: unknown) => captured.push(`mcp debug ${m} ${JSON.stringify(d)}`),
      info: (m: string, d?: unknown) => captured.push(`mcp info ${m} ${JSON.stringify(d)}`),
      warn: (m: string, d?: unknown) => captured.push(`mcp warn ${m} ${JSON.stringify(d)}`),
      onValidation: (o: unknown) => captured.push(`mcp validation ${JSON.stringify(o)}`),
    };
    // The AS's default logger (pino JSON lines), at debug level, written into the capture.
    const destination = { write: (line: string) => void captured.push(line) };
    stack = await startAttackStack({ quiet: false, mcpLogger, logger: pinoLogger({ level: 'debug', name: 'auth-server', destination }) });
    loginStack = await startAttackStack({
      quiet: false,
      devAutoLogin: undefined,
      logger: pinoLogger({ level: 'debug', name: 'auth-server', destination }),
    });
  });
  afterAll(async () => {
    process.stderr.write = originalWrite;
    await stack?.close();
    await loginStack?.close();
  });

  it('flows, refusals, replays and forgeries leave no credential in any log line', async () => {
    // Public client: code, verifier, tokens, refresh, reuse detection, revocation.
    const publicClient = await registerClient(stack);
    const tokens = await fullFlow(stack, publicClient);
    for (const s of [tokens.code, tokens.verifier, tokens.access_token, tokens.refresh_token!]) secrets.add(s);
    const rotated = await refresh(stack, publicClient, tokens.refresh_token!);
    secrets.add(rotated.body.access_token as string);
    secrets.add(rotated.body.refresh_token as string);
    await refresh(stack, publicClient, tokens.refresh_token!);
    await postForm(
      stack.metadata.token_endpoint,
      codeGrantForm({ code: tokens.code, clientId: publicClient, verifier: tokens.verifier, resource: stack.mcpUrl }),
    );
    await postForm(stack.metadata.revocation_endpoint!, { token: rotated.body.refresh_token as string, client_id: publicClient });

    // Confidential client: secret and registration access token; wrong and right secrets.
    const reg = await postRegistration(stack, {
      client_name: 'confidential',
      redirect_uris: ['https://app.example.test/cb'],
      application_type: 'web',
      token_endpoint_auth_method: 'client_secret_post',
    });
    expect(reg.status).toBe(201);
    const secret = reg.body.client_secret as string;
    secrets.add(secret);
    if (typeof reg.body.registration_access_token === 'string') secrets.add(reg.body.registration_access_token);
    const { verifier, challenge } = pkcePair();
    const code = (
      await authorizeCode(stack, { clientId: reg.body.client_id as string, redirectUri: 'https://app.example.test/cb', challenge })
    ).get('code')!;
    secrets.add(code);
    secrets.add(verifier);
    const wrongSecret = `${secret.slice(0, -6)}WRONG1`;
    secrets.add(wrongSecret);
    const confidentialForm = codeGrantForm({
      code,
      clientId: reg.body.client_id as string,
      verifier,
      resource: stack.mcpUrl,
      redirectUri: 'https://app.example.test/cb',
    });
    await postForm(stack.metadata.token_endpoint, { ...confidentialForm, client_secret: wrongSecret });
    const confidential = await postForm(stack.metadata.token_endpoint, { ...confidentialForm, client_secret: secret });
    if (typeof confidential.body.access_token === 'string') secrets.add(confidential.body.access_token);
    await fetch(`${stack.metadata.registration_endpoint}/${reg.body.client_id as string}`, {
      headers: { authorization: 'Bearer wrong-registration-access-token-123' },
    }).then((r) => r.arrayBuffer());
    secrets.add('wrong-registration-access-token-123');

    // MCP server: valid, tampered, and query-string tokens.
    await callWhoami(stack.mcpUrl, tokens.access_token).then((r) => r.arrayBuffer());
    const tampered = `${tokens.access_token.slice(0, -6)}AAAAAA`;
    secrets.add(tampered);
    await callWhoami(stack.mcpUrl, tampered).then((r) => r.arrayBuffer());
    await callWhoami(`${stack.mcpUrl}?access_token=${tokens.access_token}`, undefined).then((r) => r.arrayBuffer());

    // Login page: a wrong and a right password.
    const jar = new CookieJar();
    const loginClient = await registerClient(loginStack);
    const page = await frontChannel(
      loginStack.issuer,
      authorizationUrl(loginStack, { clientId: loginClient, challenge: pkcePair().challenge }),
      jar,
    );
    expect(page.kind).toBe('stopped');
    const body = (page as { body: string }).body;
    const action = new URL(/<form method="post" action="([^"]+)"/.exec(body)![1]!.replace(/&amp;/g, '&'), loginStack.issuer).href;
    const csrf = /name="csrf" value="([^"]+)"/.exec(body)![1]!;
    secrets.add(csrf);
    for (const password of ['Wr0ng-Pa55word-Attempt', 'demo-password']) {
      secrets.add(password);
      const res = await fetch(action, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: await jar.getCookieString(action) },
        body: new URLSearchParams({ csrf, action: 'login', username: 'demo', password }).toString(),
      });
      await res.arrayBuffer();
    }

    const log = captured.join('\n');
    expect(captured.length, 'the stack logged nothing: the test would prove nothing').toBeGreaterThan(20);
    expect(log).toContain('"name":"auth-server"');
    expect(log).toContain('request refused');
    for (const s of secrets) {
      expect(s.length).toBeGreaterThanOrEqual(8);
      expect(log.includes(s), `a credential (${s.slice(0, 6)}…) appeared in the logs`).toBe(false);
    }
    // The signature part alone must not leak either (a "redacted" JWT that keeps its signature is a token).
    for (const t of [tokens.access_token, rotated.body.access_token as string]) {
      expect(log.includes(t.split('.')[2]!)).toBe(false);
    }
  });
});
