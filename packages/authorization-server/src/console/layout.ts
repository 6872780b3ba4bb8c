/**
 * The console's page frame: a header with the service name and the operator, a navigation bar
 * (a list of links, the current one marked with `aria-current`), and small HTML builders the
 * pages share (tables, one-button forms). Every interpolated value goes through escapeHtml; the
 * stylesheet is an external file (CONSOLE_STYLE), so the CSP keeps `style-src 'self'` and no
 * script at all.
 */
import { escapeHtml } from '../http/html.js';

export const CONSOLE_STYLE = `*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d1d1f;line-height:1.45;background:#f4f5f7}
a{color:#1a56db}a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
.skip{position:absolute;left:-999px}.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}.skip:focus{left:1rem;top:.5rem;background:#fff;padding:.4rem .8rem;z-index:2}
header{background:#111827;color:#f9fafb;padding:.75rem 1.5rem;display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1.5rem}
header .brand{font-weight:700;font-size:1.05rem;color:#f9fafb;text-decoration:none}
header .who{margin-left:auto;font-size:.9rem;color:#d1d5db;display:flex;align-items:center;gap:.75rem}
header .who form{margin:0}header .who button{margin:0;padding:.3rem .7rem;font-size:.85rem;background:#374151;color:#f9fafb;border-color:#4b5563}
nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem}
nav a{display:block;padding:.35rem .7rem;border-radius:6px;color:#e5e7eb;text-decoration:none;font-size:.95rem}
nav a:hover{background:#1f2937}nav a[aria-current=page]{background:#1a56db;color:#fff}
main{max-width:72rem;margin:1.25rem auto;padding:0 1.5rem}main.narrow{max-width:34rem;margin-top:3rem}
h1{font-size:1.5rem;margin:.25rem 0 1rem}h2{font-size:1.1rem;margin:1.5rem 0 .5rem}
.card{background:#fff;border:1px solid #e5e7eb;border-radius:10px;padding:1rem 1.25rem;margin-bottom:1rem;box-shadow:0 1px 2px rgba(0,0,0,.04)}
.card>:first-child{margin-top:0}.card>:last-child{margin-bottom:0}
.table{overflow-x:auto;background:#fff;border:1px solid #e5e7eb;border-radius:10px;box-shadow:0 1px 2px rgba(0,0,0,.04)}
table{border-collapse:collapse;width:100%;font-size:.92rem}
th,td{text-align:left;padding:.6rem .8rem;border-bottom:1px solid #eef0f3;vertical-align:top}
th{background:#f9fafb;font-weight:600;color:#374151;white-space:nowrap}tr:last-child td{border-bottom:none}
td form{display:inline-block;margin:0 .25rem .25rem 0}
code{overflow-wrap:anywhere;background:#f3f4f6;padding:0 .25rem;border-radius:4px;font-size:.88em}
label{display:block;margin:.6rem 0 .2rem;font-weight:600;font-size:.9rem}label.inline{display:inline;font-weight:400}
input[type=text],input[type=password],input[type=search],input[type=datetime-local],select,textarea{width:100%;padding:.5rem;font-size:1rem;border:1px solid #6b7280;border-radius:6px;background:#fff;color:inherit}
button{padding:.45rem .9rem;font-size:.92rem;border-radius:6px;border:1px solid #6b7280;background:#f9fafb;color:#111827;cursor:pointer}
a.button{display:inline-block;padding:.5rem 1.1rem;background:#1a56db;color:#fff;border-radius:6px;text-decoration:none;font-weight:600}
button.primary{background:#1a56db;border-color:#1a56db;color:#fff}button.danger{background:#b91c1c;border-color:#b91c1c;color:#fff}
.filters{display:grid;grid-template-columns:repeat(auto-fit,minmax(11rem,1fr));gap:0 1rem;align-items:end}.filters button{margin-top:.8rem}
.badge{display:inline-block;font-size:.78rem;padding:.05rem .45rem;border-radius:999px;border:1px solid #d1d5db;background:#f3f4f6;color:#374151;white-space:nowrap}
.badge.ok{background:#dcfce7;border-color:#86efac;color:#14532d}.badge.warn{background:#fef3c7;border-color:#fcd34d;color:#78350f}.badge.bad{background:#fee2e2;border-color:#fca5a5;color:#7f1d1d}
.notice{background:#ecfdf5;border:1px solid #6ee7b7;padding:.6rem .8rem;border-radius:8px;margin-bottom:1rem}
.error{background:#fee2e2;border:1px solid #b91c1c;padding:.6rem .8rem;border-radius:8px;margin-bottom:1rem}
.muted{color:#4b5563;font-size:.88rem}ul.plain{list-style:none;padding:0;margin:0}dl{margin:0 0 .8rem}dt{font-weight:600;margin-top:.5rem;font-size:.9rem;color:#374151}dd{margin:0}
.stats{display:grid;grid-template-columns:repeat(auto-fit,minmax(9rem,1fr));gap:1rem;margin-bottom:1rem}
.stats a{display:block;background:#fff;border:1px solid #e5e7eb;border-radius:10px;padding:.8rem 1rem;text-decoration:none;color:inherit}
.stats strong{display:block;font-size:1.6rem}
@media (max-width:40rem){header{padding:.6rem .75rem}main{padding:0 .5rem;margin-top:.75rem}header .who{margin-left:0;width:100%}
table.stack thead{position:absolute;left:-999px}table.stack tr{display:block;border-bottom:1px solid #e5e7eb;padding:.4rem 0}
table.stack td{display:block;border:none;padding:.2rem .75rem}table.stack td[data-label]::before{content:attr(data-label) ": ";font-weight:600;color:#374151}}
`;

