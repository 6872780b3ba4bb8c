import { expect } from 'vitest';

/**
 * RFC 7591 §3.1 registration of a public client (`token_endpoint_auth_method: none`) at the AS's
 * registration endpoint; expects the §3.2.1 answer (201) and returns the client_id.
 */
export async function registerPublicClient(registrationEndpoint: string, metadata: Record<string, unknown>): Promise<string> {
  const res = await fetch(registrationEndpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ ...metadata, token_endpoint_auth_method: 'none' }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { client_id: string }).client_id;
}
