// A user's CI step with the installed testing kit (issue 41): completes the URL elicitation the
// MCP server sent (the AS's connect page) headlessly, as the demo user at our AS and at the drive.
import { completeUrlElicitation } from '@mcp-auth-kit/testing';

const [url] = process.argv.slice(2);
await completeUrlElicitation(url, {
  authServer: { username: 'demo', password: 'demo-password' },
  provider: { username: 'demo', password: 'demo-drive-password' },
});
console.log('CONNECTED');
