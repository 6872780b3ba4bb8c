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
  const cursor = new ChallengeCursor(header);
  const challenges: Challenge[] = [];
  for (;;) {
    cursor.skipSeparators();
    if (cursor.done) break;
    challenges.push(cursor.readChallenge());
  }
  return challenges;
}

/** A read position in one `WWW-Authenticate` field value, with the grammar's pieces read from it. */
class ChallengeCursor {
  private i = 0;
  constructor(private readonly s: string) {}

  get done(): boolean {
    return this.i >= this.s.length;
  }

  private fail(why: string): never {
    throw new WwwAuthenticateParseError(`invalid WWW-Authenticate header: ${why} at offset ${this.i}`);
  }

  private skipOws(): void {
    while (this.i < this.s.length && (this.s[this.i] === ' ' || this.s[this.i] === '\t')) this.i++;
  }

  /** Commas and whitespace: between challenges, and between the auth-params of one. */
  skipSeparators(): void {
    while (this.i < this.s.length && (this.s[this.i] === ',' || this.s[this.i] === ' ' || this.s[this.i] === '\t')) this.i++;
  }

  private readToken(): string {
    const start = this.i;
    while (this.i < this.s.length && TCHAR.test(this.s[this.i]!)) this.i++;
    return this.s.slice(start, this.i);
  }

  private readQuoted(): string {
    const s = this.s;
    this.i++; // opening quote
    let out = '';
    while (this.i < s.length) {
      const c = s[this.i]!;
      if (c === '\\') {
        if (this.i + 1 >= s.length) this.fail('dangling escape');
        out += s[this.i + 1];
        this.i += 2;
      } else if (c === '"') {
        this.i++;
        return out;
      } else {
        out += c;
        this.i++;
      }
    }
    return this.fail('unterminated quoted-string');
  }

  /** Looks ahead: is there `token BWS "=" BWS value` at the cursor (an auth-param, not token68)? */
  private atParam(): boolean {
    const save = this.i;
    const name = this.readToken();
    this.skipOws();
    let ok = false;
    if (name && this.s[this.i] === '=') {
      this.i++;
      this.skipOws();
      ok = this.i < this.s.length && this.s[this.i] !== ',' && this.s[this.i] !== '=';
    }
    this.i = save;
    return ok;
  }

  /** One challenge: its scheme, then its auth-params, its token68, or nothing. */
  readChallenge(): Challenge {
    const scheme = this.readToken();
    if (!scheme) this.fail('expected an auth-scheme');
    const challenge: Challenge = { scheme: scheme.toLowerCase(), params: {} };
    const next = this.s[this.i];
    if (!this.done && next !== ' ' && next !== '\t' && next !== ',') this.fail('unexpected character after auth-scheme');
    this.skipOws();
    if (this.done || this.s[this.i] === ',') return challenge;
    if (this.atParam()) this.readParams(challenge.params);
    else challenge.token68 = this.readToken68();
    return challenge;
  }

  /** token68, which must end the challenge (else this is the next challenge's scheme after one without parameters, which is malformed). */
  private readToken68(): string {
    const s = this.s;
    const start = this.i;
    while (this.i < s.length && TOKEN68CHAR.test(s[this.i]!)) this.i++;
    while (this.i < s.length && s[this.i] === '=') this.i++;
    const candidate = s.slice(start, this.i);
    this.skipOws();
    if (candidate && (this.done || s[this.i] === ',')) return candidate;
    return this.fail('expected token68 or auth-param');
  }

  /** The auth-param list of one challenge, up to the end or the next challenge's scheme. */
  private readParams(params: Record<string, string>): void {
    const s = this.s;
    for (;;) {
      const name = this.readToken().toLowerCase();
      this.skipOws();
      this.i++; // '='
      this.skipOws();
      let value: string;
      if (s[this.i] === '"') {
        value = this.readQuoted();
      } else {
        const start = this.i;
        while (this.i < s.length && s[this.i] !== ',' && s[this.i] !== ' ' && s[this.i] !== '\t') this.i++;
        value = s.slice(start, this.i);
      }
      if (Object.hasOwn(params, name)) this.fail(`repeated parameter "${name}"`);
      params[name] = value;
      this.skipOws();
      if (this.done) return;
      if (s[this.i] !== ',') this.fail('expected "," between auth-params');
      // Commas may separate params of this challenge or start the next challenge.
      this.skipSeparators();
      if (this.done || !this.atParam()) return;
    }
  }
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
