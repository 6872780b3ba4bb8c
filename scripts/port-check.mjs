// `npm start`'s check before it starts anything: can each server listen on its port? A port
// that is taken is named with the service that needs it, what answers there, and the
// runtime-contract variable that moves it (AS_PORT / MCP_PORT / DEMO_DRIVE_PORT; AS_ISSUER /
// MCP_RESOURCE follow unless they are set). Without this check the readiness probe reached the old servers
// (e.g. an earlier `npm start`), printed "ready", and only then did a child fail with EADDRINUSE.
import { createServer } from 'node:net';

const LOOPBACK = ['127.0.0.1', '::1'];

/** The ports of `npm start` when the environment does not set them (runtime contract: 9000 and 3000). */
export const PORT_DEFAULTS = { AS_PORT: '9000', MCP_PORT: '3000', DEMO_DRIVE_PORT: '9010' };

/** 'free', 'in-use', 'denied' (EACCES: a privileged port), or 'absent' (no such address here, e.g. no IPv6). */
function tryListen(port, host) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error) => {
      if (error.code === 'EADDRINUSE') resolve('in-use');
      else if (error.code === 'EACCES') resolve('denied');
      else resolve('absent');
    });
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve('free')));
  });
}

async function json(url) {
  // A timer that holds the event loop (AbortSignal.timeout's does not): a holder that accepts
  // and drops connections can leave fetch pending with nothing else keeping the process alive.
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 1_500);
  try {
    const res = await fetch(url, { signal: controller.signal, redirect: 'manual' });
    if (!res.ok) return undefined;
    return await res.json();
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

/** What answers on a taken loopback port, in words, when it is one of ours (best effort: HTTP probes only). */
async function whoAnswers(port, host) {
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const as = await json(`${origin}/.well-known/oauth-authorization-server`);
  if (as && typeof as.issuer === 'string') return `an authorization server answers there (issuer ${as.issuer})`;
  for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
    const prm = await json(`${origin}${path}`);
    if (prm && typeof prm.resource === 'string') return `an MCP server answers there (resource ${prm.resource})`;
  }
  return undefined;
}

function hostsOf(value) {
  const hosts = (value ?? '')
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);
  return hosts.length ? hosts : LOOPBACK;
}

/**
 * The problems with the ports of `npm start`'s servers, each a list of lines for the user;
 * empty when all can listen. `env` is the resolved environment (AS_PORT, MCP_PORT and
 * DEMO_DRIVE_PORT set), `original` the user's environment (to tell an explicit AS_ISSUER /
 * MCP_RESOURCE from a default); `withDrive` adds the demo drive's port.
 */
export async function portProblems(env, original, { withDrive = false } = {}) {
  const services = [
    {
      label: 'authorization server',
      portVar: 'AS_PORT',
      port: Number(env.AS_PORT),
      hosts: hostsOf(env.AS_HOST),
      urlVar: 'AS_ISSUER',
      follows: (p) => `http://localhost:${p}`,
    },
    {
      label: 'demo MCP server',
      portVar: 'MCP_PORT',
      port: Number(env.MCP_PORT),
      hosts: hostsOf(env.MCP_HOST),
      urlVar: 'MCP_RESOURCE',
      follows: (p) => `http://localhost:${p}/mcp`,
    },
  ];
  if (withDrive) {
    services.push({
      label: 'demo drive',
      portVar: 'DEMO_DRIVE_PORT',
      port: Number(env.DEMO_DRIVE_PORT),
      // It listens on 127.0.0.1; a program on [::1] at that port would answer browsers' `localhost` first.
      hosts: LOOPBACK,
    });
  }
  for (const [i, a] of services.entries()) {
    const b = services.slice(i + 1).find((other) => other.port === a.port);
    if (b) {
      return [
        [
          `${a.portVar} and ${b.portVar} are both ${a.port}: the ${a.label} and the ${b.label} need a port each`,
          `  (defaults: ${a.portVar}=${PORT_DEFAULTS[a.portVar]}, ${b.portVar}=${PORT_DEFAULTS[b.portVar]})`,
        ],
      ];
    }
  }
  const problems = [];
  for (const service of services) {
    for (const host of service.hosts) {
      const state = await tryListen(service.port, host);
      if (state === 'free' || state === 'absent') continue;
      const explicit = service.urlVar && original[service.urlVar]?.trim();
      const change = !service.urlVar
        ? undefined
        : explicit
          ? `${service.urlVar} is set (${explicit}): change its port too`
          : `${service.urlVar} follows: ${service.follows('<port>')}`;
      const moveWith = `${service.portVar}=<port> npm start${change ? ` (${change})` : ''}`;
      if (state === 'denied') {
        problems.push([
          `port ${service.port} (${service.portVar}, the ${service.label}) needs privileges to listen on ${host}`,
          `  start on a port above 1023: ${moveWith}`,
        ]);
      } else {
        const probeHost = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
        const who = await whoAnswers(service.port, probeHost);
        problems.push([
          `port ${service.port} (${service.portVar}, the ${service.label}) is already in use on ${host}`,
          who
            ? `  ${who}: is an earlier \`npm start\` still running? Stop it (Ctrl-C in its terminal)`
            : '  another program holds it: stop that program',
          `  or start on another port: ${moveWith}`,
        ]);
      }
      break;
    }
  }
  return problems;
}
