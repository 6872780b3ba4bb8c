/**
 * The client's options as callers write them, and as `resolve.ts` hands them to the client's
 * parts (checked, every default applied). Type imports only.
 */
import type { AuthExtension } from '@mcp-auth-kit/protocol';
import type { FetchLike } from '../http.js';
import type { LoopbackListenerOptions } from '../loopback.js';
import type { PrivateKeyInput } from '../oauth.js';
import type { PreRegisteredClient, RegistrationContext } from '../registration.js';
import type { AuthStore, ClientInformation } from '../store.js';
import type { SignedInAccount } from '../client/signed-in-account.js';

/** Progress notifications (for CLIs and logs); never carry tokens, codes or secrets. */
export type McpAuthEvent =
  | { type: 'discovered'; server: string; resource: string; issuer: string }
  | { type: 'authorization_server_changed'; server: string; from: string; to: string }
  | { type: 'registered'; issuer: string; client_id: string; source: ClientInformation['source'] }
  | { type: 'authorization_url'; url: URL }
  | { type: 'waiting_for_callback'; redirectUri: string }
  /** `account`: who signed in, when the AS said so (show it: another local user could have raced the loopback redirect). */
  | { type: 'authorized'; issuer: string; resource: string; scope?: string | undefined; account?: SignedInAccount | undefined }
  | { type: 'refreshed'; issuer: string; resource: string }
  /** The AS refused the refresh token (its OAuth `error`); the tokens were dropped, a new authorization follows. */
  | { type: 'refresh_failed'; issuer: string; resource: string; error: string; error_description?: string }
  | { type: 'step_up'; resource: string; scope: string | undefined };

/** Client credentials grant configuration (extension `io.modelcontextprotocol/oauth-client-credentials`). */
export interface ClientCredentialsConfig {
  client_id: string;
  client_secret?: string;
  token_endpoint_auth_method?: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt';
  privateKey?: PrivateKeyInput;
  /**
   * The `issuer` of the authorization server that issued these credentials (MCP Authorization
   * Server Binding). Required: they are sent to no other authorization server, whatever an MCP
   * server's metadata names.
   */
  issuer: string;
  /** Scope to request when the MCP server gives no guidance. */
  scope?: string;
  /**
   * Which grant gets the tokens. `'client_credentials'` (default): RFC 6749 §4.4, authenticated
   * with the secret or `private_key_jwt`. `'jwt_bearer'`: the RFC 7523 §2.1 assertion grant the
   * client credentials extension recommends — the client signs a short-lived assertion with
   * `privateKey` (`iss` = `sub` = `client_id`, `aud` = the AS issuer, `exp`, `jti`); needs `privateKey`.
   */
  grant?: 'client_credentials' | 'jwt_bearer';
}

/**
 * RFC 7523 JWT bearer grant configuration: workload identity federation, or enterprise-managed
 * authorization with {@link enterpriseManagedAssertion} as `assertion`.
 */
export interface JwtBearerConfig {
  client_id: string;
  client_secret?: string;
  token_endpoint_auth_method?: 'none' | 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt';
  privateKey?: PrivateKeyInput;
  /**
   * The `issuer` of the authorization server these credentials and assertions are for (MCP
   * Authorization Server Binding). Required: `assertion` is only ever asked for, and sent to, this one.
   */
  issuer: string;
  scope?: string;
  /** Supplies the assertion for an authorization server and resource. */
  assertion: (ctx: { issuer: string; resource: string; scope?: string | undefined }) => Promise<string>;
  /**
   * The authorization extension this grant implements, declared on the 2026-07-28 wire. Default:
   * enterprise-managed authorization when `assertion` comes from {@link enterpriseManagedAssertion},
   * none otherwise (a workload identity assertion is no MCP extension).
   */
  extension?: AuthExtension;
}

