/**
 * Assertions on `WWW-Authenticate` challenges (RFC 6750 §3, RFC 9728 §5.1, MCP §Scope Challenge
 * Handling). They throw {@link ResponseAssertionError}, a node:assert AssertionError (which every
 * test runner reports) whose message also shows the response's status, headers and body.
 */
import { parseWwwAuthenticate, type Challenge } from '@mcp-auth-kit/client/core';
import { headerValue, ResponseAssertionError, type ResponseLike } from './response-report.js';

export type { ResponseLike } from './response-report.js';

export interface BearerChallenge {
  scheme: 'bearer';
  error?: string;
  errorDescription?: string;
  /** `scope`, split on spaces. */
  scopes?: string[];
  resourceMetadata?: string;
  realm?: string;
  params: Record<string, string>;
}

export interface ChallengeExpectation {
  /** HTTP status (401 or 403 usually). */
  status?: number;
  /** The `error` code; `null` means the challenge must carry no `error` (RFC 6750 §3.1: no credentials). */
  error?: string | null;
  /** Scopes the challenge's `scope` must contain (others may be present unless `exactScopes`). */
  scopes?: readonly string[];
  /** `scope` must be exactly these scopes (any order). */
  exactScopes?: boolean;
  /** `resource_metadata` must equal this URL; `true` = must be present (default true). */
  resourceMetadata?: string | boolean;
}

function fail(response: ResponseLike, reason: string, actual: unknown, expected: unknown): never {
  throw new ResponseAssertionError(reason, response, { actual, expected });
}

/** Parses the Bearer challenge of a `WWW-Authenticate` value (RFC 9110 §11.6.1 syntax). */
export function parseBearerChallenge(header: string): BearerChallenge | undefined {
  let challenges: Challenge[];
  try {
    challenges = parseWwwAuthenticate(header);
  } catch {
    return undefined;
  }
  const bearer = challenges.find((c) => c.scheme === 'bearer');
  if (!bearer) return undefined;
  const p = bearer.params;
  return {
    scheme: 'bearer',
    params: { ...p },
    ...(p.error !== undefined && { error: p.error }),
    ...(p.error_description !== undefined && { errorDescription: p.error_description }),
    ...(p.scope !== undefined && { scopes: p.scope.split(' ').filter(Boolean) }),
    ...(p.resource_metadata !== undefined && { resourceMetadata: p.resource_metadata }),
    ...(p.realm !== undefined && { realm: p.realm }),
  };
}

/** Reads the response's Bearer challenge; fails when there is none or it cannot be parsed. */
export function getBearerChallenge(response: ResponseLike): BearerChallenge {
  const header = headerValue(response, 'www-authenticate');
  if (header === undefined)
    fail(response, `expected a WWW-Authenticate header on the HTTP ${response.status} response, found none`, undefined, 'Bearer …');
  const challenge = parseBearerChallenge(header);
  if (!challenge) fail(response, `expected a Bearer challenge, got WWW-Authenticate: ${header}`, header, 'Bearer …');
  return challenge;
}

/** Checks status and challenge; returns the parsed challenge for further checks. */
export function assertChallenge(response: ResponseLike, expected: ChallengeExpectation): BearerChallenge {
  if (expected.status !== undefined && response.status !== expected.status) {
    const header = headerValue(response, 'www-authenticate');
    fail(
      response,
      `expected HTTP ${expected.status}, got ${response.status}${header ? ` (WWW-Authenticate: ${header})` : ' (no WWW-Authenticate)'}`,
      response.status,
      expected.status,
    );
  }
  const challenge = getBearerChallenge(response);
  if (expected.error === null && challenge.error !== undefined) {
    fail(
      response,
      `expected a challenge without error (RFC 6750 §3.1: request without credentials), got error="${challenge.error}"`,
      challenge.error,
      undefined,
    );
  }
  if (typeof expected.error === 'string' && challenge.error !== expected.error) {
    fail(
      response,
      `expected error="${expected.error}" in the challenge, got ${challenge.error === undefined ? 'no error' : `error="${challenge.error}"`}`,
      challenge.error,
      expected.error,
    );
  }
  if (expected.scopes) {
    const got = challenge.scopes ?? [];
    const missing = expected.scopes.filter((s) => !got.includes(s));
    if (missing.length) {
      fail(
        response,
        `expected the challenge's scope to include ${missing.join(' ')}, got ${challenge.scopes ? `scope="${got.join(' ')}"` : 'no scope'}`,
        got.join(' '),
        expected.scopes.join(' '),
      );
    }
    if (expected.exactScopes) {
      const extra = got.filter((s) => !expected.scopes!.includes(s));
      if (extra.length)
        fail(
          response,
          `expected the challenge's scope to be exactly "${expected.scopes.join(' ')}", got scope="${got.join(' ')}"`,
          got.join(' '),
          expected.scopes.join(' '),
        );
    }
  }
  const rm = expected.resourceMetadata ?? true;
  if (rm !== false) {
    if (challenge.resourceMetadata === undefined) {
      fail(response, 'expected resource_metadata in the challenge (RFC 9728 §5.1), found none', undefined, rm === true ? 'a URL' : rm);
    }
    if (typeof rm === 'string' && challenge.resourceMetadata !== rm) {
      fail(response, `expected resource_metadata="${rm}", got "${challenge.resourceMetadata}"`, challenge.resourceMetadata, rm);
    }
  }
  return challenge;
}

type Extra = Omit<ChallengeExpectation, 'status' | 'error'>;

/** 401 without `error`: the request had no credentials (RFC 6750 §3.1, MCP §Authorization). */
export function assertUnauthorized(response: ResponseLike, expected: Extra = {}): BearerChallenge {
  return assertChallenge(response, { ...expected, status: 401, error: null });
}

/** 401 `invalid_token`: expired, wrong audience, bad signature, revoked… (RFC 6750 §3.1). */
export function assertInvalidToken(response: ResponseLike, expected: Extra = {}): BearerChallenge {
  return assertChallenge(response, { ...expected, status: 401, error: 'invalid_token' });
}

/** 403 `insufficient_scope` naming the scopes to step up to (MCP §Scope Challenge Handling). */
export function assertInsufficientScope(response: ResponseLike, expected: Extra & { scopes: readonly string[] }): BearerChallenge {
  return assertChallenge(response, { ...expected, status: 403, error: 'insufficient_scope' });
}

/** The request was let through (2xx), e.g. after step-up; shows the challenge when it was not. */
export function assertAuthorized(response: ResponseLike): void {
  if (response.status >= 200 && response.status < 300) return;
  const header = headerValue(response, 'www-authenticate');
  fail(
    response,
    `expected the request to be authorized, got HTTP ${response.status}${header ? ` (WWW-Authenticate: ${header})` : ''}`,
    response.status,
    '2xx',
  );
}
