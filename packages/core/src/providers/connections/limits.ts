import { z } from "zod";

/**
 * A connection's limits: how many calls may be in flight across every worker process (`maxConcurrent`; none = no
 * cap), and its circuit breaker (opens when at least `minCalls` calls in `windowMs` failed at `failureRate` or more;
 * after `coolDownMs` one probe call goes through). Stored in `connections.limits`.
 */
export const connectionLimits = z
  .object({
    maxConcurrent: z.number().int().min(1).max(10_000).optional(),
    breaker: z
      .object({
        failureRate: z.number().gt(0).max(1).default(0.5),
        minCalls: z.number().int().min(1).max(10_000).default(5),
        windowMs: z.number().int().min(1_000).max(3_600_000).default(30_000),
        coolDownMs: z.number().int().min(100).max(3_600_000).default(30_000),
      })
      .default({ failureRate: 0.5, minCalls: 5, windowMs: 30_000, coolDownMs: 30_000 }),
  })
  .strict();
export type ConnectionLimits = z.infer<typeof connectionLimits>;

export function limitsOf(raw: unknown): ConnectionLimits {
  const parsed = connectionLimits.safeParse(raw ?? {});
  return parsed.success ? parsed.data : connectionLimits.parse({});
}
