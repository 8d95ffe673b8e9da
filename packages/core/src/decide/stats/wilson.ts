/**
 * The Wilson score interval of a rate: `successes` of `n` (a path's replies of its runs), at 95% by default. Unlike
 * the plain "rate ± 1.96 standard errors" it stays inside [0, 1] and is honest about small counts (0 of 3 is not
 * "0% ± 0%"). Pure; n = 0 gives the whole range [0, 1], nothing known yet.
 */
export interface RateInterval {
  rate: number;
  low: number;
  high: number;
}

export function wilson(successes: number, n: number, z = 1.959963984540054): RateInterval {
  if (!Number.isInteger(n) || n < 0 || !Number.isInteger(successes) || successes < 0 || successes > n) {
    throw new RangeError(`wilson: ${successes} of ${n} is no count`);
  }
  if (n === 0) return { rate: 0, low: 0, high: 1 };
  const p = successes / n;
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return { rate: p, low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}
