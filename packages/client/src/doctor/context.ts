import type { Challenge } from '@mcp-auth-kit/protocol';
import type { Exchange, Probe } from './probe.js';
import type { CheckDeploymentOptions, Finding, FindingGroup, FindingStatus } from './types.js';

/** What one check family learned that the next ones need (the discovery a client makes). */
export interface Discovered {
  /** The Bearer challenge of the unauthenticated request. */
  challenge?: Challenge;
  /** The PRM document clients find, and the URL it came from. */
  resourceMetadata?: Record<string, unknown>;
  /** Each authorization server's metadata that was found, by issuer identifier. */
  authorizationServers: Map<string, Record<string, unknown>>;
}

export interface DoctorContext {
  /** The MCP server URL as given (query and fragment dropped). */
  url: URL;
  options: CheckDeploymentOptions;
  probe: Probe;
  found: Discovered;
  report(finding: Omit<Finding, 'group'>): void;
  /** The failed findings so far (a later check that would send a secret stops on them). */
  failed(): Finding[];
}

/** A finding of `group` whose evidence is `exchange`. */
export function evidence(exchange: Exchange | undefined): Pick<Finding, 'sent' | 'received'> {
  return exchange ? { sent: exchange.sent, received: exchange.received } : {};
}

export function reporter(findings: Finding[], group: FindingGroup): (finding: Omit<Finding, 'group'>) => void {
  return (finding) => {
    const { fix, ...rest } = finding;
    // a fix is advice for what is wrong: a passing or skipped check carries none
    findings.push({ ...rest, group, ...(fix !== undefined && (finding.status === 'warn' || finding.status === 'fail') && { fix }) });
  };
}

/** The finding of a check that did not run, and why (`title`). */
export function skipped(id: string, section: string, title: string): Omit<Finding, 'group'> {
  return { id, status: 'skip', section, title };
}

/** `pass` when `ok`, else `otherwise`. */
export function verdict(ok: boolean, otherwise: FindingStatus = 'fail'): FindingStatus {
  return ok ? 'pass' : otherwise;
}

/** The headers of an MCP POST as a client sends it (Streamable HTTP §Sending Messages). */
export function mcpHeaders(extra: Record<string, string> = {}): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2025-11-25',
    ...extra,
  };
}

/** An `initialize` request: the first message any MCP client sends. */
export const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'mcp-auth-kit-doctor', version: '0.1.0' } },
});
