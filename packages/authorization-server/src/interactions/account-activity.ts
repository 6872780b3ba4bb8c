/**
 * The account page's activity, from the audit log kept in the store (audit.ts): when each
 * connected app last got or refreshed a token for the user, and the user's recent sign-ins
 * (how, from where, into which app). Only the user's own events; nothing secret is stored.
 */
import { escapeHtml } from '../http/html.js';
import type { Store } from '../storage/types.js';

const SIGN_INS = 10;

/** Epoch ms of the last token issued or refreshed for this user and client, if the log still has one. */
export async function lastUse(store: Store, accountId: string, clientId: string): Promise<number | undefined> {
  const [issued, refreshed] = await Promise.all(
    ['token.issued', 'token.refreshed'].map((event) => store.audit.search({ accountId, clientId, event, limit: 1 })),
  );
  const times = [issued?.[0]?.at, refreshed?.[0]?.at].filter((at): at is number => typeof at === 'number');
  return times.length ? Math.max(...times) : undefined;
}

export const shownTime = (ms: number | undefined) => (ms ? `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC` : 'Not yet');

/** "Recent sign-ins": the latest successful sign-ins of the account, newest first. */
export async function signInHistory(store: Store, accountId: string, clientName: (clientId: string) => Promise<string>): Promise<string> {
  const events = await store.audit.search({ accountId, event: 'login.succeeded', limit: SIGN_INS });
  const items = await Promise.all(
    events.map(async (e) => {
      const method = e.fields.method === 'upstream' || typeof e.fields.provider === 'string' ? 'single sign-on' : 'password';
      const app = e.clientId ? ` into ${escapeHtml(await clientName(e.clientId))}` : '';
      const ip = typeof e.fields.ip === 'string' ? ` from <code>${escapeHtml(e.fields.ip)}</code>` : '';
      return `<li>${escapeHtml(shownTime(e.at))}: with ${escapeHtml(method)}${app}${ip}</li>`;
    }),
  );
  return `<h2>Recent sign-ins</h2>
${items.length ? `<ul>${items.join('\n')}</ul>` : '<p>No sign-in recorded yet.</p>'}
<p class="muted">If you do not recognise a sign-in, change your password and revoke the apps you do not use.</p>`;
}
