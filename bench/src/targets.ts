// The targets table: every target `pnpm bench --all` measures, with its figure from this run and whether it was met.
// Each part of the bench (the race, the spike, intake) adds its own rows; main.ts prints the table last, so the run's
// verdict is in one place at the end of its output.
import { fmt } from "./report";

export interface Target {
  /** What is measured, in a few words (the issue's wording). */
  what: string;
  /** The bound, e.g. "<= 1,500 B" or ">= 2x". */
  target: string;
  /** This run's figure, with what it was read from when that matters. */
  figure: string;
  /** Met, not met, or not measured in this run (a row failed or was not run). */
  met: boolean | undefined;
}

/** The table as lines, the first column padded to the longest target; "not measured" where a row gave no figure. */
export function targetLines(targets: readonly Target[], title: string): string[] {
  if (!targets.length) return [];
  const verdict = (t: Target) => (t.met === undefined ? "not measured" : t.met ? "met" : "not met");
  const what = Math.max(...targets.map((t) => t.what.length));
  const bound = Math.max(...targets.map((t) => t.target.length));
  const met = targets.filter((t) => t.met === true).length;
  return [
    `${title}: ${met} of ${targets.length} met`,
    ...targets.map((t) => `  ${t.what.padEnd(what)}  ${t.target.padEnd(bound)}  ${verdict(t).padEnd(12)}  ${t.figure}`),
  ];
}

/** A target whose figure is a number compared with a bound ("<=" or ">="); undefined figures are "not measured". */
export function bounded(what: string, op: "<=" | ">=", bound: number, value: number | undefined, unit: string, digits = 0, detail = ""): Target {
  const measured = value !== undefined && Number.isFinite(value);
  return {
    what,
    target: `${op} ${fmt(bound, bound % 1 === 0 ? 0 : 2)}${unit}`,
    figure: measured ? `${fmt(value, digits)}${unit}${detail ? ` ${detail}` : ""}` : "-",
    met: measured ? (op === "<=" ? value <= bound : value >= bound) : undefined,
  };
}
