/**
 * Enforcement of the egress policy at connect time, for Node's fetch: an undici dispatcher whose
 * connector resolves the host once, asks egress.ts about every answer and opens the socket to the
 * checked address only. Nothing connects before the decision, IP literals included, and a second
 * resolution (DNS rebinding between a check and the request) cannot change the address used.
 * Node built-ins only; Node's bundled undici is reached through its global dispatcher's class.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { checkEgress, checkEgressHost, type EgressDecision, type EgressPolicy } from './egress.js';

/** Resolves a host name to its addresses (injectable for tests: no DNS). */
export type EgressResolver = (hostname: string) => Promise<string[]>;

export interface EgressConnectorOptions {
  policy: EgressPolicy;
  /** Trusted CA certificates replacing Node's defaults (dev: a loopback test CA added to the roots). */
  ca?: string | string[];
  resolve?: EgressResolver;
  /** Milliseconds to establish TCP and TLS. Default 10 000. */
  connectTimeoutMs?: number;
  /** Told about every refusal (logging); must not throw. */
  onRefused?: (host: string, reason: string) => void;
}

/** The connection was refused by the egress policy before any socket was opened. */
export class EgressRefusedError extends Error {
  readonly code = 'ERR_EGRESS_REFUSED';
  constructor(
    readonly host: string,
    readonly reason: string,
  ) {
    super(reason);
    this.name = 'EgressRefusedError';
  }
}

/** The refusal behind a failed fetch (undici wraps connector errors as `cause`), if that is what it was. */
export function egressRefusal(error: unknown): EgressRefusedError | undefined {
  for (let e = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof EgressRefusedError) return e;
  }
  return undefined;
}

const systemResolver: EgressResolver = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((answer) => answer.address);

interface ConnectParams {
  hostname: string;
  protocol: string;
  port: string | number;
  servername?: string | null;
  httpSocket?: unknown;
}
type ConnectCallback = (error: Error | null, socket?: Socket) => void;
export type EgressConnector = (params: ConnectParams, callback: ConnectCallback) => void;

/** Resolves `hostname` once and decides: the checked addresses to connect to, or a refusal. */
export async function resolveEgress(
  hostname: string,
  policy: EgressPolicy,
  resolve: EgressResolver = systemResolver,
): Promise<EgressDecision> {
  const early = checkEgressHost(hostname, policy);
  if (early) return early;
  let answers: string[];
  try {
    answers = await resolve(hostname);
  } catch {
    return { ok: false, reason: `host ${hostname} does not resolve` };
  }
  return checkEgress(hostname, answers, policy);
}

/** An undici `connect` function that connects only to addresses the policy allows. */
export function createEgressConnector(options: EgressConnectorOptions): EgressConnector {
  const timeoutMs = options.connectTimeoutMs ?? 10_000;
  return (params, callback) => {
    let done = false;
    const finish = (error: Error | null, socket?: Socket) => {
      if (done) return;
      done = true;
      callback(error, socket);
    };
    if (params.httpSocket) return finish(new Error('egress connector: connection upgrades (proxies) are not supported'));
    const hostname = params.hostname.replace(/^\[|\]$/g, '');
    resolveEgress(hostname, options.policy, options.resolve).then(
      (decision) => {
        if (!decision.ok) {
          try {
            options.onRefused?.(hostname, decision.reason);
          } catch {
            // a logging hook must not change the decision
          }
          return finish(new EgressRefusedError(hostname, decision.reason));
        }
        const https = params.protocol === 'https:';
        const port = Number(params.port) || (https ? 443 : 80);
        const deadline = Date.now() + timeoutMs;
        // Every answer was checked: try them in order (a name may list an address family nobody
        // listens on first), never anything else.
        const attempt = (index: number): void => {
          const address = decision.addresses[index]!;
          const socket: Socket = https
            ? tlsConnect({
                host: address,
                port,
                // SNI and certificate identity use the URL's name; an IP literal has no SNI (RFC 6066 §3).
                ...(isIP(hostname) ? {} : { servername: params.servername || hostname }),
                ...(options.ca !== undefined && { ca: options.ca }),
                ALPNProtocols: ['http/1.1'],
              })
            : netConnect({ host: address, port });
          let connected = false;
          const timer = setTimeout(
            () => socket.destroy(new Error(`connect to ${hostname}:${port} timed out`)),
            Math.max(1, deadline - Date.now()),
          );
          socket.setNoDelay(true);
          socket.setKeepAlive(true, 60_000);
          socket.once('connect', () => (connected = true));
          socket.once(https ? 'secureConnect' : 'connect', () => {
            clearTimeout(timer);
            finish(null, socket);
          });
          socket.on('error', (error) => {
            clearTimeout(timer);
            // Only a failed TCP connection moves on to the next checked address; a TLS failure is final.
            if (!connected && index + 1 < decision.addresses.length && Date.now() < deadline) {
              attempt(index + 1);
            } else {
              finish(error);
            }
          });
        };
        attempt(0);
      },
      (error: Error) => finish(error),
    );
  };
}

type AgentClass = new (options: { connect: EgressConnector }) => EgressDispatcher;
/** An undici dispatcher (opaque here: it is only handed to fetch as `dispatcher`). */
export interface EgressDispatcher {
  close(): Promise<void>;
}

function bundledAgentClass(): AgentClass | undefined {
  // Node's fetch loads undici lazily; touching Response makes it register its global dispatcher.
  void Response;
  const g = globalThis as Record<symbol, { constructor?: unknown } | undefined>;
  const current = g[Symbol.for('undici.globalDispatcher.1')];
  const Agent = current?.constructor as (AgentClass & { name?: string }) | undefined;
  return Agent && Agent.name === 'Agent' ? Agent : undefined;
}

// Read when this module loads: an application that later installs a proxy dispatcher globally
// does not change the class the egress dispatchers are built from.
let Agent = bundledAgentClass();

/**
 * A dispatcher for `fetch(url, { dispatcher })` that enforces `policy` at connect time. Throws
 * when Node's bundled undici is not reachable: callers fail closed rather than fetch unchecked.
 */
export function createEgressDispatcher(options: EgressConnectorOptions): EgressDispatcher {
  const dispatcher = tryCreateEgressDispatcher(options);
  if (!dispatcher) throw new Error('egress policy: the undici Agent of Node’s fetch is not available; refusing to fetch unchecked');
  return dispatcher;
}

/**
 * The same, or undefined where Node's bundled undici cannot be reached: in a VM context such as
 * jest's ESM mode (its global object does not carry Node's dispatcher), or after an application
 * installed another global dispatcher (a proxy) before this module loaded. Callers then check
 * every resolved address before connecting ({@link resolveEgress}) and fetch without pinning —
 * the only gap left is a DNS answer that changes between that check and the connection.
 */
export function tryCreateEgressDispatcher(options: EgressConnectorOptions): EgressDispatcher | undefined {
  Agent ??= bundledAgentClass();
  return Agent ? new Agent({ connect: createEgressConnector(options) }) : undefined;
}
