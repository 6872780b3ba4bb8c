/** The demo resource's scopes (runtime contract: `notes:read` is basic, `notes:write` comes by step-up). */
export const NOTES_READ = 'notes:read';
export const NOTES_WRITE = 'notes:write';

/**
 * Scopes each tool needs. One table feeds both the resource-server middleware (which answers
 * 403 `insufficient_scope` before the MCP layer runs) and the SDK's per-tool scope challenge
 * (defence in depth should the middleware's policy ever be misconfigured).
 */
export const TOOL_SCOPES = {
  add_note: [NOTES_WRITE],
  list_notes: [NOTES_READ],
  whoami: [] as string[],
} as const satisfies Record<string, readonly string[]>;

/** Scopes any MCP request needs (the 401 challenge advertises them). */
export const DEFAULT_SCOPES: readonly string[] = [NOTES_READ];

/**
 * `scopes_supported` of the Protected Resource Metadata: per MCP 2026-07-28 "Scope Selection
 * Strategy" it is the minimal set for basic functionality; `notes:write` is requested by step-up.
 */
export const SCOPES_SUPPORTED: readonly string[] = [NOTES_READ];
