import { wilson } from "@holdfast/core/decide";

/**
 * An A/B split's paths scored for each goal: the path's rate (runs that reached the goal / runs that took the path)
 * with its 95% Wilson interval (core's decide/stats/wilson.ts). Below `minPathRuns` runs a path's rate says little:
 * the canvas says "not enough data yet" instead of a number.
 */
export const splitGoals = ["replied", "clicked", "converted"] as const;
export type SplitGoal = (typeof splitGoals)[number];
export const minPathRuns = 30;

export interface GoalScore {
  reached: number;
  rate: number;
  low: number;
  high: number;
}
export interface PathScore {
  path: string;
  n: number;
  enough: boolean;
  goals: Record<SplitGoal, GoalScore>;
}

type SplitCounts = Record<string, { paths: { path: string; n: number; replied: number; clicked: number; converted: number }[] }>;

export function scoreSplits(splits: SplitCounts): Record<string, PathScore[]> {
  const out: Record<string, PathScore[]> = {};
  for (const [nodeId, split] of Object.entries(splits)) {
    out[nodeId] = split.paths.map((p) => {
      const goals = {} as Record<SplitGoal, GoalScore>;
      for (const goal of splitGoals) {
        // In a window an outcome counts on its own day and the run on the day it took the path: a run that took the
        // path before the window and replied within it counts in `reached` only, so `reached` is capped at `n`.
        const reached = Math.min(p[goal], p.n);
        goals[goal] = { reached, ...wilson(reached, p.n) };
      }
      return { path: p.path, n: p.n, enough: p.n >= minPathRuns, goals };
    });
  }
  return out;
}
