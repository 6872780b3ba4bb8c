/**
 * The provider's API (what the third party's tokens are for): `GET /api/files` lists the
 * signed-in user's files (scope `files.read`), `GET /api/whoami` says whose token it is.
 * Bearer tokens in the Authorization header only (RFC 6750 §2.1), with its challenges (§3.1).
 */
import { buildChallenge, isAccessTokenSyntax } from '@mcp-auth-kit/protocol';
import type { Request, Response } from 'express';
import { sendJson } from './oauth-response.js';
import type { LiveAccessToken, ProviderTokens } from './provider-tokens.js';

export const FILES_SCOPE = 'files.read';

export interface ApiUser {
  displayName?: string;
  files: { id: string; name: string; content: string }[];
}

export function providerApi(realm: string, tokens: ProviderTokens, findUser: (username: string) => ApiUser | undefined) {
  const challenge = (res: Response, status: number, error?: string, description?: string, scope?: string) => {
    res.set('www-authenticate', buildChallenge({ realm, error, errorDescription: description, scope }));
    sendJson(res, status, error ? { error, error_description: description } : { error: 'unauthorized' });
  };

  /** The token's owner, or undefined after the challenge was sent. */
  function authenticate(req: Request, res: Response, scope?: string): (LiveAccessToken & { user: ApiUser }) | undefined {
    const header = req.headers.authorization;
    if (header === undefined || !/^bearer /i.test(header)) return void challenge(res, 401);
    const token = header.slice(7).trim();
    if (!isAccessTokenSyntax(token)) return void challenge(res, 400, 'invalid_request', 'malformed bearer token');
    const live = tokens.accessToken(token);
    const user = live && findUser(live.username);
    if (!live || !user) return void challenge(res, 401, 'invalid_token', 'the access token is not valid');
    if (scope !== undefined && !live.scopes.includes(scope)) {
      return void challenge(res, 403, 'insufficient_scope', `needs ${scope}`, scope);
    }
    return { ...live, user };
  }

  return {
    files(req: Request, res: Response): void {
      const caller = authenticate(req, res, FILES_SCOPE);
      if (!caller) return;
      sendJson(res, 200, { files: caller.user.files.map(({ id, name, content }) => ({ id, name, size: Buffer.byteLength(content) })) });
    },
    whoami(req: Request, res: Response): void {
      const caller = authenticate(req, res);
      if (!caller) return;
      sendJson(res, 200, {
        sub: caller.username,
        ...(caller.user.displayName !== undefined && { name: caller.user.displayName }),
        client_id: caller.clientId,
        scope: caller.scopes.join(' '),
      });
    },
  };
}
