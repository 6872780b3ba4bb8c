/** The demo resource's scopes (runtime contract: `notes:read` is basic, `notes:write` comes by step-up). */
export const NOTES_READ = 'notes:read';
export const NOTES_WRITE = 'notes:write';

/** Scopes any MCP request needs (the 401 challenge advertises them). */
export const DEFAULT_SCOPES: readonly string[] = [NOTES_READ];

/**
 * Scopes each tool needs beyond {@link DEFAULT_SCOPES}. One table feeds both the resource-server
 * middleware (which answers 403 `insufficient_scope` before the MCP layer runs) and the SDK's
 * per-tool scope challenge (defence in depth should the middleware's policy be misconfigured).
 */
export const TOOL_SCOPES = {
  add_note: [NOTES_WRITE],
  list_notes: [NOTES_READ],
  whoami: [],
} as const satisfies Record<string, readonly string[]>;

export type DemoToolName = keyof typeof TOOL_SCOPES;

/**
 * Every scope a call of `tool` needs, in one set: MCP Scope Challenge Handling asks servers to
 * name all scopes for the operation in a single challenge, consistently.
 */
export function scopesForTool(tool: DemoToolName): [string, ...string[]] {
  const scopes = [...new Set<string>([...DEFAULT_SCOPES, ...TOOL_SCOPES[tool]])];
  return scopes as [string, ...string[]];
}

/**
 * `scopes_supported` of the Protected Resource Metadata: per MCP 2026-07-28 "Scope Selection
 * Strategy" it is the minimal set for basic functionality; `notes:write` is requested by step-up.
 */
export const SCOPES_SUPPORTED: readonly string[] = [NOTES_READ];
