/**
 * `WWW-Authenticate` challenges: the parser MCP clients use (RFC 9110 §11.6.1) and the builder
 * resource servers use (RFC 6750 §3, RFC 9728 §5.1, RFC 9449 §7.1). One grammar, both ways.
 */
import { isScopeToken } from './scope.js';

export class WwwAuthenticateParseError extends Error {
  override name = 'WwwAuthenticateParseError';
}

/** One challenge of a `WWW-Authenticate` header (RFC 9110 §11.6.1). */
export interface Challenge {
  /** Auth scheme, lower-cased (scheme names are case-insensitive). */
  scheme: string;
  /** Auth parameters; names lower-cased, values unquoted and unescaped. */
  params: Record<string, string>;
  /** The token68 form, when the challenge carries one instead of parameters. */
  token68?: string;
}

const TCHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/;
const TOKEN68CHAR = /[A-Za-z0-9\-._~+/]/;

/**
 * Parses a `WWW-Authenticate` field value into its challenges: several challenges per field,
 * quoted strings with `\` escapes, token68, case-insensitive scheme and parameter names.
 * Unquoted parameter values are read up to the next comma or whitespace, which tolerates
 * servers that send URLs unquoted. Throws {@link WwwAuthenticateParseError} on malformed input
 * and on a parameter repeated within one challenge (RFC 9110: each name occurs only once).
 */
export function parseWwwAuthenticate(header: string): Challenge[] {
  const s = header;
  let i = 0;
  const fail = (why: string): never => {
    throw new WwwAuthenticateParseError(`invalid WWW-Authenticate header: ${why} at offset ${i}`);
  };
  const skipOws = () => {
    while (i < s.length && (s[i] === ' ' || s[i] === '\t')) i++;
  };
  const readToken = (): string => {
    const start = i;
    while (i < s.length && TCHAR.test(s[i]!)) i++;
    return s.slice(start, i);
  };
  const readQuoted = (): string => {
    i++; // opening quote
    let out = '';
    while (i < s.length) {
      const c = s[i]!;
      if (c === '\\') {
        if (i + 1 >= s.length) fail('dangling escape');
        out += s[i + 1];
        i += 2;
      } else if (c === '"') {
        i++;
        return out;
      } else {
        out += c;
        i++;
      }
    }
    return fail('unterminated quoted-string');
  };
  /** Looks ahead: is there `token BWS "=" BWS value` at the cursor (an auth-param, not token68)? */
  const atParam = (): boolean => {
    const save = i;
    const name = readToken();
    skipOws();
    let ok = false;
    if (name && s[i] === '=') {
      i++;
      skipOws();
      ok = i < s.length && s[i] !== ',' && s[i] !== '=';
    }
    i = save;
    return ok;
  };

  const challenges: Challenge[] = [];
  for (;;) {
    while (i < s.length && (s[i] === ',' || s[i] === ' ' || s[i] === '\t')) i++;
    if (i >= s.length) break;
    const scheme = readToken();
    if (!scheme) fail('expected an auth-scheme');
    const challenge: Challenge = { scheme: scheme.toLowerCase(), params: {} };
    challenges.push(challenge);
    if (i < s.length && s[i] !== ' ' && s[i] !== '\t' && s[i] !== ',') fail('unexpected character after auth-scheme');
    skipOws();
    if (i >= s.length || s[i] === ',') {
      continue;
    }
    if (!atParam()) {
      // token68, or the next challenge's scheme when this one has no parameters.
      const start = i;
      while (i < s.length && TOKEN68CHAR.test(s[i]!)) i++;
      while (i < s.length && s[i] === '=') i++;
      const candidate = s.slice(start, i);
      skipOws();
      if (candidate && (i >= s.length || s[i] === ',')) {
        challenge.token68 = candidate;
        continue;
      }
      fail('expected token68 or auth-param');
    }
    // auth-param list
    for (;;) {
      const name = readToken().toLowerCase();
      skipOws();
      i++; // '='
      skipOws();
      let value: string;
      if (s[i] === '"') {
        value = readQuoted();
      } else {
        const start = i;
        while (i < s.length && s[i] !== ',' && s[i] !== ' ' && s[i] !== '\t') i++;
        value = s.slice(start, i);
      }
      if (Object.hasOwn(challenge.params, name)) fail(`repeated parameter "${name}"`);
      challenge.params[name] = value;
      skipOws();
      if (i >= s.length) break;
      if (s[i] !== ',') fail('expected "," between auth-params');
      // Commas may separate params of this challenge or start the next challenge.
      while (i < s.length && (s[i] === ',' || s[i] === ' ' || s[i] === '\t')) i++;
      if (i >= s.length) break;
      if (!atParam()) break;
    }
  }
  return challenges;
}

