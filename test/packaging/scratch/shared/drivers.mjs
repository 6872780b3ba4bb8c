// The storage drivers are optional peers of the AS: not installed here, so choosing their
// store must say which package to install — except the default SQLite store on Node ≥ 22.13,
// which runs on the built-in node:sqlite (no native build). Prints one JSON line per store.
import { openStore } from '@mcp-auth-kit/authorization-server';
import { tmpdir } from 'node:os';
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';

const stores = [
  { kind: 'sqlite', file: join(tmpdir(), `scratch-default-${process.pid}`, 'auth.sqlite') },
  { kind: 'sqlite', file: join(tmpdir(), `scratch-never-created-${process.pid}.db`), driver: 'better-sqlite3' },
  { kind: 'postgres', url: 'postgres://127.0.0.1:1/never' },
];
for (const config of stores) {
  try {
    const store = await openStore(config);
    await store.close();
    console.log(JSON.stringify({ kind: config.kind, driver: config.driver, opened: true }));
  } catch (error) {
    console.log(JSON.stringify({ kind: config.kind, driver: config.driver, name: error.name, code: error.code, message: error.message }));
  } finally {
    if (config.file?.includes('scratch-default-')) rmSync(dirname(config.file), { recursive: true, force: true });
  }
}
