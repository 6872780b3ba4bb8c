#!/usr/bin/env node
// The `mcp-auth-kit` command: the program is this package's build (src/program.ts). The bin is a
// checked-in file rather than dist/ itself so that npm links an executable that exists before
// the first build (tsc does not keep the executable bit).
import { isatty } from 'node:tty';
import { run } from '../dist/program.js';

process.exitCode = await run(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  colour: isatty(1),
  stdin: process.stdin,
});
