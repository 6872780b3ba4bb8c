/** The `code` of every {@link ConfigError}, stable across packages and releases. */
export const INVALID_CONFIG = 'ERR_INVALID_CONFIG';

/**
 * A configuration refused at start-up, listing every problem found rather than the first, so one
 * run shows everything to fix. The authorization server, the resource-server middleware and the
 * apps all throw this one class, so `instanceof ConfigError` (or `code === 'ERR_INVALID_CONFIG'`)
 * works whichever package refused.
 *
 * It extends `TypeError` on purpose: a bad configuration is a caller bug, which Node and
 * oauth4webapi report as a `TypeError`, and the resource-server middleware threw a plain
 * `TypeError` before, so callers that catch `TypeError` keep working. (`instanceof Error` holds
 * too, as it did for the authorization server's earlier `ConfigError`.)
 */
export class ConfigError extends TypeError {
  readonly code = INVALID_CONFIG;
  /** Every problem, one human-readable line each, naming the setting it is about. */
  readonly problems: readonly string[];

  /** `subject` names what was configured: `'authorization server'` → "Invalid authorization server configuration:". */
  constructor(
    problems: readonly string[],
    readonly subject?: string,
  ) {
    super(`Invalid ${subject ? `${subject} ` : ''}configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    // A copy: the caller's array may keep growing after the throw.
    this.problems = Object.freeze([...problems]);
  }
}
