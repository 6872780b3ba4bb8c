import {
  type AuthExtension,
  CLIENT_CAPABILITIES_META_KEY,
  ENTERPRISE_MANAGED_AUTHORIZATION_EXTENSION,
  OAUTH_CLIENT_CREDENTIALS_EXTENSION,
} from '@mcp-auth-kit/protocol';
import type { McpAuthClientOptions } from '../config/types.js';
import { isEnterpriseManagedAssertion } from './enterprise-managed.js';
import type { OutgoingRequest } from './outgoing-request.js';

/** The `_meta` key of the 2026-07-28 per-request protocol version (MCP 2026-07-28 changelog item 2). */
const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';

/**
 * The authorization extensions this client actually uses (spec/extensions/auth-overview.mdx,
 * "never active by default"): the client credentials extension when a client credentials grant
 * (secret, `private_key_jwt` or an RFC 7523 §2.1 assertion) is configured; enterprise-managed
 * authorization when the JWT bearer grant's assertion is an ID-JAG. A JWT bearer grant with some
 * other assertion (workload identity) implements neither, unless its `extension` says so.
 */
export function usedExtensions(options: McpAuthClientOptions): AuthExtension[] {
  const jb = options.jwtBearer;
  if (jb) {
    const extension = jb.extension ?? (isEnterpriseManagedAssertion(jb.assertion) ? ENTERPRISE_MANAGED_AUTHORIZATION_EXTENSION : undefined);
    return extension ? [extension] : [];
  }
  return options.clientCredentials ? [OAUTH_CLIENT_CREDENTIALS_EXTENSION] : [];
}

/**
 * The body with the extensions declared in each 2026-07-28 request's
 * `_meta["io.modelcontextprotocol/clientCapabilities"].extensions` (extension pages, "Declare
 * support"). Only messages on that wire are touched: a JSON-RPC request whose `_meta` carries the
 * per-request protocol version. 2025-11-25 messages (capabilities once, in `initialize`),
 * responses, notifications and anything that is not JSON go out byte for byte as given.
 */
export function declareExtensions(body: string, extensions: readonly AuthExtension[]): string {
  if (extensions.length === 0 || !body.includes(PROTOCOL_VERSION_META_KEY)) return body;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body;
  }
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  let changed = false;
  for (const message of messages) changed = declareIn(message, extensions) || changed;
  return changed ? JSON.stringify(parsed) : body;
}

function declareIn(message: unknown, extensions: readonly AuthExtension[]): boolean {
  if (!isObject(message) || typeof message.method !== 'string' || message.id === undefined) return false;
  const meta = isObject(message.params) ? message.params._meta : undefined;
  if (!isObject(meta) || typeof meta[PROTOCOL_VERSION_META_KEY] !== 'string') return false;
  const given = meta[CLIENT_CAPABILITIES_META_KEY];
  const capabilities = isObject(given) ? given : {};
  const declared = isObject(capabilities.extensions) ? capabilities.extensions : {};
  // An extension the caller already declared keeps its settings object.
  for (const id of extensions) if (!isObject(declared[id])) declared[id] = {};
  capabilities.extensions = declared;
  meta[CLIENT_CAPABILITIES_META_KEY] = capabilities;
  return true;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The call with the extensions declared in its JSON body (see {@link declareExtensions}); the
 * same object when there is nothing to declare. A body of bytes is read as UTF-8 JSON only when
 * the call says it is JSON; it is sent as text only when a declaration was added.
 */
export function declaringRequest(original: OutgoingRequest, extensions: readonly AuthExtension[]): OutgoingRequest {
  if (extensions.length === 0 || original.method !== 'POST') return original;
  let declared: Promise<string | ArrayBuffer | undefined> | undefined;
  const json = /^application\/json\s*(;|$)/i.test(original.headers.get('content-type') ?? '');
  return {
    ...original,
    body() {
      declared ??= original.body().then((body) => {
        if (typeof body === 'string') return declareExtensions(body, extensions);
        if (body === undefined || !json) return body;
        const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
        let decoded: string;
        try {
          decoded = text.decode(body);
        } catch {
          return body;
        }
        const out = declareExtensions(decoded, extensions);
        return out === decoded ? body : out;
      });
      return declared;
    },
  };
}
