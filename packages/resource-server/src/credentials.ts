import { extractBearerToken, MAX_TOKEN_LENGTH, refuseTokenOutsideHeader, type BearerSources } from './bearer.js';
import { ConnectionMemo } from './connection-memo.js';
import { ResourceServerError } from './errors.js';
import type { TokenScheme } from './types.js';

export type { TokenScheme };

export interface Credentials {
  scheme: TokenScheme;
  token: string;
}

// RFC 9449 §7.1: credentials = "DPoP" 1*SP token68 (same token68 as RFC 6750's b64token);
// the scheme is case-insensitive (RFC 9110 §11.1).
const DPOP = /^DPoP +([A-Za-z0-9\-._~+/]+=*)$/i;

/**
 * Reads the access token and its scheme from the `Authorization` header: `Bearer` always
 * (RFC 6750 §2.1), `DPoP` only when `acceptDpop` (RFC 9449 §7.1); otherwise exactly like
 * {@link extractBearerToken} (token in the query or the body refused, malformed header refused).
 * @throws {ResourceServerError}
 */
export function extractCredentials(sources: BearerSources, acceptDpop: boolean): Credentials {
  const header = sources.authorization;
  if (acceptDpop && header !== undefined && /^dpop(?: |$)/i.test(header)) {
    // the URL and body checks come first, as for Bearer
    refuseTokenOutsideHeader(sources);
    const match = DPOP.exec(header);
    if (match === null) throw new ResourceServerError('malformed_authorization_header', { detail: { scheme: 'dpop' } });
    const token = match[1]!;
    if (token.length > MAX_TOKEN_LENGTH) throw new ResourceServerError('token_too_large', { detail: { length: token.length } });
    return { scheme: 'dpop', token };
  }
  return { scheme: 'bearer', token: extractBearerToken(sources) };
}

/**
 * {@link extractCredentials} with the last `Authorization` header of each connection and what it
 * gave (a {@link ConnectionMemo}): matching the token's grammar means reading all of it on every
 * request. Only a header that passed is kept, with its frozen result; the query and body checks
 * run for every request, first, as in {@link extractCredentials}.
 */
export class ConnectionCredentials {
  readonly #memo = new ConnectionMemo<Credentials>();
  readonly #fromHeader: (header: string) => Credentials;

  constructor(private readonly acceptDpop: boolean) {
    this.#fromHeader = (header) => Object.freeze(extractCredentials({ authorization: header }, acceptDpop));
  }

  extract(sources: BearerSources, connection: object | undefined): Credentials {
    const header = sources.authorization;
    if (connection === undefined || header === undefined) return extractCredentials(sources, this.acceptDpop);
    refuseTokenOutsideHeader(sources);
    return this.#memo.get(connection, header, this.#fromHeader);
  }
}
