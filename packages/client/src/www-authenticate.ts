import { ERR, McpAuthError } from './errors.js';

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
 * servers that send URLs unquoted. Throws `MCP_AUTH_WWW_AUTHENTICATE_PARSE` on malformed input
 * and on a parameter repeated within one challenge (RFC 9110: each name occurs only once).
 */
export function parseWwwAuthenticate(header: string): Challenge[] {
  const s = header;
  let i = 0;
  const fail = (why: string): never => {
    throw new McpAuthError(ERR.WWW_AUTHENTICATE_PARSE, `invalid WWW-Authenticate header: ${why} at offset ${i}`);
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
      if (Object.prototype.hasOwnProperty.call(challenge.params, name)) fail(`repeated parameter "${name}"`);
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

/**
 * The OAuth challenge of a response for MCP purposes: Bearer or DPoP (RFC 9449 §7.1), preferring
 * the one that carries an `error`; parameters of the other one (e.g. `resource_metadata`) fill
 * the gaps. Parse errors yield undefined.
 */
export function oauthChallenge(response: Response): Challenge | undefined {
  const header = response.headers.get('www-authenticate');
  if (!header) return undefined;
  let all: Challenge[];
  try {
    all = parseWwwAuthenticate(header).filter((c) => c.scheme === 'bearer' || c.scheme === 'dpop');
  } catch {
    return undefined;
  }
  const chosen = all.find((c) => c.params.error) ?? all.find((c) => c.scheme === 'bearer') ?? all[0];
  if (!chosen) return undefined;
  const merged: Record<string, string> = {};
  for (const c of all) Object.assign(merged, c.params);
  return { scheme: chosen.scheme, params: { ...merged, ...chosen.params } };
}

/** The Bearer challenge of a response, if any (parse errors yield undefined: treat as no guidance). */
export function bearerChallenge(response: Response): Challenge | undefined {
  const header = response.headers.get('www-authenticate');
  if (!header) return undefined;
  try {
    return parseWwwAuthenticate(header).find((c) => c.scheme === 'bearer');
  } catch {
    return undefined;
  }
}
