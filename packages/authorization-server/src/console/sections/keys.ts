/**
 * Console › Keys: the signing keys (kid, algorithm, status, when made, until when a retired one
 * stays published) and how many cookie keys are kept; rotate either. Never key material.
 */
import type { Router } from 'express';
import { escapeHtml } from '../../http/html.js';
import { actor, type ConsoleOptions, done, field, locals, send } from '../context.js';
import { badge, notice, orDash, postButton, table, when } from '../layout.js';

const NOTICES: Record<string, string> = {
  signing: 'Signing keys rotated: the next key now signs; the old one stays published until its tokens expire.',
  cookie: 'Cookie keys rotated: new cookies use the new key; existing sessions stay valid.',
};
const TONE = { current: 'ok', next: '', retired: 'warn' } as const;

export function mountKeys(router: Router, o: ConsoleOptions): void {
  router.get('/keys', async (req, res) => {
    const f = locals(res).frame;
    const [signing, cookies] = await Promise.all([o.admin.listSigningKeys(), o.admin.cookieKeys()]);
    const rows = signing.map((k) => [
      `<code>${escapeHtml(k.kid)}</code>`,
      orDash(k.alg),
      badge(k.status, TONE[k.status]),
      escapeHtml(when(k.createdAt)),
      escapeHtml(k.status === 'retired' ? when(k.retireAfter) : '—'),
    ]);
    send(
      res,
      '/keys',
      'Keys',
      `<h1>Keys</h1>${notice(NOTICES[field(req.query, 'done')])}
<h2>Token signing keys</h2>
${table('Signing keys', ['Key ID', 'Algorithm', 'Status', 'Created', 'Published until'], rows, 'No signing key yet.')}
<div class="card"><p>Rotation makes the published <em>next</em> key the signer, so resource servers already know it; the old key stays published until the tokens it signed have expired. Running instances read the keys at start-up: restart them after a rotation.</p>
${postButton(f, '/keys/rotate-signing', 'Rotate signing keys', {}, 'primary')}</div>
<h2>Cookie keys</h2>
<div class="card"><p>${escapeHtml(String(cookies.count))} cookie key${cookies.count === 1 ? '' : 's'} kept: the newest signs cookies, the older ones still verify them.</p>
${postButton(f, '/keys/rotate-cookie', 'Rotate cookie keys', {}, 'primary')}</div>`,
    );
  });

  router.post('/keys/rotate-signing', async (_req, res) => {
    await o.admin.rotateSigningKeys(actor(res));
    done(res, '/keys', 'signing');
  });
  router.post('/keys/rotate-cookie', async (_req, res) => {
    await o.admin.rotateCookieKeys(actor(res));
    done(res, '/keys', 'cookie');
  });
}
