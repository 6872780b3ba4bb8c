// The storage drivers are optional peers of the AS: not installed here, so choosing their
// store must say which package to install. Prints one JSON line per store.
import { openStore } from '@mcp-auth-kit/authorization-server';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const stores = [
  { kind: 'sqlite', file: join(tmpdir(), `scratch-never-created-${process.pid}.db`) },
  { kind: 'postgres', url: 'postgres://127.0.0.1:1/never' },
];
for (const config of stores) {
  try {
    const store = await openStore(config);
    await store.close();
    console.log(JSON.stringify({ kind: config.kind, opened: true }));
  } catch (error) {
    console.log(JSON.stringify({ kind: config.kind, name: error.name, code: error.code, message: error.message }));
  }
}
