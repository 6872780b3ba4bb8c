#!/usr/bin/env node
/** The admin tool's process entry (`npm run admin -- <command>`): operator commands (see admin.ts). */
import { runAdmin } from './admin.js';
import { readNewPassword } from './password-input.js';

const code = await runAdmin(process.argv.slice(2), process.env, {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  readPassword: () => readNewPassword({ env: process.env, input: process.stdin, output: process.stderr }),
});
process.exit(code);
