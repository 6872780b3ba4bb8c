/**
 * Every dev-only switch of the app in one table: the authorization server's (DEV_AUTO_LOGIN,
 * CIMD_ALLOW_PRIVATE_NETWORK, cimd.extraCaCertificates) and the app's demo account
 * (AS_DEMO_USER). Start-up refuses each one that is on while the server listens on an address
 * reachable from outside, runs in production, or has a non-loopback issuer
 * (`devSwitchProblems` of @mcp-auth-kit/authorization-server). test/security/dev-switches
 * tries every row.
 */
import type { AuthorizationServerConfig } from '@mcp-auth-kit/authorization-server';
import { DEV_SWITCHES, type DevSwitch } from '@mcp-auth-kit/authorization-server/ops';

/** What the table reads: the authorization server's settings and the app's own. */
export type AppDevSettings = Partial<AuthorizationServerConfig> & { demoUser?: boolean };

/** Where the app listens when AS_HOST is unset (also `startAuthServer` without `host`). */
export const DEFAULT_LISTEN_HOSTS: readonly string[] = ['127.0.0.1', '::1'];

export function listenHostsOf(host: string | undefined): string[] {
  return host ? [host] : [...DEFAULT_LISTEN_HOSTS];
}

/** `demo` / `demo-password` is printed in the README and the banner: anyone who can connect signs in. */
export const DEMO_USER_SWITCH: DevSwitch<AppDevSettings> = {
  setting: 'demoUser',
  env: 'AS_DEMO_USER',
  isOn: (c) => c.demoUser === true,
  fix: 'unset it (AS_DEMO_USER=0) and create real accounts with `npm run admin -- user add <username>`',
};

export const APP_DEV_SWITCHES: readonly DevSwitch<AppDevSettings>[] = [...DEV_SWITCHES, DEMO_USER_SWITCH];
