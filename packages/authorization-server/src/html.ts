/** HTML escaping for server-rendered pages (every interpolated value goes through it). */
export function escapeHtml(value: unknown): string {
  return String(value ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

export const PAGE_STYLE = `body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#222}
h1{font-size:1.4rem}label{display:block;margin:.8rem 0 .2rem}input[type=text],input[type=password]{width:100%;padding:.5rem;box-sizing:border-box}
button{padding:.5rem 1.2rem;margin:1rem .5rem 0 0}.warn{background:#fff3cd;border:1px solid #e0c060;padding:.6rem;border-radius:4px}
.error{background:#fde2e1;border:1px solid #d9534f;padding:.6rem;border-radius:4px}code{word-break:break-all}dt{font-weight:600;margin-top:.6rem}dd{margin-left:0}`;

export function page(title: string, body: string): string {
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${PAGE_STYLE}</style></head><body>${body}</body></html>`;
}
