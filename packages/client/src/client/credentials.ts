import { assertClientBoundTo, boundClient } from '../credential-binding.js';
import type { DpopKey } from '../dpop.js';
import { ERR, McpAuthError } from '../errors.js';
import type { GrantContext } from '../oauth.js';
import type { ClientInformation, ServerBinding } from '../store.js';
import type { ClientContext } from './context.js';
import type { DpopKeys } from './dpop-keys.js';

/** The registration this client uses at a binding's authorization server, if it has one there. */
export async function clientFor(context: ClientContext, binding: ServerBinding): Promise<ClientInformation | undefined> {
  if (context.machine) return machineClient(context, binding);
  const pre = context.opts.preRegistered?.find((p) => p.issuer === binding.issuer);
  if (pre) return { ...pre, source: 'pre-registered' };
  return boundClient(await context.store.getClient(binding.issuer), binding.issuer);
}

/** The client of the configured client credentials or JWT bearer grant, only at its own issuer. */
export function machineClient(context: ClientContext, binding: ServerBinding): ClientInformation {
  const cc = context.machine!;
  if (cc.issuer !== binding.issuer) {
    throw new McpAuthError(
      ERR.AS_MISMATCH,
      `client credentials are for ${cc.issuer}, but the MCP server uses the authorization server ${binding.issuer}`,
    );
  }
  // RFC 7523 §2.1: the signed assertion is the grant and names the client; no second proof is
  // sent unless `token_endpoint_auth_method` asks for one.
  const selfAsserted = 'grant' in cc && cc.grant === 'jwt_bearer';
  const method =
    cc.token_endpoint_auth_method ??
    (selfAsserted ? 'none' : cc.privateKey ? 'private_key_jwt' : cc.client_secret ? 'client_secret_basic' : 'none');
  return {
    issuer: binding.issuer,
    client_id: cc.client_id,
    ...(cc.client_secret !== undefined && { client_secret: cc.client_secret }),
    token_endpoint_auth_method: method,
    source: 'pre-registered',
  };
}

/**
 * Everything a token or revocation request is built from. Every credential-bearing request goes
 * through here: the client, the binding and the AS metadata must name one issuer, and a key is
 * taken only from configuration bound to that issuer.
 */
export async function grantContext(
  context: ClientContext,
  dpopKeys: DpopKeys,
  binding: ServerBinding,
  client: ClientInformation,
): Promise<GrantContext & { dpopKey?: DpopKey | undefined }> {
  assertClientBoundTo(binding, client);
  const machine = context.machine;
  const privateKey =
    machine && machine.issuer === binding.issuer && machine.client_id === client.client_id
      ? machine.privateKey
      : context.opts.preRegistered?.find((p) => p.issuer === binding.issuer && p.client_id === client.client_id)?.privateKey;
  const dpopKey = await dpopKeys.keyFor(binding, client.client_id);
  return { as: binding.as_metadata, client, privateKey, deps: context.depsFor(binding.server), dpop: dpopKey?.handle, dpopKey };
}
