#!/usr/bin/env node
/** The admin tool's process entry (`npm run admin -- <command>`): operator commands (see admin.ts). */
import { createTerminal, joinText, ownLayout } from '@mcp-auth-kit/protocol';
import { runAdmin } from './admin.js';
import { readNewPassword } from './password-input.js';

// The one writer (the protocol package's): nothing else in the tool holds the raw streams.
const term = createTerminal({ stdout: (text) => process.stdout.write(text), stderr: (text) => process.stderr.write(text) });
const newline = ownLayout('\n');

const code = await runAdmin(process.argv.slice(2), process.env, {
  out: (line) => term.out(joinText([line, newline])),
  err: (line) => term.err(joinText([line, newline])),
  readPassword: () => readNewPassword({ env: process.env, input: process.stdin, output: process.stderr }),
});
process.exit(code);
