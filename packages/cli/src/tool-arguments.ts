import { ERR, McpAuthError } from '@mcp-auth-kit/client';

const EXAMPLE = `e.g. mcp-auth-kit call <mcp-url> <tool> '{"text":"hello"}' (single quotes keep the shell off the JSON)`;

/**
 * The `call` command's JSON argument: a JSON object (MCP tools/call `arguments`). A parse error
 * says where the JSON went wrong (the parser's position) and shows a working example.
 */
export function parseToolArguments(json: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    const detail = err instanceof SyntaxError ? err.message : String(err);
    const at = /at position (\d+)/.exec(detail)?.[1];
    const near = at === undefined ? '' : ` (here: ${JSON.stringify(json.slice(Number(at), Number(at) + 20) || 'end of input')})`;
    throw new McpAuthError(ERR.INVALID_ARGUMENT, `the tool arguments are not valid JSON: ${detail}${near}; ${EXAMPLE}`);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    const kind = value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
    throw new McpAuthError(ERR.INVALID_ARGUMENT, `the tool arguments must be a JSON object, not ${kind}; ${EXAMPLE}`);
  }
  return value as Record<string, unknown>;
}
