import fc from 'fast-check';
import { REGISTERED_ERRORS, leaksInternals } from './support.js';

/** Fixed seed for reproducible CI runs; FUZZ_SEED overrides, FUZZ_SCALE multiplies counts. */
export const FUZZ_SEED = Number(process.env.FUZZ_SEED ?? 20261202);
export const FUZZ_SCALE = Number(process.env.FUZZ_SCALE ?? 1);

export interface FuzzRequest {
  label: string;
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

export interface FuzzFailure {
  request: FuzzRequest;
  problem: string;
  status?: number;
  excerpt?: string;
}

/** Header values fetch accepts (ByteString, no CR/LF/NUL), as hostile as that allows. */
export const headerValue = fc
  .oneof(
    fc.string({ maxLength: 80 }),
    fc.string({ unit: 'binary-ascii', maxLength: 80 }),
    fc.constantFrom('', ' ', 'null', 'undefined', '[]', '{}', '"', '\\', '%00', '%0d%0a', 'Bearer', 'Basic Og==', 'Basic', '*', '../..'),
  )
  .map((s) => s.replace(/[^\x20-\x7e\t]/g, '').trim());

/**
 * Web URLs with fast-check's variety of paths, queries and fragments, but always a loopback
 * authority. A generated URL can reach the AS as a client_id, jwks_uri or redirect URI, and a
 * random public name (fast-check makes up domains like `x1c4.mt`) would send the AS to the
 * system resolver and perhaps to a public host: tests never leave loopback.
 */
export const loopbackUrl = fc
  .tuple(
    fc.webUrl({ withQueryParameters: true, withFragments: true }),
    fc.constantFrom('127.0.0.1', 'localhost', '[::1]', '127.0.0.1:1', 'localhost:9'),
  )
  .map(([generated, host]) => {
    const url = new URL(generated);
    url.host = host;
    return url.href;
  });

/** Values for form / query / JSON fields: junk, huge, unicode, look-alikes of valid values. */
export const fieldValue = (validLooking: string[] = []) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
    { weight: 1, arbitrary: fc.nat({ max: 4 }).map((n) => 'A'.repeat(10 ** n)) },
    { weight: 1, arbitrary: loopbackUrl },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '',
        ' ',
        'null',
        'true',
        '0',
        '-1',
        '1e309',
        '[]',
        '{}',
        '<x-fuzz-marker>',
        '"><script>x-fuzz</script>',
        '%00',
        '\u0000',
        'javascript:alert(1)',
        'http://127.0.0.1:1/x',
        'S256',
        'plain',
        'none',
        'code',
        'token',
        'openid',
        'offline_access',
        ...validLooking,
      ),
    },
  );

/** Runs requests with bounded concurrency over keep-alive connections and checks every answer. */
export async function fuzzHttp(
  requests: FuzzRequest[],
  check: (req: FuzzRequest, res: { status: number; headers: Headers; text: string }) => string | undefined,
  concurrency = 8,
): Promise<{ failures: FuzzFailure[]; statuses: Map<number, number> }> {
  const failures: FuzzFailure[] = [];
  const statuses = new Map<number, number>();
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const request = requests[next++]!;
      try {
        const res = await fetch(request.url, {
          method: request.method,
          headers: request.headers,
          body: request.method === 'GET' || request.method === 'HEAD' ? undefined : request.body,
          redirect: 'manual',
          signal: AbortSignal.timeout(10_000),
        });
        const text = await res.text();
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        const problem =
          res.status >= 500
            ? `HTTP ${res.status}`
            : request.method === 'HEAD'
              ? undefined
              : res.status >= 500
                ? `HTTP ${res.status}`
                : leaksInternals(text)
                  ? 'stack or path leaked'
                  : check(request, { status: res.status, headers: res.headers, text });
        if (problem) failures.push({ request, problem, status: res.status, excerpt: text.slice(0, 300) });
      } catch (error) {
        failures.push({ request, problem: `request failed: ${(error as Error).message}` });
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { failures, statuses };
}

/** An OAuth JSON error answer must carry a registered `error` code (RFC 6749 §5.2 and friends). */
export function oauthErrorShape(res: { status: number; headers: Headers; text: string }): string | undefined {
  if (res.status < 400) return undefined;
  const type = res.headers.get('content-type') ?? '';
  if (!type.includes('json')) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch {
    return 'JSON content type with an unparsable body';
  }
  const error = (body as { error?: unknown })?.error;
  if (typeof error !== 'string') return 'error member missing or not a string';
  if (!REGISTERED_ERRORS.has(error)) return `unregistered error code ${JSON.stringify(error)}`;
  return undefined;
}

/** Reflected markers must never appear unescaped in an HTML page (reflected XSS). */
export function noReflectedMarkup(res: { headers: Headers; text: string }): string | undefined {
  const type = res.headers.get('content-type') ?? '';
  if (type.includes('html') && (res.text.includes('<x-fuzz-marker>') || res.text.includes('<script>x-fuzz')))
    return 'unescaped input reflected in HTML';
  return undefined;
}

export function summarize(failures: FuzzFailure[]): string {
  return failures
    .slice(0, 5)
    .map(
      (f) =>
        `${f.problem} ← ${f.request.label} ${f.request.method} ${f.request.url.slice(0, 200)} ${String(f.request.body ?? '').slice(0, 200)} :: ${f.excerpt ?? ''}`,
    )
    .join('\n');
}
