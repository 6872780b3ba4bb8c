/** HTML escaping and the page frame for server-rendered pages (every interpolated value escaped). */
import { escapeHtml } from '@mcp-auth-kit/protocol';

// One escaping rule for every page (packages/protocol/src/html.ts).
export { escapeHtml };

/**
 * The pages' stylesheet, served by the interaction router as an external file so that the
 * CSP can say `style-src 'self'` (no inline styles, no hashes or nonces to keep in sync).
 */
export const PAGE_STYLE = `*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;max-width:34rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f;line-height:1.45;background:#fafafa}
main{background:#fff;border:1px solid #ddd;border-radius:8px;padding:1rem 1.25rem 1.25rem}
h1{font-size:1.4rem;margin:.2rem 0 .8rem}h2{font-size:1.05rem;margin:1.2rem 0 .4rem}
label{display:block;margin:.8rem 0 .2rem;font-weight:600}
input[type=text],input[type=password]{width:100%;padding:.6rem;font-size:1rem;border:1px solid #888;border-radius:4px}
input[aria-invalid=true]{border-color:#b3261e}
button{padding:.6rem 1.2rem;margin:1rem .5rem 0 0;font-size:1rem;border-radius:4px;border:1px solid #555;background:#f2f2f2;cursor:pointer}
button.primary{background:#1a56db;border-color:#1a56db;color:#fff}
button.upstream{width:100%;margin:.4rem 0 0}
.actions{display:flex;flex-wrap:wrap}
.warn{background:#fff3cd;border:1px solid #c9a227;padding:.6rem;border-radius:4px}
.error{background:#fde2e1;border:1px solid #b3261e;padding:.6rem;border-radius:4px}
.badge{display:inline-block;font-size:.8rem;padding:0 .4rem;border:1px solid #c9a227;border-radius:4px;background:#fff8e1;font-style:normal}
.muted{color:#555;font-size:.9rem}
code{overflow-wrap:anywhere;background:#f3f3f3;padding:0 .2rem;border-radius:3px}
dt{font-weight:600;margin-top:.6rem}dd{margin-left:0}ul{padding-left:1.2rem;margin:.2rem 0}
.grants{list-style:none;padding:0}.grants>li{border-top:1px solid #ddd;padding:.4rem 0 .8rem}h3{font-size:1rem;margin:.6rem 0 .2rem}
.divider{text-align:center;color:#555;margin:1.2rem 0 .2rem}
button.link{background:none;border:none;padding:0;margin:0;color:#1a56db;text-decoration:underline;font-size:inherit;width:auto}
form.switch p{margin:-.4rem 0 .8rem}
@media (max-width:30rem){body{margin:0 auto;padding:0 .5rem}main{border:none;padding:.75rem .25rem}button{width:100%;margin-right:0}}
@media (prefers-color-scheme:dark){body{background:#121212;color:#eee}main{background:#1e1e1e;border-color:#333}code{background:#2a2a2a}
.warn{background:#3a3000;color:#fff}.error{background:#3d1512;color:#fff}.muted{color:#bbb}button{background:#333;color:#eee}
input[type=text],input[type=password]{background:#111;color:#eee}.badge{background:#3a3000;color:#fff}button.link{background:none;color:#8ab4f8}}
`;

/**
 * A complete page. `stylesheet` is the URL of PAGE_STYLE (see the interaction router); pages
 * carry no inline style or script at all.
 */
export function page(title: string, body: string, stylesheet?: string): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title>${stylesheet ? `<link rel="stylesheet" href="${escapeHtml(stylesheet)}">` : ''}</head><body><main>${body}</main></body></html>`;
}
