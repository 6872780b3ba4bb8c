#!/usr/bin/env node
/** `npm start` entry of the authorization server: configuration from the environment. */
import { configFromEnv, startAuthServer } from './index.js';

try {
  const running = await startAuthServer({ ...configFromEnv(process.env), banner: true });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`${signal} received; stopping the authorization server\n`);
    running.close().then(
      () => process.exit(0),
      (err: Error) => {
        process.stderr.write(`error while stopping: ${err.message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
}
