/**
 * How every share in the product reads (email rates, split paths, conversion): one precision everywhere, so the same
 * figure never reads "33.3%" on one panel and "33%" on the next. Pure: the browser bundles it.
 */

/** A share as people read it: "42%", "4.2%" under 10%, "-" when there is nothing to divide by. */
export function percent(part: number, of: number): string {
  if (of <= 0) return "-";
  return share(part / of);
}

export function share(x: number): string {
  const p = x * 100;
  // An interval's end a hair above 0 (floating point) reads 0%, not 0.0%.
  if (p < 0.05) return "0%";
  return p < 9.95 ? `${p.toFixed(1)}%` : `${Math.round(p)}%`;
}
