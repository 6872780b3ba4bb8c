/**
 * A token request that carries only a client's own assertion — `grant_type=…jwt-bearer` and
 * `assertion`, no client authentication, as the MCP client credentials extension shows it —
 * is authenticated by that assertion: RFC 7523 §3.1 leaves client authentication with a JWT
 * grant to the AS, and the assertion is signed by the client's registered key.
 *
 * oidc-provider authenticates every client before a grant handler runs and has no such rule, so
 * this middleware hands the same JWT to it as the request's `private_key_jwt` client assertion
 * (RFC 7523 §2.2, whose checks are those of §3: signature by the client's registered keys, `iss`
 * = `sub` = client_id, `aud`, `exp`, one-time `jti`). Such a client therefore registers
 * `token_endpoint_auth_method: private_key_jwt`; the grant then checks the assertion again as a
 * grant (client-assertion-verify.ts), with its own shorter lifetime and replay record.
 *
 * Only a request with no client credentials at all is touched (no `Authorization` header, no
 * `client_secret`, `client_assertion` or `client_assertion_type`; a `client_id` must then name the
 * assertion's `sub`, which oidc-provider checks), and never an ID-JAG (assertion-typ.ts), which
 * comes with the client's own authentication. The body is read here, up to oidc-provider's limit,
 * and put back on the request with the two parameters added, for oidc-provider to read as sent.
 */
import type { IncomingMessage } from 'node:http';
import type Provider from 'oidc-provider';
import { isIdJagTyped } from './assertion-typ.js';
import { JWT_BEARER_GRANT_TYPE } from './constants.js';

/** oidc-provider's own body limit (lib/shared/selective_body.js): a longer body is its to refuse. */
const BODY_LIMIT = 56 * 1024;
const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const CLIENT_CREDENTIALS = ['client_secret', 'client_assertion', 'client_assertion_type'];

/**
 * The body with the assertion added as the client assertion; undefined when the request is not one
 * to touch (a request with an `Authorization` header never gets here: the middleware's eligibility).
 */
export function withAssertionAsClientAuth(body: string): string | undefined {
  const form = new URLSearchParams(body);
  const grant = form.getAll('grant_type');
  const assertion = form.getAll('assertion');
  if (grant.length !== 1 || grant[0] !== JWT_BEARER_GRANT_TYPE || assertion.length !== 1) return undefined;
  if (CLIENT_CREDENTIALS.some((name) => form.has(name)) || isIdJagTyped(assertion[0])) return undefined;
  const added = new URLSearchParams({ client_assertion_type: CLIENT_ASSERTION_TYPE, client_assertion: assertion[0]! });
  return `${body}${body ? '&' : ''}${added.toString()}`;
}

/**
 * Reads exactly `length` bytes and puts `rewrite(body)` back in front of the stream before it
 * ends, synchronously in the last `data` event (an `unshift` after `end` is not allowed).
 * Resolves false when the stream ended short (the body is gone: the request is answered here).
 */
function rewriteBody(req: IncomingMessage, length: number, rewrite: (body: Buffer) => Buffer): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.pause();
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.length;
      if (received < length) return;
      stop();
      req.unshift(rewrite(Buffer.concat(chunks, received)));
      resolve(true);
    };
    const onEnd = () => {
      stop();
      resolve(false);
    };
    const onError = (err: Error) => {
      stop();
      reject(err);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

/** Installs the middleware in front of oidc-provider's token endpoint (`/token` under the mount path). */
export function installAssertionAuthentication(provider: Provider): void {
  provider.use(async (ctx, next) => {
    const length = Number(ctx.get('content-length'));
    const eligible =
      ctx.method === 'POST' &&
      ctx.path === '/token' &&
      ctx.is('application/x-www-form-urlencoded') &&
      Number.isSafeInteger(length) &&
      length > 0 &&
      length <= BODY_LIMIT &&
      !ctx.get('authorization');
    if (!eligible) return next();
    const req = ctx.req;
    const complete = await rewriteBody(req, length, (body) => {
      const rewritten = withAssertionAsClientAuth(body.toString('utf8'));
      if (rewritten === undefined) return body;
      const bytes = Buffer.from(rewritten, 'utf8');
      req.headers['content-length'] = String(bytes.length);
      return bytes;
    });
    if (!complete) {
      ctx.status = 400;
      ctx.body = { error: 'invalid_request', error_description: 'the request body is shorter than its Content-Length' };
      return;
    }
    return next();
  });
}
