/** What one check concluded. `skip`: the check could not run (no token given, an earlier step failed). */
export type FindingStatus = 'pass' | 'warn' | 'fail' | 'skip';

/** The families of checks, in the order a client meets them. */
export type FindingGroup = 'challenge' | 'resource-metadata' | 'authorization-server' | 'browser' | 'token' | 'refresh';

/** One finding of {@link checkDeployment}. */
export interface Finding {
  /** Stable identifier of the check, e.g. `prm-resource`. */
  id: string;
  group: FindingGroup;
  status: FindingStatus;
  /** The spec or RFC section the check holds the deployment to. */
  section: string;
  /** What was found, in one line. */
  title: string;
  /** The request that showed it (method, URL, headers of interest; tokens redacted). */
  sent?: string;
  /** The answer that showed it (status, headers of interest, a body excerpt; tokens redacted). */
  received?: string;
  /** For `warn` and `fail`: what to change, in one or two lines. */
  fix?: string;
}

/** Everything {@link checkDeployment} found. */
export interface DeploymentReport {
  /** The MCP server URL checked. */
  url: string;
  findings: Finding[];
  /** How many findings of each status. */
  summary: Record<FindingStatus, number>;
  /** How many HTTP requests the checks sent. */
  requests: number;
  /** `fail` when any finding failed, else `warn` when any warned, else `pass`. */
  status: 'pass' | 'warn' | 'fail';
}

/** A refresh token to check rotation with, and the client it was issued to. */
export interface RefreshCredentials {
  refreshToken: string;
  clientId: string;
  /**
   * The authorization server that issued the refresh token: it is sent only to the token endpoint
   * of that issuer's metadata, never to whatever AS the checked server names.
   */
  issuer: string;
  /** For a confidential client (sent with HTTP Basic). */
  clientSecret?: string;
}

/** A JSON-RPC request the given token's scope does not cover (a write tool), to see the 403 step-up challenge. */
export interface ScopeProbe {
  method: string;
  params?: Record<string, unknown>;
}

export interface CheckDeploymentOptions {
  /**
   * Allow loopback and private addresses, and plain http to them (a deployment on the local
   * machine or an intranet). Default false: https only, public addresses only (SSRF rules).
   */
  allowPrivate?: boolean;
  /** An access token for the server (enables the checks that need one). Never printed. */
  token?: string;
  /** An access token the same AS issued for ANOTHER resource: the server must refuse it (RFC 8707). */
  otherResourceToken?: string;
  /** Enables the refresh rotation checks (RFC 9700 §4.14.2, OAuth 2.1 §4.3.1). */
  refresh?: RefreshCredentials;
  /** Enables the 403 `insufficient_scope` check: a request beyond `token`'s scope. */
  scopeProbe?: ScopeProbe;
  /** An Origin browser clients of the server use: its CORS preflight is checked. */
  browserOrigin?: string;
  /** At most this many HTTP requests in all (default 40). */
  maxRequests?: number;
  /** All checks end within this many ms (default 60 000); each request within `requestTimeoutMs`. */
  timeoutMs?: number;
  /** Default 10 000. */
  requestTimeoutMs?: number;
  /** Replaces the platform fetch (tests); every request still passes the network policy. */
  fetch?: (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
}
