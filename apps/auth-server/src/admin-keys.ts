/** The admin tool's `keys …` and `cookie-keys …` commands: signing and cookie key rotation. */
import { createAdminService } from '@mcp-auth-kit/authorization-server';
import { terminalText } from '@mcp-auth-kit/protocol';
import { type AdminCommand, type AdminContext, CLI_ACTOR, RefusedError, userRow } from './admin-command.js';
import { signedTokenLifetimes } from './admin-config.js';

/** How long a retired signing key stays published unless told otherwise (never less than the longest token lifetime). */
const DEFAULT_RETIRE_AFTER = 86400;

async function rotateSigningKeys({ io, env, store, values }: AdminContext): Promise<void> {
  const text = values['retire-after'];
  const retireAfter = text === undefined ? undefined : /^\d+$/.test(text.trim()) ? Number(text) : NaN;
  if (retireAfter !== undefined && !Number.isSafeInteger(retireAfter))
    throw new RefusedError('--retire-after must be a whole number of seconds');
  const ttl = signedTokenLifetimes(env);
  // Resource servers verify a token with the key it names: dropping that key from the
  // JWKS before the token expires makes them refuse a token that is still valid.
  if (retireAfter !== undefined && retireAfter < ttl.longest) {
    throw new RefusedError(
      `--retire-after ${retireAfter} is too short: the previous key must stay published for at least ${ttl.longest} s, ` +
        `the longest lifetime of a token it signed (access tokens ${ttl.accessToken} s, ID tokens ${ttl.idToken} s); ` +
        'otherwise resource servers refuse tokens that have not expired yet',
    );
  }
  const rotating = createAdminService({ store, longestTokenLifetime: ttl.longest });
  const keys = await rotating.rotateSigningKeys(CLI_ACTOR, retireAfter ?? Math.max(DEFAULT_RETIRE_AFTER, ttl.longest));
  for (const k of keys) io.out(userRow([k.status, k.kid]));
  io.out(terminalText`restart the authorization server instances to sign with the new current key`);
}

async function listSigningKeys({ io, service }: AdminContext): Promise<void> {
  for (const k of await service.listSigningKeys()) io.out(userRow([k.status, k.kid, k.alg]));
}

async function rotateCookieKeys({ io, service }: AdminContext): Promise<void> {
  // Key material is never printed: only what changed.
  const before = (await service.cookieKeys()).count;
  const after = (await service.rotateCookieKeys(CLI_ACTOR)).count;
  const dropped = Math.max(0, before + 1 - after);
  io.out(
    terminalText`added a new cookie key; ${after} kept: the new one signs, ${after - 1} older still verify${dropped ? `, ${dropped} oldest dropped` : ''}`,
  );
  io.out(terminalText`restart the authorization server instances to sign cookies with the new key`);
}

export const KEY_COMMANDS: Readonly<Record<string, AdminCommand>> = {
  'keys rotate': rotateSigningKeys,
  'keys list': listSigningKeys,
  'cookie-keys rotate': rotateCookieKeys,
};
