import type { inferRouterOutputs } from "@trpc/server";
import type { AppRouter } from "../../../../server/trpc/router";
import { emailRates, outcomeWords } from "../../../email-rates";
import { percent, share } from "../../../percent";

/** The counts view's data (the counts.journey procedure's answer) and how it is put in words. Pure. */
export type JourneyView = inferRouterOutputs<AppRouter>["counts"]["journey"];
export type ShownJourney = Extract<JourneyView, { published: true }>;
export type Counts = ShownJourney["counts"];
export type StepCounts = Counts["nodes"][string];
export type EmailCounts = NonNullable<StepCounts["email"]>;
export type PathScore = ShownJourney["splitScores"][string][number];

export const countWindows = ["24h", "7d", "30d", "all"] as const;
export type CountWindow = (typeof countWindows)[number];
export const windowWords: Record<CountWindow, string> = { "24h": "Last 24 hours", "7d": "Last 7 days", "30d": "Last 30 days", all: "All time" };

/**
 * A step's counts, in the order a step shows them. "now" and "held" are now; the rest happened within the window.
 * "converted": the run met the automation's goal while it was at this step (the step closed with it), not a stop.
 */
export const stepBuckets = ["now", "passed", "converted", "failed", "held", "cancelled"] as const;
export type StepBucket = (typeof stepBuckets)[number];
export const bucketWords: Record<StepBucket, string> = {
  now: "now",
  passed: "passed through",
  converted: "converted",
  failed: "failed",
  held: "held",
  cancelled: "stopped",
};
/** How the runs list heads a count's runs: Runs at "Send the email" now (12). */
export function runsAtHeading(bucket: StepBucket, title: string, n: number): string {
  const at = `"${title}"`;
  const words: Record<StepBucket, string> = {
    now: `Runs at ${at} now`,
    held: `Runs held at ${at}`,
    passed: `Runs that passed through ${at}`,
    failed: `Runs that failed at ${at}`,
    cancelled: `Runs stopped at ${at}`,
    converted: `Runs that converted at ${at}`,
  };
  return `${words[bucket]} (${count(n)})`;
}

export const splitGoals = ["replied", "clicked", "converted"] as const;
export type SplitGoal = (typeof splitGoals)[number];
export const goalWords: Record<SplitGoal, string> = { replied: "Replied", clicked: "Clicked a link", converted: "Converted" };

const whole = new Intl.NumberFormat("en-US");
export const count = (n: number): string => whole.format(n);

/** One email figure: how many, and its rate of what it is a rate of (delivered of sent, opened of delivered...). */
export interface EmailFigure {
  key: keyof EmailCounts & string;
  label: string;
  n: number;
  rate: string | null;
  of: string | null;
}

export function emailFigures(e: EmailCounts): EmailFigure[] {
  return [
    { key: "sent", label: "Sent", n: e.sent, rate: null, of: null },
    ...emailRates(e).map((r) => ({ key: r.key, label: outcomeWords[r.key], n: r.n, rate: percent(r.n, r.of), of: `of ${r.base}` })),
  ];
}

/** A path's outcome for the chosen goal in words: "12% (95% sure: 7% to 19%)", or why there is no rate yet. */
export function pathOutcome(p: PathScore, goal: SplitGoal, minRuns: number): { rate: string; interval: string | null } {
  if (!p.enough) return { rate: "Not enough data yet", interval: `${count(p.n)} of the ${minRuns} runs needed` };
  const g = p.goals[goal];
  return { rate: share(g.rate), interval: `95% sure: ${share(g.low)} to ${share(g.high)}` };
}

/** How many runs took this edge (the graph's edge: from, its output's label, to). */
export function edgeCount(c: Counts, from: string, label: string | null | undefined, to: string): number {
  return c.edges.filter((e) => e.from === from && (e.label ?? null) === (label ?? null) && e.to === to).reduce((s, e) => s + e.n, 0);
}

/** Runs that came into a node: its incoming edges' counts (an end or a split keeps no step of its own). */
export function arrived(c: Counts, nodeId: string): number {
  return c.edges.filter((e) => e.to === nodeId).reduce((s, e) => s + e.n, 0);
}

export const emptyStep: StepCounts = { now: 0, held: 0, passed: 0, failed: 0, cancelled: 0, converted: 0, email: null };

/** The runs list of one count: the runs at a step in a state (the list's "at" filter), of the shown version or all. */
export function runsAtHref(o: { orgSlug: string; automationSlug: string; version: number | null; window: CountWindow; nodeId: string; bucket: StepBucket }): string {
  const q = new URLSearchParams({ org: o.orgSlug, automation: o.automationSlug, at: o.nodeId, state: o.bucket, window: o.window });
  if (o.version !== null) q.set("version", String(o.version));
  return `/?${q.toString()}`;
}

/** All runs of the automation (of the shown version, or all): the trigger's "started" count. */
export function runsHref(o: { orgSlug: string; automationSlug: string; version: number | null }): string {
  const q = new URLSearchParams({ org: o.orgSlug, automation: o.automationSlug });
  if (o.version !== null) q.set("version", String(o.version));
  return `/?${q.toString()}`;
}

/**
 * The fold's lag in words when it is behind: `foldedAt` is the instant before which every change is folded (the
 * oldest change still waiting). The counts include the waiting changes all the same (the read adds them), but a queue
 * older than a minute is worth knowing about. Null when the fold keeps up.
 */
export function foldLag(c: Pick<Counts, "pendingChanges" | "foldedAt">, now: Date, clock: (d: Date) => string): string | null {
  if (c.pendingChanges === 0 || !c.foldedAt) return null;
  if (now.getTime() - new Date(c.foldedAt).getTime() < 60_000) return null;
  return `${count(c.pendingChanges)} changes since ${clock(new Date(c.foldedAt))} are still waiting to be tallied; the counts include them.`;
}
