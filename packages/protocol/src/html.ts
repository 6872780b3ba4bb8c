/**
 * HTML escaping for server-rendered pages (the AS's login, consent and account pages, the
 * client's loopback callback page): every value from outside — client names, scopes, error
 * descriptions — goes through this one function, for text and for double- or single-quoted
 * attribute values alike (OWASP XSS prevention, rules 1 and 2).
 */
export function escapeHtml(value: unknown): string {
  return String(value ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}
