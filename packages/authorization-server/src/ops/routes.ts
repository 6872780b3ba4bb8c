/** Low-cardinality route names for request logs and latency metrics. */
const ROUTES: Array<[RegExp, string]> = [
  [/^\/auth(\/|$)/, 'authorization'],
  [/^\/token\/revocation$/, 'revocation'],
  [/^\/token\/introspection$/, 'introspection'],
  [/^\/token$/, 'token'],
  [/^\/reg$/, 'registration'],
  [/^\/reg\/[^/]+$/, 'registration_client'],
  [/^\/jwks$/, 'jwks'],
  [/^\/me$/, 'userinfo'],
  [/^\/request$/, 'pushed_authorization_request'],
  [/^\/interaction\//, 'interaction'],
  [/^\/connect\//, 'connect'],
  [/^\/\.well-known\/oauth-authorization-server/, 'discovery'],
  [/^\/\.well-known\/openid-configuration/, 'discovery'],
  [/^\/healthz$/, 'healthz'],
  [/^\/readyz$/, 'readyz'],
  [/^\/metrics$/, 'metrics'],
];

export function routeName(path: string, mountPath: string): string {
  let p = path;
  if (mountPath && (p === mountPath || p.startsWith(`${mountPath}/`))) p = p.slice(mountPath.length) || '/';
  if (p.startsWith('/.well-known/')) return 'discovery';
  for (const [pattern, name] of ROUTES) if (pattern.test(p)) return name;
  return 'other';
}
