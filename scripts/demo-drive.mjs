#!/usr/bin/env node
// The demo's third-party service (issue 41), started by `npm start` beside the authorization
// server and the demo MCP server: the testing kit's loopback OAuth 2 provider with its "drive"
// API, one account (`demo` / `demo-drive-password`, a public password: loopback only) and one
// client, our authorization server, whose connect callback is its redirect URI. Everything it
// holds is in memory: a restart forgets its tokens, and the user connects again.
// Environment (set by scripts/start.mjs): DEMO_DRIVE_PORT, AS_ISSUER, DEMO_DRIVE_CLIENT_SECRET.
import { startThirdPartyProvider } from '@mcp-auth-kit/testing';

const DEMO_DRIVE_USER = { username: 'demo', password: 'demo-drive-password' };
// Our AS's client id at the drive (its configured provider `drive` uses the same).
const DEMO_DRIVE_CLIENT_ID = 'mcp-auth-kit-demo';

const port = Number(process.env.DEMO_DRIVE_PORT);
const issuer = process.env.AS_ISSUER;
const clientSecret = process.env.DEMO_DRIVE_CLIENT_SECRET;
if (!Number.isInteger(port) || !issuer || !clientSecret) {
  process.stderr.write('demo drive: DEMO_DRIVE_PORT, AS_ISSUER and DEMO_DRIVE_CLIENT_SECRET are set by npm start (scripts/start.mjs)\n');
  process.exit(1);
}

const drive = await startThirdPartyProvider({
  hostname: 'localhost',
  port,
  displayName: 'Drive',
  users: [
    {
      ...DEMO_DRIVE_USER,
      displayName: 'Demo User',
      files: [
        { name: 'Quarterly report.pdf', content: 'Q3: revenue up 12%.' },
        { name: 'Team offsite.md', content: '# Offsite\nThursday, 10:00, room 4.' },
        { name: 'budget-2027.xlsx', content: 'budget' },
      ],
    },
  ],
  clients: [
    {
      clientId: DEMO_DRIVE_CLIENT_ID,
      clientSecret,
      name: 'MCP auth kit (demo)',
      // The contract's connect callback of our AS: `<issuer>/connect/callback`.
      redirectUris: [`${issuer.replace(/\/$/, '')}/connect/callback`],
    },
  ],
});
process.stdout.write(
  `listening on 127.0.0.1:${drive.port} (issuer ${drive.issuer}); sign in as ${DEMO_DRIVE_USER.username} / ${DEMO_DRIVE_USER.password}\n`,
);

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  await drive.close();
  process.exit(0);
}
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
