import type { FetchLike, HttpDeps } from '../http.js';
import { requestIdJag } from '../oauth.js';
import type { JwtBearerConfig } from '../config/types.js';

/** Settings of {@link enterpriseManagedAssertion}. */
export interface EnterpriseManagedOptions {
  /** Enterprise IdP token endpoint (RFC 8693 token exchange). */
  idpTokenEndpoint: string;
  /** This client's client_id at the IdP. */
  idpClientId: string;
  idpClientSecret?: string;
  /** The user's ID Token from the SSO login (or a function returning a fresh one). */
  idToken: string | (() => Promise<string>);
  fetch?: FetchLike;
  allowInsecureRequests?: boolean;
  /** Deadline of the token exchange, whole answer (default 30 000 ms; see `McpAuthClientOptions.requestTimeoutMs`). */
  requestTimeoutMs?: number;
  /** Largest answer accepted (default 1 MiB). */
  maxResponseBytes?: number;
}

/**
 * Enterprise-Managed Authorization: an `assertion` callback for {@link JwtBearerConfig} that
 * exchanges the user's ID Token for an ID-JAG (audience = the MCP AS issuer, resource = the MCP
 * server) at the enterprise IdP, without sending the user to the MCP authorization server.
 */
export function enterpriseManagedAssertion(options: EnterpriseManagedOptions): JwtBearerConfig['assertion'] {
  const assertion = idJagAssertion(options);
  enterpriseAssertions.add(assertion);
  return assertion;
}

/** The assertion callbacks made here: a client using one declares the enterprise-managed extension. */
const enterpriseAssertions = new WeakSet<JwtBearerConfig['assertion']>();

export function isEnterpriseManagedAssertion(assertion: JwtBearerConfig['assertion']): boolean {
  return enterpriseAssertions.has(assertion);
}

/**
 * The requests to an enterprise IdP: the caller configured it (no egress policy, as for any
 * operator-configured endpoint), with the bounds of every request (see `McpAuthClientOptions`).
 */
export function idpDeps(
  options: Pick<EnterpriseManagedOptions, 'fetch' | 'requestTimeoutMs' | 'maxResponseBytes' | 'allowInsecureRequests'>,
): HttpDeps {
  return {
    fetch: options.fetch ?? ((i, init) => globalThis.fetch(i, init)),
    limits: {
      ...(options.requestTimeoutMs !== undefined && { timeoutMs: options.requestTimeoutMs }),
      ...(options.maxResponseBytes !== undefined && { maxResponseBytes: options.maxResponseBytes }),
    },
    ...(options.allowInsecureRequests && { allowInsecureRequests: true }),
  };
}

function idJagAssertion(options: EnterpriseManagedOptions): JwtBearerConfig['assertion'] {
  const deps = idpDeps(options);
  return async ({ issuer, resource, scope }) =>
    requestIdJag(
      {
        tokenEndpoint: options.idpTokenEndpoint,
        clientId: options.idpClientId,
        clientSecret: options.idpClientSecret,
        idToken: typeof options.idToken === 'string' ? options.idToken : await options.idToken(),
        audience: issuer,
        resource,
        scope,
      },
      deps,
    );
}
