#!/usr/bin/env node
// The `mcp-auth-kit` command. The program lives in @mcp-auth-kit/client (subpath `./cli`); this
// package exists so that commander and the MCP SDK client are installed for CLI users only.
import { run } from '@mcp-auth-kit/client/cli';

process.exitCode = await run(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  stdin: process.stdin,
});
