import { deepStrictEqual } from 'node:assert/strict';

/** What an HTTP client of the tests returns: supertest, or the helpers' `{ status, body }`. */
export interface ErrorResponse {
  status: number;
  body: unknown;
}

/**
 * Asserts an OAuth error response (RFC 6749 §5.2, RFC 6750 §3.1, RFC 7591 §3.2.2): the HTTP
 * status and the `error` code of the JSON body, checked together so a failure shows both.
 * Runner-neutral (node:assert), as everything in test-utils.
 */
export function expectOAuthError(res: ErrorResponse, error: string, status = 400): void {
  const body = res.body as { error?: unknown } | undefined;
  deepStrictEqual(
    { status: res.status, error: body?.error },
    { status, error },
    `expected ${status} ${error}: ${JSON.stringify(res.body)}`,
  );
}
