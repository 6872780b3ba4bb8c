/**
 * `@mcp-auth-kit/client/doctor`: an MCP deployment's authorization checked from outside, the
 * way a client meets it (issue 45). Each family of checks is a file of this folder.
 */
import { checkAuthorizationServers } from './authorization-server.js';
import { checkBrowser } from './browser.js';
import { checkChallenge } from './challenge.js';
import { reporter, type DoctorContext } from './context.js';
import { Probe } from './probe.js';
import { checkRefresh } from './refresh.js';
import { checkResourceMetadata } from './resource-metadata.js';
import { checkToken } from './token.js';
import type { CheckDeploymentOptions, DeploymentReport, Finding, FindingGroup, FindingStatus } from './types.js';

export type {
  CheckDeploymentOptions,
  DeploymentReport,
  Finding,
  FindingGroup,
  FindingStatus,
  RefreshCredentials,
  ScopeProbe,
} from './types.js';

const FAMILIES: ReadonlyArray<[FindingGroup, (ctx: DoctorContext) => Promise<void>]> = [
  ['challenge', checkChallenge],
  ['resource-metadata', checkResourceMetadata],
  ['authorization-server', checkAuthorizationServers],
  ['browser', checkBrowser],
  ['token', checkToken],
  ['refresh', checkRefresh],
];

/**
 * Checks the authorization of the MCP server at `url` against the MCP authorization spec
 * (2025-11-25 and 2026-07-28) and the RFCs it cites: the 401 challenge, the Protected Resource
 * Metadata, the authorization server's metadata, Origin and CORS, and, with a token, audience
 * binding, query-string tokens, the step-up challenge and refresh rotation.
 *
 * Every request goes through the client library's network policy: https and public addresses
 * only unless `allowPrivate`, each request bounded in time and size, at most `maxRequests` in
 * all within `timeoutMs`. Tokens never appear in the findings.
 *
 * @param url - the MCP endpoint, e.g. `https://mcp.example.com/mcp`.
 * @returns every finding, grouped in the order a client meets them, and the worst status.
 * @throws TypeError (`ERR_INVALID_ARG_VALUE`) when `url` is not an http(s) URL.
 * @see https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization
 */
export async function checkDeployment(url: string | URL, options: CheckDeploymentOptions = {}): Promise<DeploymentReport> {
  const target = serverUrl(url);
  const probe = new Probe(options);
  const findings: Finding[] = [];
  const found = { authorizationServers: new Map<string, Record<string, unknown>>() };
  for (const [group, run] of FAMILIES) {
    const ctx: DoctorContext = {
      url: target,
      options,
      probe,
      found,
      report: reporter(findings, group),
      failed: () => findings.filter((f) => f.status === 'fail'),
    };
    await run(ctx);
  }
  return summarize(target, findings, probe.count);
}

function serverUrl(url: string | URL): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw Object.assign(new TypeError(`checkDeployment: "${String(url)}" is not a URL`), { code: 'ERR_INVALID_ARG_VALUE' });
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw Object.assign(new TypeError('checkDeployment: the MCP server URL must be http(s)'), { code: 'ERR_INVALID_ARG_VALUE' });
  }
  parsed.hash = '';
  return parsed;
}

function summarize(url: URL, findings: Finding[], requests: number): DeploymentReport {
  const summary: Record<FindingStatus, number> = { pass: 0, warn: 0, fail: 0, skip: 0 };
  for (const f of findings) summary[f.status]++;
  const status = summary.fail > 0 ? 'fail' : summary.warn > 0 ? 'warn' : 'pass';
  return { url: url.href, findings, summary, requests, status };
}
