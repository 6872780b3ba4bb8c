/**
 * Pieces of the model statements that serve several requests at once (see batch.ts):
 * the inputs as a `VALUES` list, one live row looked up per input, results back in input order.
 */
import { LIVE } from './statements.js';

export interface RowKey {
  model: string;
  id: string;
  now: number;
}

export const rowKey = (input: { model: string; id: string }) => `${input.model}\u0000${input.id}`;

/**
 * Inputs of a batch statement as a `VALUES` list, one row per input, `$(offset + 1)`… in row
 * order (the first row carries the column types). A list of fixed length is a plain prepared statement for
 * PostgreSQL, whose generic plan it caches. Not arrays through `unnest`: their plan depends on
 * the array lengths, so every execution would be planned again, costing the server more than the
 * single statements a batch replaces.
 */
export function valuesList(rows: unknown[][], types: string[], offset = 0): { list: string; params: unknown[] } {
  const tuples = rows.map(
    (_, r) => `(${types.map((type, c) => `$${offset + r * types.length + c + 1}${r === 0 ? `::${type}` : ''}`).join(', ')})`,
  );
  return { list: `(VALUES ${tuples.join(', ')})`, params: rows.flat() };
}

/**
 * The live row of `oidc_models` named by `v.model`, `v.id` (at `v.now`), looked up by its key
 * once per input. Written as a lateral subquery that cannot be merged into the outer join
 * (`OFFSET 0`) so that the plan is one index lookup per input whatever the table's statistics
 * say: a cached plan made while the table looked small (never analyzed, autovacuum off) can be a
 * hash join over a sequential scan, which grows with the table.
 */
export function liveRowPerInput(q: string, columns: string): string {
  return `LATERAL (SELECT ${columns} FROM ${q}.oidc_models m
                   WHERE m.model = v.model AND m.id = v.id AND ${LIVE.replace('$NOW', 'v.now')} OFFSET 0) m`;
}

/** Results of a batch statement put back in the order of its inputs (rows name model and id). */
export function inInputOrder<T extends { model: string; id: string }>(
  inputs: { model: string; id: string }[],
  rows: T[],
): (T | undefined)[] {
  const byKey = new Map(rows.map((row) => [rowKey(row), row]));
  return inputs.map((input) => byKey.get(rowKey(input)));
}
