/**
 * One authorization server in a process of its own (case 7): the bench configuration on the
 * PostgreSQL schema and issuer it is given, on 127.0.0.1:0. Reports its port over IPC; SIGTERM
 * stops it.
 */
import { createServer } from 'node:http';
import { createAuthorizationServer, openStore } from '@mcp-auth-kit/authorization-server';
import { benchAsConfig } from './as.mjs';

const { issuer, resource, url, schema } = JSON.parse(process.argv[2]);
const store = await openStore({ kind: 'postgres', url, schema });
const as = await createAuthorizationServer(benchAsConfig({ issuer, resource, storage: store }));
const server = createServer(as.app);
server.keepAliveTimeout = 30_000;
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
process.send({ port: server.address().port });
process.on('SIGTERM', async () => {
  server.closeAllConnections();
  server.close();
  await as.close();
  await store.close();
  process.exit(0);
});
