/** The admin tool's `clients …` and `cimd …` commands: every client, and the CIMD approval queue. */
import { terminalText } from '@mcp-auth-kit/protocol';
import { type AdminCommand, type AdminContext, CLI_ACTOR, UsageError, userRow } from './admin-command.js';

const CIMD_STATUSES = ['pending', 'approved', 'denied'] as const;
type CimdStatus = (typeof CIMD_STATUSES)[number];

async function listClients({ io, service }: AdminContext): Promise<void> {
  for (const c of await service.listClients()) {
    const status = [c.disabled ? 'disabled' : 'active', ...(c.approval ? [c.approval] : [])].join(',');
    io.out(userRow([c.origin, c.clientId, status, c.redirectUris.join(' ')]));
  }
}

async function listCimd({ io, service, positionals }: AdminContext): Promise<void> {
  const filter = positionals[2];
  if (filter !== undefined && !(CIMD_STATUSES as readonly string[]).includes(filter))
    throw new UsageError('cimd list takes pending, approved or denied');
  for (const c of await service.listCimdClients(filter as CimdStatus | undefined)) {
    io.out(userRow([c.status, c.clientId, c.host, new Date(c.firstSeen * 1000).toISOString()]));
  }
}

async function decideCimd({ io, service, key, action, positionals }: AdminContext): Promise<void> {
  const clientId = positionals[2];
  if (!clientId) throw new UsageError(`${key} needs a client_id URL`);
  const decided = await service.decideCimdClient(CLI_ACTOR, clientId, action === 'approve' ? 'approved' : 'denied');
  io.out(terminalText`${decided.clientId} ${decided.status}`);
}

export const CLIENT_COMMANDS: Readonly<Record<string, AdminCommand>> = {
  'clients list': listClients,
  'cimd list': listCimd,
  'cimd approve': decideCimd,
  'cimd deny': decideCimd,
};
