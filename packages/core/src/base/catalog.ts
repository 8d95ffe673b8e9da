import { queueNames } from "@holdfast/queue/names";
import { z } from "zod";

/**
 * The one catalog of lanes, node kinds and queue topics. Producers and consumers are typed from it, so a queue
 * name, a payload shape or a lease length is written once.
 */

export interface RetryPolicy {
  maxAttempts: number;
  baseMs: number;
  capMs: number;
}

export interface Lane {
  name: LaneName;
  /** Steps one worker process runs at once. */
  concurrency: number;
  leaseMs: number;
  /** ~lease/3: two missed heartbeats still leave time before the lease lapses. */
  heartbeatMs: number;
  retry: RetryPolicy;
}

export const laneNames = ["fast", "io", "slow", "human"] as const;
export type LaneName = (typeof laneNames)[number];

const defaultLanes: Record<LaneName, Lane> = {
  fast: { name: "fast", concurrency: 32, leaseMs: 15_000, heartbeatMs: 5_000, retry: { maxAttempts: 5, baseMs: 200, capMs: 10_000 } },
  io: { name: "io", concurrency: 16, leaseMs: 30_000, heartbeatMs: 10_000, retry: { maxAttempts: 8, baseMs: 1_000, capMs: 300_000 } },
  slow: { name: "slow", concurrency: 4, leaseMs: 60_000, heartbeatMs: 20_000, retry: { maxAttempts: 2, baseMs: 5_000, capMs: 60_000 } },
  human: { name: "human", concurrency: 8, leaseMs: 30_000, heartbeatMs: 10_000, retry: { maxAttempts: 3, baseMs: 1_000, capMs: 60_000 } },
};

/**
 * Per-deployment overrides of the lane catalog: HOLDFAST_LANES='{"io":{"concurrency":32,"retry":{"capMs":60000}}}'.
 * Validated when the process starts (every process reads the same value); the slow lane never allows more than 2
 * attempts, and a heartbeat must be shorter than its lease.
 */
const laneOverride = z
  .object({
    concurrency: z.number().int().min(1).max(1_000),
    leaseMs: z.number().int().min(200).max(3_600_000),
    heartbeatMs: z.number().int().min(50).max(1_200_000),
    retry: z
      .object({ maxAttempts: z.number().int().min(1).max(100), baseMs: z.number().int().min(1).max(3_600_000), capMs: z.number().int().min(1).max(86_400_000) })
      .partial()
      .strict(),
  })
  .partial()
  .strict();
export const laneOverrides = z.partialRecord(z.enum(laneNames), laneOverride);

export function resolveLanes(raw: string | undefined): Record<LaneName, Lane> {
  if (!raw) return defaultLanes;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new Error("HOLDFAST_LANES is not JSON");
  }
  const parsed = laneOverrides.safeParse(json);
  if (!parsed.success) throw new Error(`HOLDFAST_LANES: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  const out = { ...defaultLanes };
  for (const [name, o] of Object.entries(parsed.data) as [LaneName, z.infer<typeof laneOverride>][]) {
    const base = defaultLanes[name];
    const lane: Lane = { ...base, ...o, name, retry: { ...base.retry, ...o.retry } };
    if (o.leaseMs !== undefined && o.heartbeatMs === undefined) lane.heartbeatMs = Math.round(lane.leaseMs / 3);
    if (lane.heartbeatMs >= lane.leaseMs) throw new Error(`HOLDFAST_LANES: ${name}.heartbeatMs must be shorter than its leaseMs`);
    if (lane.retry.baseMs > lane.retry.capMs) throw new Error(`HOLDFAST_LANES: ${name}.retry.baseMs must not exceed capMs`);
    if (name === "slow" && lane.retry.maxAttempts > 2) throw new Error("HOLDFAST_LANES: the slow lane allows at most 2 attempts");
    out[name] = lane;
  }
  return out;
}

/** The catalog's overrides for a whole deployment, read by every process at start-up. */
export const lanesEnv = z.object({
  HOLDFAST_LANES: z
    .string()
    .optional()
    .describe('Lane catalog overrides for the whole deployment (JSON), e.g. {"io":{"concurrency":32}}; unset = the catalog in packages/core/src/base/catalog.ts'),
});

export const lanes: Record<LaneName, Lane> = resolveLanes(lanesEnv.parse(process.env).HOLDFAST_LANES);

/** Queue topics. The relay routes each outbox row by topic; consumers validate the payload at the edge. */
export const topics = {
  "run.wake": {
    queue: queueNames.engine,
    payload: z.object({
      orgId: z.string().min(1),
      runId: z.string().min(1),
      reason: z.enum(["started", "step_settled", "cancel", "sweep", "timer_fired", "signal", "resumed"]),
    }),
  },
  "step.ready": {
    queue: (lane: LaneName) => queueNames.lane(lane),
    payload: z.object({
      orgId: z.string().min(1),
      runId: z.string().min(1),
      stepId: z.string().min(1),
      lane: z.enum(laneNames),
    }),
  },
  "timer.due": {
    queue: queueNames.engine,
    payload: z.object({
      orgId: z.string().min(1),
      runId: z.string().min(1),
      timerId: z.string().min(1),
      wake: z.number().int().min(1),
      dueAt: z.string().min(1),
    }),
  },
  /** An approval's Slack message is owed (posted on request, updated on decision): the human lane posts it. */
  "approval.notify": {
    queue: queueNames.lane("human"),
    payload: z.object({ orgId: z.string().min(1), approvalId: z.string().min(1) }),
  },
} as const;
export type Topic = keyof typeof topics;

export type ApprovalNotify = z.infer<(typeof topics)["approval.notify"]["payload"]>;
export type TimerDue = z.infer<(typeof topics)["timer.due"]["payload"]>;
export type RunWake = z.infer<(typeof topics)["run.wake"]["payload"]>;
export type StepReady = z.infer<(typeof topics)["step.ready"]["payload"]>;

/**
 * Not a topic (no outbox row has it): the `timer.due` rows of one relay batch due at one instant, published as one
 * delayed job (run/relay/publications.ts), which the engine answers with the due sweep's batches (run/engine/due-drain.ts).
 * A spike of 100,000 timers due at 09:00 is then a few hundred jobs, not 100,000. A lone timer's row is still
 * published as its own `timer.due` job. `timers`: how many the job stands for.
 */
export const timersDueJob = {
  name: "timers.due",
  queue: queueNames.engine,
  payload: z.object({ dueAt: z.iso.datetime({ offset: true }), timers: z.number().int().min(1) }),
} as const;

export function queueForTopic(topic: string, payload: unknown): string {
  if (topic === "run.wake" || topic === "timer.due" || topic === "approval.notify") return topics[topic].queue;
  if (topic === "step.ready") return topics["step.ready"].queue(topics["step.ready"].payload.parse(payload).lane);
  throw new Error(`unknown outbox topic ${topic}`);
}