export interface McpAuthClientOptions {
  /** `client_name` for DCR and shown on consent pages. */
  clientName: string;
  /** Where client registrations and tokens live. Default: a new {@link MemoryStore}. */
  store?: AuthStore;
  /**
   * Shows the authorization URL to the user (open a browser, print it, or — in tests — follow it
   * headlessly). The URL has already been checked to be https (or http on loopback).
   * Without it, interactive authorization fails with `MCP_AUTH_INTERACTION_REQUIRED`.
   */
  openAuthorizationUrl?: (url: URL) => Promise<void>;
  /** Loopback redirect listener settings (default `http://127.0.0.1:<ephemeral>/callback`). */
  loopback?: LoopbackListenerOptions;
  /** How long to wait for the authorization callback. Default 300 000 ms. */
  authorizationTimeoutMs?: number;
  /** HTTPS URL of this client's Client ID Metadata Document, used when the AS supports CIMD. */
  clientMetadataUrl?: string;
  /** Pre-registered credentials, each bound to one AS issuer. */
  preRegistered?: PreRegisteredClient[];
  /** Extra RFC 7591 metadata for DCR. */
  clientMetadata?: Record<string, unknown>;
  /** Override the DCR `application_type` (default: native for loopback/custom-scheme redirects). */
  applicationType?: 'native' | 'web';
  /** Last resort of registration: ask the host/user for a client_id. */
  onRegistrationNeeded?: (ctx: RegistrationContext) => Promise<Omit<ClientInformation, 'issuer' | 'source'> | undefined>;
  /** Use the client credentials grant instead of the interactive flow. */
  clientCredentials?: ClientCredentialsConfig;
  /** Use the RFC 7523 JWT bearer grant instead of the interactive flow. */
  jwtBearer?: JwtBearerConfig;
  /** Ask for refresh tokens (`refresh_token` grant in DCR, `offline_access` when the AS lists it). Default true. */
  refreshTokens?: boolean;
  /** Re-authorizations allowed for step-up within one request. Default 2. */
  maxStepUpAttempts?: number;
  /** Seconds before `expires_at` at which a token counts as expired. Default 30. */
  expirySkewSeconds?: number;
  /**
   * Deadline of each request, in ms (default 30 000). An OAuth request (metadata, registration,
   * token, revocation) is abandoned when its whole answer has not arrived by then; a request to
   * the MCP server when its response headers, or its whole JSON body, have not (an SSE stream may
   * stay open: its events are bounded by `maxMessageBytes`).
   */
  requestTimeoutMs?: number;
  /** OAuth responses larger than this many bytes are refused with `MCP_AUTH_RESPONSE_TOO_LARGE` (default 1 MiB). */
  maxResponseBytes?: number;
  /**
   * One message from the MCP server (a JSON response body, or one event of an SSE stream) larger
   * than this many bytes is refused with `MCP_AUTH_RESPONSE_TOO_LARGE` (default 8 MiB).
   */
  maxMessageBytes?: number;
  /** fetch implementation for every request. Default `globalThis.fetch`. */
  fetch?: FetchLike;
  /** Allow plain http to non-loopback hosts. Default false. */
  allowInsecureRequests?: boolean;
  /**
   * Which addresses the OAuth-related requests may reach: PRM, AS metadata, registration, token
   * and revocation endpoints and their redirects. The MCP server names them, so a hostile server
   * could aim them into the client's own network (MCP security best practices §SSRF, RFC 9728
   * §7.7); the resolved address is checked before connecting.
   * - `'auto'` (default): public addresses; loopback too when the MCP server itself is on a
   *   loopback host (local development). Private, link-local and other special-use addresses: never.
   * - `'block'`: public addresses only, also for a loopback MCP server (clients deployed on servers).
   * - `'allow'`: no address restriction (an intranet whose servers the user trusts).
   */
  privateNetworks?: 'auto' | 'block' | 'allow';
  /** Same as `privateNetworks: 'block'` (kept for existing callers). */
  blockPrivateNetworks?: boolean;
  /**
   * RFC 9449 DPoP (extension SEP-1932). `'auto'` (default): sender-constrained tokens when both the
   * AS (`dpop_signing_alg_values_supported`) and the MCP server's PRM (`dpop_signing_alg_values_supported`
   * or `dpop_bound_access_tokens_required`) announce DPoP — an AS alone cannot vouch that the
   * resource server accepts the `DPoP` scheme. `'always'`: whenever the AS supports it.
   * `'never'`: Bearer only. One key per (issuer, resource), persisted by stores that implement
   * `getDpopKey`/`setDpopKey` (memory and file stores); with other stores a new process re-authorizes.
   */
  dpop?: 'auto' | 'always' | 'never';
  /**
   * MCP 2025-03-26 servers publish no Protected Resource Metadata: with this on, a server without
   * PRM is treated as its own authorization server (issuer = its origin; AS metadata, issuer
   * equality and PKCE S256 are still required). Default false.
   */
  legacyDiscovery?: boolean;
  /** Progress callback. */
  onEvent?: (event: McpAuthEvent) => void;
}

/**
 * {@link McpAuthClientOptions} checked, with their defaults (config/defaults.ts). What stays
 * optional has no default: a hook or value the caller may leave out.
 */
export interface ResolvedClientOptions
  extends Omit<
    McpAuthClientOptions,
    | 'authorizationTimeoutMs'
    | 'refreshTokens'
    | 'maxStepUpAttempts'
    | 'expirySkewSeconds'
    | 'requestTimeoutMs'
    | 'maxResponseBytes'
    | 'maxMessageBytes'
    | 'allowInsecureRequests'
    | 'privateNetworks'
    | 'dpop'
    | 'legacyDiscovery'
    | 'loopback'
  > {
  authorizationTimeoutMs: number;
  refreshTokens: boolean;
  maxStepUpAttempts: number;
  expirySkewSeconds: number;
  requestTimeoutMs: number;
  maxResponseBytes: number;
  maxMessageBytes: number;
  allowInsecureRequests: boolean;
  /** `blockPrivateNetworks: true` folded in. */
  privateNetworks: 'auto' | 'block' | 'allow';
  dpop: 'auto' | 'always' | 'never';
  legacyDiscovery: boolean;
  /** The fields the caller set (the listener applies the defaults). */
  loopback: LoopbackListenerOptions;
}
