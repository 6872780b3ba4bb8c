/** Summaries of per-round samples, and the per-round ratios that are the benchmark's real output. */

export function summarize(values) {
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return { min: NaN, median: NaN, max: NaN, n: 0 };
  const sorted = [...finite].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { min: sorted[0], median, max: sorted.at(-1), n: sorted.length };
}

/** Ratios of two series measured in the same rounds: only same-round ratios are comparable on a shared CPU. */
export function roundRatios(numerator, denominator) {
  const out = [];
  for (let i = 0; i < Math.min(numerator.length, denominator.length); i++) out.push(numerator[i] / denominator[i]);
  return out;
}

/** `{ op: '>=' | '<=', value }` checked against the median ratio. */
export function verdict(median, target) {
  if (!target) return '';
  if (!Number.isFinite(median)) return 'n/a';
  const ok = target.op === '>=' ? median >= target.value : median <= target.value;
  return ok ? 'PASS' : 'MISS';
}
