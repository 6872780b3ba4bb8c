/**
 * The one resolve step of the client library's options: the schema (shapes and ranges), then
 * MCP Authorization Server Binding (credential-binding.ts), then the options laid over the
 * defaults tree. Every problem found is reported at once: the error thrown is the client's
 * `McpAuthError` with code `MCP_AUTH_INVALID_ARGUMENT` (what callers match on), its message
 * listing every problem, and its `cause` the shared `ConfigError` carrying them as `problems`.
 */
import { ConfigError } from '@mcp-auth-kit/protocol';
import { credentialProblems } from '../credential-binding.js';
import { ERR, McpAuthError } from '../errors.js';
import { DEFAULTS } from './defaults.js';
import { schemaProblems } from './schema.js';
import type { McpAuthClientOptions, ResolvedClientOptions } from './types.js';

/** What {@link ConfigError}'s message names: "Invalid MCP auth client configuration:". */
const CONFIG_SUBJECT = 'MCP auth client';

/** Every problem of `options`, in the order of the options; empty when they are valid. */
export function clientOptionProblems(options: unknown): string[] {
  const problems = schemaProblems(options);
  if (options && typeof options === 'object') {
    const o = options as McpAuthClientOptions;
    // MCP Authorization Server Binding: a credential without its issuer is a configuration error.
    problems.push(...credentialProblems(o, { ...(o.allowInsecureRequests === true && { allowInsecureRequests: true }) }));
    problems.push(...grantProblems(o.clientCredentials));
  }
  return problems;
}

/** `clientCredentials.grant`: which grant, and the RFC 7523 §2.1 assertion needs a key to sign it. */
function grantProblems(cc: McpAuthClientOptions['clientCredentials']): string[] {
  if (!cc || typeof cc !== 'object') return [];
  if (cc.grant !== undefined && cc.grant !== 'client_credentials' && cc.grant !== 'jwt_bearer')
    return ['"clientCredentials.grant" must be "client_credentials" or "jwt_bearer"'];
  if (cc.grant === 'jwt_bearer' && !cc.privateKey)
    return ['"clientCredentials.grant" "jwt_bearer" needs "privateKey" (the client signs its assertion)'];
  return [];
}

/**
 * Checks the options before anything is sent and returns them over the defaults tree.
 * @throws {McpAuthError} `MCP_AUTH_INVALID_ARGUMENT`, `cause`: a {@link ConfigError} listing every problem
 */
export function resolveClientOptions(options: McpAuthClientOptions): ResolvedClientOptions {
  const problems = clientOptionProblems(options);
  if (problems.length > 0) {
    const config = new ConfigError(problems, CONFIG_SUBJECT);
    throw new McpAuthError(ERR.INVALID_ARGUMENT, config.message, { cause: config });
  }
  // the helpers' own defaults (listener, file store, keys, CIMD) are not client options
  const { loopback, fileStore, privateKeyAlg, cimd, ...optionDefaults } = DEFAULTS;
  const given = definedOnly(options) as McpAuthClientOptions;
  return {
    ...optionDefaults,
    ...given,
    // `blockPrivateNetworks: true` is the older spelling of `'block'`, and wins as it did.
    privateNetworks: given.blockPrivateNetworks ? 'block' : (given.privateNetworks ?? optionDefaults.privateNetworks),
    // No defaults here: an unset port means "reuse the registered one"; the listener applies DEFAULTS.loopback.
    loopback: definedOnly(options.loopback),
  };
}

/** The fields `value` sets (an explicit `undefined` keeps the default). */
function definedOnly<T extends object>(value: T | undefined): Partial<T> {
  return Object.fromEntries(Object.entries(value ?? {}).filter(([, v]) => v !== undefined)) as Partial<T>;
}
