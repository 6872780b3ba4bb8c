import type { ResourceServer } from '../../src/index.js';
import type { AccessTokenVerifier } from '../../src/types.js';
import type { InternalResourceServerCore } from '../../src/resource-server-core.js';

/** The verifier behind `rs.core` (not public API): tests look at its cache. */
export function verifierOf(rs: ResourceServer): AccessTokenVerifier {
  return (rs.core as InternalResourceServerCore).verifier;
}
