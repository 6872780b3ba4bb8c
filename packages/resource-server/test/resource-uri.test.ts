import { describe, expect, it } from 'vitest';
import { audienceIncludes } from '../src/core.js';

const R = 'http://localhost:3000/mcp';

describe('audienceIncludes() (RFC 8707 §2, MCP §Canonical Server URI)', () => {
  it.each([
    ['http://localhost:3000/mcp'],
    ['HTTP://LOCALHOST:3000/mcp'],
    ['http://localhost:3000/mcp/'],
    [['other', 'http://localhost:3000/mcp']],
  ])('accepts aud %j', (aud) => {
    expect(audienceIncludes(aud, R)).toBe(true);
  });

  it.each([
    ['http://localhost:3000/MCP'],
    ['http://localhost:3000/mcp/x'],
    ['http://localhost:3000/mcp2'],
    ['http://localhost:3000/mc'],
    ['http://localhost:3000/mcp//'],
    ['http://localhost:3001/mcp'],
    ['https://localhost:3000/mcp'],
    ['http://localhost:3000'],
    ['http://user@localhost:3000/mcp'],
    ['http://localhost:3000/mcp#frag'],
    ['http://localhost:3000/mcp?x=1'],
    ['localhost:3000/mcp'],
    [''],
    [[]],
    [[1, null]],
    [42],
    [undefined],
  ])('refuses aud %j', (aud) => {
    expect(audienceIncludes(aud, R)).toBe(false);
  });

  it('normalises the default port and a root trailing slash', () => {
    expect(audienceIncludes('https://mcp.example.com:443/', 'https://mcp.example.com')).toBe(true);
    expect(audienceIncludes('http://mcp.example.com:80/mcp', 'http://mcp.example.com/mcp')).toBe(true);
  });
});
