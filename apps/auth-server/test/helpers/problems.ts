import { expect } from 'vitest';

/** Each pattern matches one of `problems`, and there are exactly as many problems as patterns. */
export function expectProblems(problems: readonly string[], patterns: readonly RegExp[]): string {
  const text = problems.join('\n');
  for (const pattern of patterns) expect(text).toMatch(pattern);
  expect(problems).toHaveLength(patterns.length);
  return text;
}
