/** Plain-text tables: one per case, samples (min / median / max over rounds) then same-round ratios. */
import { roundRatios, summarize, verdict } from './stats.mjs';

function fmt(value) {
  if (!Number.isFinite(value)) return '—';
  const abs = Math.abs(value);
  if (abs >= 1000) return value.toFixed(0);
  if (abs >= 100) return value.toFixed(1);
  if (abs >= 10) return value.toFixed(2);
  return value.toFixed(3);
}

/**
 * A median next to its target: with a fourth decimal when three would print the target's own
 * value for a median on the other side of it ("0.950 (target ≥ 0.95) MISS" for 0.9497).
 */
export function fmtAgainst(value, target) {
  const text = fmt(value);
  return target && Number(text) === target.value && value !== target.value ? value.toFixed(4) : text;
}

function pad(text, width, right = false) {
  const s = String(text);
  return right ? s.padStart(width) : s.padEnd(width);
}

/**
 * result: { title, notes?: string[], rows: [{ label, unit, values: number[], target?: { op, value } }],
 *           ratios: [{ label, of: [rowLabelA, rowLabelB], target?: { op, value }, meaning? }] }
 * Returns the text and the evaluated ratios (for the summary).
 */
export function renderCase(result) {
  const lines = [];
  const evaluated = [];
  lines.push(`== ${result.title}`);
  for (const note of result.notes ?? []) lines.push(`   ${note}`);
  const labelWidth = Math.max(34, ...result.rows.map((r) => r.label.length + 2), ...result.ratios.map((r) => r.label.length + 2));
  lines.push(
    `   ${pad('case', labelWidth)}${pad('unit', 10)}${pad('min', 10, true)}${pad('median', 10, true)}${pad('max', 10, true)}  rounds`,
  );
  const byLabel = new Map(result.rows.map((r) => [r.label, r]));
  for (const row of result.rows) {
    const s = summarize(row.values);
    // a row may carry its own target (judged on its median, like a ratio's)
    let target = '';
    if (row.target) {
      const v = verdict(s.median, row.target);
      target = `  target ${row.target.op === '>=' ? '≥' : '≤'} ${row.target.value}  ${v}`;
      evaluated.push({ case: result.title, label: `${row.label} (${row.unit})`, median: s.median, verdict: v, target: row.target });
    }
    lines.push(
      `   ${pad(row.label, labelWidth)}${pad(row.unit, 10)}${pad(fmt(s.min), 10, true)}${pad(fmtAgainst(s.median, row.target), 10, true)}${pad(fmt(s.max), 10, true)}  ${s.n}${target}`,
    );
  }
  if (result.ratios.length) {
    lines.push(
      `   ${pad('same-round ratio', labelWidth)}${pad('', 10)}${pad('min', 10, true)}${pad('median', 10, true)}${pad('max', 10, true)}  target`,
    );
    for (const ratio of result.ratios) {
      const [a, b] = ratio.of.map((label) => byLabel.get(label));
      if (!a || !b) throw new Error(`ratio ${ratio.label}: unknown row`);
      const s = summarize(roundRatios(a.values, b.values));
      const v = verdict(s.median, ratio.target);
      const target = ratio.target ? `${ratio.target.op === '>=' ? '≥' : '≤'} ${ratio.target.value}  ${v}` : '(no target)';
      lines.push(
        `   ${pad(ratio.label, labelWidth)}${pad('×', 10)}${pad(fmt(s.min), 10, true)}${pad(fmtAgainst(s.median, ratio.target), 10, true)}${pad(fmt(s.max), 10, true)}  ${target}`,
      );
      evaluated.push({ case: result.title, label: ratio.label, median: s.median, verdict: v, target: ratio.target });
    }
  }
  return { text: lines.join('\n'), ratios: evaluated };
}
