import type { McpServer, CallToolResult } from '@modelcontextprotocol/server';
import { thirdPartyToken, withThirdPartyAuthorization } from '@mcp-auth-kit/resource-server';
import * as z from 'zod';

/** The provider's name at our authorization server (its `thirdParty.providers` key). */
export const DRIVE_PROVIDER = 'drive';

/** A drive file as the tool answers it (no content: the listing only). */
const fileSchema = z.object({ id: z.string(), name: z.string(), size: z.number() });

/** Longest drive answer read (bytes): the third party is outside our control. */
const MAX_DRIVE_ANSWER = 256 * 1024;

/**
 * `drive_list_files`: the user's files at the demo drive, a third party. The drive token comes
 * from our authorization server by token exchange (never the MCP token itself: MCP security best
 * practices, token passthrough); a user who has not connected the drive gets a URL elicitation of
 * the AS's connect page, on whichever wire the client speaks.
 */
export function registerDriveTool(server: McpServer, driveApi: string): void {
  const filesUrl = new URL('files', driveApi.endsWith('/') ? driveApi : `${driveApi}/`);
  server.registerTool(
    'drive_list_files',
    {
      title: 'List drive files',
      description:
        "Lists the calling user's files at the demo drive (a third-party service, connected once through the authorization server).",
      outputSchema: z.object({ files: z.array(fileSchema) }),
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    withThirdPartyAuthorization(async (ctx): Promise<CallToolResult> => {
      const token = await thirdPartyToken(ctx.http?.authInfo, DRIVE_PROVIDER, { signal: ctx.mcpReq.signal });
      const answer = await fetch(filesUrl, {
        headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
        redirect: 'error',
        signal: AbortSignal.any([ctx.mcpReq.signal, AbortSignal.timeout(10_000)]),
      });
      const text = await answer.text();
      if (!answer.ok || text.length > MAX_DRIVE_ANSWER) {
        // The drive's own words stay out of the answer: they are a third party's text.
        return { isError: true, content: [{ type: 'text', text: `The drive refused the request (HTTP ${answer.status}).` }] };
      }
      const parsed = z.object({ files: z.array(fileSchema) }).safeParse(JSON.parse(text));
      if (!parsed.success) return { isError: true, content: [{ type: 'text', text: 'The drive answered in an unexpected shape.' }] };
      const value = { files: parsed.data.files };
      return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
    }),
  );
}