export interface ConsoleFrame {
  serviceName: string;
  /** `<mount>/console` */
  base: string;
  /** Which navigation entry this page is (its path under the console). */
  current: string;
  operator: string;
  csrf: string;
}

const SECTIONS: [path: string, label: string][] = [
  ['', 'Overview'],
  ['/clients', 'Clients'],
  ['/cimd', 'Client documents'],
  ['/users', 'Users'],
  ['/grants', 'Grants'],
  ['/keys', 'Keys'],
  ['/audit', 'Audit log'],
];

/** A complete console page: header, navigation, main content. */
export function consolePage(f: ConsoleFrame, title: string, body: string): string {
  const nav = SECTIONS.map(
    ([path, label]) =>
      `<li><a href="${escapeHtml(f.base + path)}"${path === f.current ? ' aria-current="page"' : ''}>${escapeHtml(label)}</a></li>`,
  ).join('');
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(`${title} — ${f.serviceName} console`)}</title><link rel="stylesheet" href="${escapeHtml(`${f.base}/assets/console.css`)}"></head>
<body><a class="skip" href="#content">Skip to content</a>
<header><a class="brand" href="${escapeHtml(f.base)}">${escapeHtml(f.serviceName)} · Console</a>
<nav aria-label="Console"><ul>${nav}</ul></nav>
<div class="who"><span>Signed in as <strong>${escapeHtml(f.operator)}</strong></span>${postButton(f, '/sign-out', 'Sign out', {})}</div></header>
<main id="content">${body}</main></body></html>`;
}

/** A page of the console shown before anyone is signed in (sign-in prompt, refusals). */
export function bareConsolePage(serviceName: string, base: string, title: string, body: string): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(`${title} — ${serviceName} console`)}</title><link rel="stylesheet" href="${escapeHtml(`${base}/assets/console.css`)}"></head>
<body><header><span class="brand">${escapeHtml(serviceName)} · Console</span></header><main id="content" class="narrow">${body}</main></body></html>`;
}

/**
 * A form with one button posting to the console (`path` under it), its CSRF token and hidden
 * fields; `label` is the button's accessible name, so it names what it acts on.
 */
export function postButton(
  f: Pick<ConsoleFrame, 'base' | 'csrf'>,
  path: string,
  label: string,
  fields: Record<string, string>,
  kind: '' | 'primary' | 'danger' = '',
  /** What the button acts on: part of its accessible name, not shown (the row shows it). */
  target?: string,
): string {
  const text = target ? `${escapeHtml(label)}<span class="sr"> ${escapeHtml(target)}</span>` : escapeHtml(label);
  const hidden = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
  return `<form method="post" action="${escapeHtml(f.base + path)}"><input type="hidden" name="csrf" value="${escapeHtml(f.csrf)}">${hidden}<button type="submit"${kind ? ` class="${kind}"` : ''}>${text}</button></form>`;
}

/** A table that stacks into labelled rows at phone width; cells are HTML the caller escaped. */
export function table(caption: string, headers: string[], rows: string[][], empty: string): string {
  if (!rows.length) return `<p class="card muted">${escapeHtml(empty)}</p>`;
  const head = headers.map((h) => `<th scope="col">${escapeHtml(h)}</th>`).join('');
  const body = rows
    .map((cells) => `<tr>${cells.map((c, i) => `<td data-label="${escapeHtml(headers[i] ?? '')}">${c}</td>`).join('')}</tr>`)
    .join('\n');
  return `<div class="table"><table class="stack"><caption class="sr">${escapeHtml(caption)}</caption><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table></div>`;
}

/** Epoch seconds as `YYYY-MM-DD HH:MM UTC`, or a dash. */
export function when(epochSeconds: number | undefined): string {
  if (!epochSeconds) return '—';
  return `${new Date(epochSeconds * 1000).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** A value the record may lack, escaped, or a dash. */
export function orDash(value: string | undefined): string {
  return value === undefined || value === '' ? '—' : escapeHtml(value);
}

export function badge(text: string, tone: '' | 'ok' | 'warn' | 'bad' = ''): string {
  return `<span class="badge${tone ? ` ${tone}` : ''}">${escapeHtml(text)}</span>`;
}

/** The notice a change redirects to (`?done=…`), from a fixed list: never text from the URL. */
export function notice(text: string | undefined): string {
  return text ? `<p class="notice" role="status">${escapeHtml(text)}</p>` : '';
}

/** A list page's search form (GET): its controls, one per line, then one submit button. */
export function filterForm(f: Pick<ConsoleFrame, 'base'>, path: string, controls: string[], button: string): string {
  return `<form class="card filters" method="get" action="${escapeHtml(`${f.base}${path}`)}" role="search">
${controls.join('\n')}
<div><button type="submit">${button}</button></div></form>`;
}
