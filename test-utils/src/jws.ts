const BASE64URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * The compact JWS `token` with its signature spelt another way: the lowest unused bit of the last
 * signature character set, so the decoded bytes (and whether they verify) are the same. For
 * tests that a verifier refuses every spelling but the canonical one (RFC 4648 §3.5).
 * @throws when the signature's length leaves no unused bit (a multiple of 3 bytes).
 */
export function respeltSignature(token: string): string {
  const dot = token.lastIndexOf('.');
  const signature = token.slice(dot + 1);
  if (signature.length % 4 === 0) throw new Error('this signature length has no unused bits');
  const last = BASE64URL_ALPHABET.indexOf(signature.at(-1)!);
  return `${token.slice(0, dot + 1)}${signature.slice(0, -1)}${BASE64URL_ALPHABET[last | 1]}`;
}
