import { describe, expect, it } from 'vitest';
import { checkRedirectUri, extraSchemeProblem, isNativeRedirectUri, redirectUriKind } from '../src/redirect-uri.js';

/**
 * Redirect-URI scheme allowlist: https, loopback http (RFC 8252 §7.3), private-use schemes in
 * reverse domain name form (RFC 8252 §7.1). Everything else is refused, in particular OS protocol
 * handlers that would run something on the user's machine with the code in hand.
 */
describe('checkRedirectUri: scheme allowlist (OAuth 2.1 §2.3.1, RFC 8252 §7.1, §7.3)', () => {
  it.each([
    ['https://app.example.com/callback', 'https'],
    ['HTTPS://APP.EXAMPLE.COM/cb', 'https'],
    ['http://127.0.0.1/callback', 'loopback'],
    ['http://127.0.0.1:49152/callback', 'loopback'],
    ['http://[::1]:8080/cb', 'loopback'],
    ['http://localhost:3000/cb', 'loopback'],
    ['com.example.app:/oauth2redirect', 'private-use'],
    ['com.example.app://callback', 'private-use'],
    ['io.github.user.tool:/cb', 'private-use'],
  ] as const)('%s is allowed as %s', (uri, kind) => {
    expect(redirectUriKind(uri)).toBe(kind);
  });

  it.each([
    // OS protocol handlers seen accepted as "native" redirect URIs by the review (issue 19, finding 2)
    'ms-msdt:/id PCWDiagnostic /skip force',
    'search-ms:query=secret&crumb=location:\\\\attacker\\share',
    'ms-word:ofe|u|https://attacker.example/doc.docx',
    'jar:https://attacker.example/x.jar!/',
    'mhtml:https://attacker.example/x.mht',
    'intent://scan/#Intent;scheme=zxing;end',
    'x-javascript:alert(1)',
    // script, data, file and browser-internal schemes
    'javascript:alert(1)',
    'JavaScript:alert(1)',
    'data:text/html,<script>1</script>',
    'file:///etc/passwd',
    'vbscript:msgbox',
    'blob:https://app.example.com/uuid',
    'about:blank',
    'view-source:https://a.example',
    'chrome://settings',
    'ws://127.0.0.1/',
    'wss://app.example.com/',
    'ftp://ftp.example.com/',
    'mailto:a@example.com',
    'tel:+1',
    'myapp:/callback',
    'custom-app://cb',
    // http beyond loopback, fragments, junk
    'http://app.example.com/cb',
    'http://10.0.0.1/cb',
    'http://0.0.0.0/cb',
    'https://app.example.com/cb#frag',
    'com.example.app:/cb#x',
    'not a uri',
    '/relative/path',
    '',
  ])('%s is refused', (uri) => {
    const check = checkRedirectUri(uri);
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.reason).toMatch(/redirect URI/);
  });

  it('operator extra schemes: a listed single-word scheme is private-use; nothing else changes', () => {
    const options = { extraSchemes: ['myhost'] };
    expect(redirectUriKind('myhost://callback', options)).toBe('private-use');
    expect(isNativeRedirectUri('myhost:/cb', options)).toBe(true);
    expect(redirectUriKind('myhost://callback')).toBeUndefined();
    expect(redirectUriKind('otherhost://callback', options)).toBeUndefined();
    expect(redirectUriKind('http://app.example.com/cb', { extraSchemes: ['http'] })).toBeUndefined();
  });

  it('extraSchemeProblem: only lower-case schemes that are not http(s) and cannot run content', () => {
    expect(extraSchemeProblem('myhost')).toBeUndefined();
    expect(extraSchemeProblem('my-host+x.1')).toBeUndefined();
    for (const bad of ['MyHost', 'myhost:', '1abc', '', 'http', 'https', 'javascript', 'data', 'file', 'vbscript', 'blob']) {
      expect(extraSchemeProblem(bad), bad).toBeTruthy();
    }
  });

  it('non-strings are refused', () => {
    for (const value of [undefined, null, 42, {}, ['https://a.example/cb']]) expect(checkRedirectUri(value).ok).toBe(false);
  });

  it('native = loopback or private-use (RFC 8252 §8.4 application_type)', () => {
    expect(isNativeRedirectUri('http://127.0.0.1:1234/callback')).toBe(true);
    expect(isNativeRedirectUri('http://localhost/callback')).toBe(true);
    expect(isNativeRedirectUri('com.example.app:/cb')).toBe(true);
    expect(isNativeRedirectUri('https://app.example.com/cb')).toBe(false);
    expect(isNativeRedirectUri('ms-msdt:/id')).toBe(false);
  });
});
