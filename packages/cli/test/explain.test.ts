import { describe, expect, it } from 'vitest';
import { ERR, McpAuthError, type McpAuthErrorCode } from '@mcp-auth-kit/client';
import { explainError } from '../src/explain.js';

/**
 * Every error the CLI prints says what happened and what to do (issue 46: the store and size
 * refusals came without advice). A code left without advice is listed here with the reason, so a
 * new code shows up in review.
 */
const WITHOUT_ADVICE: Record<string, string> = {
  [ERR.INVALID_ARGUMENT]: "the CLI's own argument check prints the usage instead",
};

const ctx = { server: 'http://127.0.0.1:3000/mcp', timeoutSeconds: 120 };

describe('CLI error messages: what happened and what to do', () => {
  it.each(Object.values(ERR))('%s', (code) => {
    const text = String(explainError(new McpAuthError(code, 'something went wrong'), ctx));
    const lines = text.trimEnd().split('\n');
    // the first line: what happened (some codes say it in their own words), with the code
    expect(lines[0]).toMatch(/^error: .+ \[MCP_AUTH_[A-Z_]+\]$/);
    expect(lines[0]?.endsWith(`[${code}]`)).toBe(true);
    if (code in WITHOUT_ADVICE) expect(lines).toHaveLength(1);
    else expect(lines, `${code} has no advice line`).toHaveLength(2);
  });

  it('the store and size refusals name what to do', () => {
    const advice = (code: McpAuthErrorCode) => String(explainError(new McpAuthError(code, 'x'), ctx)).split('\n')[1];
    expect(advice(ERR.STORE_UNSAFE)).toContain('--home <dir>');
    expect(advice(ERR.STORE_BUSY)).toContain('Another mcp-auth-kit process');
    expect(advice(ERR.RESPONSE_TOO_LARGE)).toContain('Nothing of the answer was kept');
  });

  it('a page the MCP server sends the user to: what to do when it was not opened (issue 41)', () => {
    const advice = (code: McpAuthErrorCode) => String(explainError(new McpAuthError(code, 'x'), ctx)).split('\n')[1];
    // the CLI's only source of this code: a URL elicitation with no terminal to ask (exit code 3)
    expect(advice(ERR.INTERACTION_REQUIRED)).toContain('Open the URL printed above in a browser');
    expect(advice(ERR.ELICITATION_DECLINED)).toContain('answer y');
    expect(advice(ERR.ELICITATION_REFUSED)).toContain('Nothing was opened');
  });
});
