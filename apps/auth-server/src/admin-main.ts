#!/usr/bin/env node
/** `mcp-auth-server-admin`: operator commands (see admin.ts). */
import { createInterface } from 'node:readline';
import { runAdmin } from './admin.js';

async function readFirstLine(): Promise<string> {
  if (process.env.AS_ADMIN_PASSWORD) return process.env.AS_ADMIN_PASSWORD;
  if (process.stdin.isTTY) process.stderr.write('password: ');
  const rl = createInterface({ input: process.stdin, terminal: false });
  for await (const line of rl) {
    rl.close();
    return line;
  }
  return '';
}

const code = await runAdmin(process.argv.slice(2), process.env, {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  readPassword: readFirstLine,
});
process.exit(code);
