/**
 * In-process store for tests and throw-away runs. Nothing survives the process; values are
 * copied in and out as JSON so callers see exactly what a database would give back.
 */
import type { BackendParts } from '../assemble.js';
import type { Clock } from '../clock.js';
import { MemoryAccounts } from './accounts.js';
import { MemoryAudit } from './audit.js';
import { MemoryCimdTrust } from './cimd-trust.js';
import { MemoryConnections } from './connections.js';
import { MemoryKeys } from './keys.js';
import { MemoryKv } from './kv.js';
import { MemoryModels } from './models.js';

export function openMemoryBackend(clock: Clock): BackendParts {
  const models = new MemoryModels();
  const keys = new MemoryKeys();
  const kv = new MemoryKv(clock);
  return {
    kind: 'memory',
    models,
    keys,
    accounts: new MemoryAccounts(clock),
    connections: new MemoryConnections(clock),
    audit: new MemoryAudit(),
    cimdTrust: new MemoryCimdTrust(clock),
    kv,
    ping: async () => {},
    async cleanup(now: number) {
      return models.cleanup(now) + kv.cleanup(now) + keys.cleanup(now);
    },
    close: async () => {},
  };
}
