import { McpServer, requireScopes, type AuthInfo, type CallToolResult } from '@modelcontextprotocol/server';
import { advertiseAuthExtensions, type AuthExtensionsOptions, type StateBinding } from '@mcp-auth-kit/resource-server/core';
import type { McpAuthInfo } from '@mcp-auth-kit/resource-server';
import * as z from 'zod';
import { callerFrom, type Caller } from './caller.js';
import { DEMO_DEFAULTS } from './defaults.js';
import { registerDriveTool } from './drive-tool.js';
import type { NotesRepository } from './notes-store.js';
import { NOTES_READ, NOTES_WRITE, scopesForTool } from './scopes.js';

export const SERVER_INFO = { name: 'mcp-auth-kit-demo', version: '0.1.0' } as const;

/** Notes per `list_notes` page; more come with the page's `next` cursor. */
export const NOTES_PAGE = 50;

/** Longest note accepted by `add_note` (characters). */
export const MAX_NOTE_LENGTH = 2000;

function jsonResult(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}

function unauthenticated(): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: 'This tool needs an authenticated caller.' }] };
}

function withCaller(
  authInfo: AuthInfo | undefined,
  run: (caller: Caller) => CallToolResult | Promise<CallToolResult>,
): CallToolResult | Promise<CallToolResult> {
  const caller = callerFrom(authInfo);
  return caller ? run(caller) : unauthenticated();
}

const noteSchema = z.object({ id: z.string(), text: z.string(), createdAt: z.string() });

type NotesServerOptions = { driveApi?: string; authExtensions?: AuthExtensionsOptions; state?: StateBinding };

function registerAddNote(server: McpServer, store: NotesRepository): void {
  server.registerTool(
    'add_note',
    {
      title: 'Add note',
      description: `Stores a note for the calling user. Requires scope ${NOTES_WRITE}.`,
      inputSchema: z.object({ text: z.string().min(1).max(MAX_NOTE_LENGTH).describe('The note text') }),
      outputSchema: z.object({ note: noteSchema }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
      scopeChallenge: requireScopes(...scopesForTool('add_note')),
    },
    ({ text }, ctx) => withCaller(ctx.http?.authInfo, async (caller) => jsonResult({ note: await store.add(caller.subject, text) })),
  );
}

function registerListNotes(server: McpServer, store: NotesRepository, state: StateBinding | undefined): void {
  server.registerTool(
    'list_notes',
    {
      title: 'List notes',
      description: `Lists the calling user's notes, oldest first, ${NOTES_PAGE} at a time: pass \`next\` back as \`cursor\` for more. Requires scope ${NOTES_READ}.`,
      inputSchema: z.object({ cursor: z.string().max(512).optional().describe('The `next` of the previous page') }),
      outputSchema: z.object({ notes: z.array(noteSchema), next: z.string().optional() }),
      annotations: { readOnlyHint: true, openWorldHint: false },
      scopeChallenge: requireScopes(...scopesForTool('list_notes')),
    },
    ({ cursor }, ctx) =>
      withCaller(ctx.http?.authInfo, async (caller) => {
        // The cursor is a state handle bound to the caller (security best practices, state handle
        // hijacking): one minted for another user, or altered, is no cursor at all.
        const start = cursor === undefined ? 0 : Number(state?.open(ctx.http?.authInfo as McpAuthInfo, cursor));
        if (!Number.isSafeInteger(start) || start < 0)
          return { isError: true, content: [{ type: 'text', text: 'Unknown cursor: list again without one.' }] };
        const all = await store.list(caller.subject);
        const page = all.slice(start, start + NOTES_PAGE);
        const more = start + NOTES_PAGE < all.length && state;
        return jsonResult({
          notes: [...page],
          ...(more && { next: more.mint(ctx.http?.authInfo as McpAuthInfo, String(start + NOTES_PAGE)) }),
        });
      }),
  );
}

function registerWhoami(server: McpServer): void {
  server.registerTool(
    'whoami',
    {
      title: 'Who am I',
      description: 'Returns the subject, client_id and granted scopes of the access token used for this call.',
      outputSchema: z.object({
        sub: z.string(),
        client_id: z.string(),
        scopes: z.array(z.string()),
        iss: z.string().optional(),
        resource: z.string().optional(),
        expires_at: z.number().optional(),
      }),
      annotations: { readOnlyHint: true, openWorldHint: false },
      scopeChallenge: requireScopes(...scopesForTool('whoami')),
    },
    (ctx) =>
      withCaller(ctx.http?.authInfo, (caller) =>
        jsonResult({
          sub: caller.subject,
          client_id: caller.clientId,
          scopes: caller.scopes,
          ...(caller.issuer !== undefined && { iss: caller.issuer }),
          ...(caller.resource !== undefined && { resource: caller.resource }),
          ...(caller.expiresAt !== undefined && { expires_at: caller.expiresAt }),
        }),
      ),
  );
}

/**
 * Builds one MCP server instance with the demo tools. The SDK calls this once per HTTP request
 * (both the 2026-07-28 stateless wire and the stateless 2025-11-25 fallback), so all state
 * lives in the shared `store`. Tools are registered in a fixed (alphabetical) order so
 * `tools/list` is deterministic (MCP 2026-07-28 changelog, minor change 3).
 */
export function createNotesMcpServer(store: NotesRepository, options: NotesServerOptions = {}): McpServer {
  const server = new McpServer(
    { ...SERVER_INFO },
    {
      // The tool set is fixed: promising list-changed notifications would be untrue.
      capabilities: { tools: { listChanged: false } },
      instructions: 'Demo notes server: whoami, list_notes (notes:read), add_note (notes:write).',
      // The tool list never varies per caller or over time, but it sits behind auth: private.
      cacheHints: { 'tools/list': { ttlMs: 300_000, cacheScope: 'private' } },
    },
  );
  registerAddNote(server, store);
  // spec/extensions: the authorization extensions of our AS, in server/discover's capabilities.
  advertiseAuthExtensions(server, options.authExtensions ?? DEMO_DEFAULTS.authExtensions);
  // Third-party authorization (issue 41): only when the demo drive is configured.
  if (options.driveApi !== undefined) registerDriveTool(server, options.driveApi);
  registerListNotes(server, store, options.state);
  registerWhoami(server);
  return server;
}