export interface ChallengeParams {
  /** URL of the RFC 9728 metadata document (RFC 9728 §5.1). */
  resourceMetadata?: string;
  /** Scopes the request needs (RFC 6750 §3); space-joined on the wire. */
  scope?: readonly string[] | string;
  /** RFC 6750 §3.1 / RFC 9449 §7.1 error code. */
  error?: string;
  errorDescription?: string;
  realm?: string;
  /** Authentication scheme of the challenge (default `Bearer`; `DPoP` per RFC 9449 §7.1). */
  scheme?: 'Bearer' | 'DPoP';
  /** RFC 9449 §7.1 `algs`: the JWS algorithms accepted for DPoP proofs (DPoP challenges only). */
  algs?: readonly string[];
}

// RFC 6750 §3: error_description is %x20-21 / %x23-5B / %x5D-7E (plus `"` and `\` once escaped
// as quoted-pairs). Anything else (CR, LF, controls, non-ASCII) is replaced so the header can
// never be split or rejected by Node's header check.
const NOT_VISIBLE_ASCII_OR_SPACE = /[^\x20-\x7e]/g;

/** Wraps a value as an RFC 9110 quoted-string, escaping `\` and `"` and replacing non-printables. */
export function quoteValue(value: string): string {
  return `"${value.replace(NOT_VISIBLE_ASCII_OR_SPACE, '?').replace(/[\\"]/g, '\\$&')}"`;
}

/**
 * Builds a `WWW-Authenticate: Bearer …` challenge (RFC 6750 §3, RFC 9728 §5.1), or a `DPoP …`
 * one (RFC 9449 §7.1, with `algs`) when `scheme` is `DPoP`.
 * With no `error`, no `error_description` is emitted either (RFC 6750 §3.1: a request without
 * credentials gets no error information).
 */
export function buildChallenge(params: ChallengeParams): string {
  const parts: string[] = [];
  if (params.realm !== undefined) parts.push(`realm=${quoteValue(params.realm)}`);
  if (params.error !== undefined) {
    parts.push(`error=${quoteValue(params.error)}`);
    if (params.errorDescription !== undefined) {
      parts.push(`error_description=${quoteValue(params.errorDescription)}`);
    }
  }
  const scopes = typeof params.scope === 'string' ? params.scope.split(' ') : (params.scope ?? []);
  const validScopes = scopes.filter(isScopeToken);
  if (validScopes.length > 0) parts.push(`scope=${quoteValue(validScopes.join(' '))}`);
  if (params.resourceMetadata !== undefined) {
    parts.push(`resource_metadata=${quoteValue(params.resourceMetadata)}`);
  }
  const scheme = params.scheme ?? 'Bearer';
  if (scheme === 'DPoP' && params.algs !== undefined && params.algs.length > 0) {
    parts.push(`algs=${quoteValue(params.algs.filter(isScopeToken).join(' '))}`);
  }
  return parts.length > 0 ? `${scheme} ${parts.join(', ')}` : scheme;
}
