/**
 * Which clients the operator disabled (any origin): a record in the shared kv store, so every
 * instance refuses them at once (client-gate.ts). Kept for a century: a disabled client stays
 * disabled until the operator enables it.
 */
import type { KeyValueStore } from '../storage/types.js';

export const CLIENT_DISABLED_NAMESPACE = 'client-disabled';
const KEEP_SECONDS = 100 * 365 * 24 * 3600;

export interface DisabledMark {
  /** Epoch seconds. */
  at: number;
  by: string;
}

export async function isClientDisabled(kv: KeyValueStore, clientId: string): Promise<boolean> {
  return (await kv.get<DisabledMark>(CLIENT_DISABLED_NAMESPACE, clientId)) !== undefined;
}

export async function markClientDisabled(kv: KeyValueStore, clientId: string, disabled: boolean, by: string): Promise<void> {
  if (disabled) await kv.set(CLIENT_DISABLED_NAMESPACE, clientId, { at: Math.floor(Date.now() / 1000), by }, KEEP_SECONDS);
  else await kv.delete(CLIENT_DISABLED_NAMESPACE, clientId);
}
