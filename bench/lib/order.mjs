/**
 * The order in which interleaved variants run in one round (or run, or slice): a permutation
 * drawn from a seeded generator, the same for the same seed in every bench run.
 *
 * A fixed cyclic order (rotating only the starting variant) gives each variant nearly always the
 * same predecessor, and what a variant leaves behind (garbage to collect, sockets closing, work
 * queued on the thread pool) is paid by the one after it: in case 4 the DPoP-off arm of our
 * client always followed the DPoP-on arm, the heaviest, and the SDK arm followed it. In random
 * orders every variant follows every other about as often.
 */
export function shuffledOrder(count, seed) {
  const next = mulberry32(seed);
  const order = Array.from({ length: count }, (_, i) => i);
  for (let i = count - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

/** A small, well-known 32-bit generator (Tommy Ettinger's Mulberry32): uniform floats in [0, 1). */
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
