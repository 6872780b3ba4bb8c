/**
 * Development conveniences and the one rule that keeps them on a laptop: every dev-only switch
 * is refused unless the server listens on loopback only AND runs outside production AND its
 * issuer is on a loopback host. The issuer alone proves nothing: the default issuer is
 * `http://localhost:…` while the socket may be bound to `0.0.0.0`, where anyone who reaches
 * the port would use the switch. The app's own switches (the demo account) use the same table
 * type and the same function, so one start-up check decides them all.
 */
import { isLoopbackHost, isLoopbackListenAddress } from '@mcp-auth-kit/protocol';
import type { AuthorizationServerConfig } from '../config/types.js';

export interface DevSwitch<C> {
  /** The setting's name in the configuration (config file key / option). */
  setting: string;
  /** Its environment variable in the app (runtime contract), when it has one. */
  env?: string;
  /** Whether the configuration turns it on. */
  isOn(config: C): boolean;
  /** How to do without it, for the refusal message. */
  fix: string;
}

/** The authorization server's dev-only settings. */
export const DEV_SWITCHES: readonly DevSwitch<Partial<AuthorizationServerConfig>>[] = [
  {
    setting: 'devAutoLogin',
    env: 'DEV_AUTO_LOGIN',
    isOn: (c) => typeof c.devAutoLogin === 'string' && c.devAutoLogin.trim() !== '',
    fix: 'unset it (users log in through the login page)',
  },
  {
    setting: 'cimd.allowPrivateNetwork',
    env: 'CIMD_ALLOW_PRIVATE_NETWORK',
    isOn: (c) => !!c.cimd?.allowPrivateNetwork,
    fix: 'unset it (CIMD documents must be on public https hosts)',
  },
  {
    setting: 'cimd.extraCaCertificates',
    isOn: (c) => !!c.cimd?.extraCaCertificates,
    fix: 'unset it (public CIMD hosts are trusted through the system CAs, or NODE_EXTRA_CA_CERTS)',
  },
];

/** Header names a forwarder (proxy, tunnel, load balancer) adds; none is sent by a local browser. */
const FORWARDER_HEADER = /^(?:forwarded|x-forwarded-[a-z-]*|x-real-ip|via)$/;

/**
 * Whether a request may be served a dev-only behaviour (the dev auto-login): its `Host` is a
 * loopback host and it carries no forwarder header (RFC 7239 `Forwarded`, `X-Forwarded-*`,
 * `X-Real-IP`, `Via`). A loopback listener still receives requests from a tunnel or a same-host
 * proxy, which arrive with a public `Host` or forwarding headers: those get the normal pages.
 */
export function isLocalDevRequest(headers: Readonly<Record<string, string | string[] | undefined>>): boolean {
  if (Object.keys(headers).some((name) => FORWARDER_HEADER.test(name.toLowerCase()))) return false;
  const host = headers.host;
  if (typeof host !== 'string' || host === '') return false;
  let hostname: string;
  try {
    hostname = new URL(`http://${host}`).hostname;
  } catch {
    return false;
  }
  return isLoopbackHost(hostname.replace(/^\[(.*)\]$/, '$1'));
}

/** Where a server runs, as far as its dev switches are concerned. */
export interface DevSwitchExposure {
  production?: boolean;
  /** The issuer (a non-loopback issuer host is refused, as it always was). */
  issuer?: string;
  /**
   * The addresses the server listens on. Undefined: unknown (the caller listens itself); only
   * production and the issuer then decide.
   */
  listenHosts?: readonly string[];
  /**
   * The server is configured to sit behind a proxy (`trustProxy`): requests then arrive from
   * wherever the proxy takes them, whatever address the server listens on.
   */
  behindProxy?: boolean;
}

/** Whether a `trustProxy` setting says a proxy forwards requests to this server. */
export function behindProxy(trustProxy: unknown): boolean {
  return trustProxy !== undefined && trustProxy !== false && trustProxy !== 0 && !(Array.isArray(trustProxy) && trustProxy.length === 0);
}

/** The first listen address that is reachable from outside, if any (an empty list is unknown). */
export function exposedListenHost(listenHosts: readonly string[] | undefined): string | undefined {
  return listenHosts?.find((host) => !isLoopbackListenAddress(host));
}

function describeHost(host: string): string {
  if (host === '') return 'no host (every interface)';
  return host === '0.0.0.0' || host === '::' || host === '[::]' ? `${host} (every interface)` : host;
}

/** One refusal per switch that is on where it must not be; empty when all is well. */
export function devSwitchProblems<C>(switches: readonly DevSwitch<C>[], config: C, exposure: DevSwitchExposure): string[] {
  const problems: string[] = [];
  let issuerHost: string | undefined;
  try {
    issuerHost = exposure.issuer ? new URL(exposure.issuer).hostname : undefined;
  } catch {
    // an invalid issuer is reported by the issuer check
  }
  const exposed = exposedListenHost(exposure.listenHosts);
  for (const sw of switches) {
    if (!sw.isOn(config)) continue;
    const name = sw.env ? `${sw.setting} (${sw.env})` : sw.setting;
    if (exposure.production) {
      problems.push(`${name}: dev-only switch refused in production; ${sw.fix}`);
    } else if (exposure.behindProxy) {
      problems.push(
        `${name}: dev-only switch refused because trustProxy (TRUST_PROXY) says a proxy forwards requests to this server ` +
          `from elsewhere; turn trustProxy off for local development or ${sw.fix}`,
      );
    } else if (exposed !== undefined) {
      problems.push(
        `${name}: dev-only switch refused because the server listens on ${describeHost(exposed)}, which is reachable from outside ` +
          '(a loopback issuer does not make it local); listen on loopback only (AS_HOST unset, or 127.0.0.1 / ::1) ' +
          `or ${sw.fix}`,
      );
    } else if (issuerHost !== undefined && !isLoopbackHost(issuerHost)) {
      problems.push(
        `${sw.setting}: refused because the issuer host "${issuerHost}" is not loopback (dev-only switch${sw.env ? ` ${sw.env}` : ''}; ${sw.fix})`,
      );
    }
  }
  return problems;
}
