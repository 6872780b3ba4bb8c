import { openStore } from '../../src/storage/index.js';
import { storeContract } from './contract.js';

storeContract({
  name: 'memory',
  durable: false,
  open: (options) => openStore({ kind: 'memory' }, options),
  reset: async () => {},
});
