#!/usr/bin/env node
/**
 * `npm start` entry of the authorization server: configuration from the environment and
 * `AS_CONFIG_FILE`. `--print-config` prints the effective configuration (secrets masked) and
 * exits (1 when it is invalid).
 */
import { configWarnings } from './config.js';
import { ConfigError, configFromEnv, loadConfig, printableConfig, startAuthServer } from './index.js';

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  process.stdout.write(
    'usage: mcp-auth-server [--print-config]\n' +
      '  configuration: environment variables and AS_CONFIG_FILE (JSON or YAML); see apps/auth-server/README.md\n',
  );
  process.exit(0);
}
const unknown = args.filter((a) => a !== '--print-config');
if (unknown.length) {
  process.stderr.write(`unknown argument(s): ${unknown.join(' ')} (try --help)\n`);
  process.exit(2);
}

if (args.includes('--print-config')) {
  const { config, problems } = loadConfig(process.env);
  process.stdout.write(`${JSON.stringify(printableConfig(config), null, 2)}\n`);
  for (const warning of configWarnings(config)) process.stderr.write(`warning: ${warning}\n`);
  if (problems.length) {
    process.stderr.write(`${new ConfigError(problems).message}\n`);
    process.exit(1);
  }
  process.exit(0);
}

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
