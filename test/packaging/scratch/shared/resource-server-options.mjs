// The resource server both scratch servers put in front of their MCP SDK (shared/ is copied into
// each project): the AS at `issuer`, notes:read by default, add_note needs notes:write.
export function resourceServerOptions({ issuer, resource }) {
  return {
    resource,
    authorizationServers: [issuer],
    scopesSupported: ['notes:read'],
    scopePolicy: { default: ['notes:read'], tools: { add_note: ['notes:write'] } },
  };
}
