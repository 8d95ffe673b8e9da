import { z } from "zod";
import type { SweepService } from "../service";
import { breakerProbes } from "./breaker-probes";
import { budgetReaping } from "./budget-reaping";
import { connectionNotices } from "./connection-notices";
import { connectionProbes } from "./connection-probes";
import { countFold } from "./count-fold";
import { dueTimers } from "./due-timers";
import { expiredRuns } from "./expired-runs";
import { invitationEmails } from "./invitation-emails";
import { leaseRescue } from "./lease-rescue";
import { missingTimers } from "./missing-timers";
import { outboxRetention } from "./outbox-retention";
import { owedNotifications } from "./owed-notifications";
import { sessionPurge } from "./session-purge";
import { staleWakeups } from "./stale-wakeups";
import { stalledRuns } from "./stalled-runs";
import { throttlePurge } from "./throttle-purge";
import { timelineRetention } from "./timeline-retention";

/** The sweeper's maintenance services, in the order the leader runs them when several are due. */
export const sweepServiceDefinitions = [
  dueTimers,
  leaseRescue,
  staleWakeups,
  stalledRuns,
  expiredRuns,
  missingTimers,
  owedNotifications,
  outboxRetention,
  sessionPurge,
  throttlePurge,
  connectionProbes,
  connectionNotices,
  invitationEmails,
  breakerProbes,
  budgetReaping,
  countFold,
  // Last: the heaviest deletes wait for every repair of the tick.
  timelineRetention,
] as const;

/**
 * Every service with its settings from one environment, each validated by its own module's schema; every problem
 * is listed at once (the path names the variable). For `loadEnv` in the sweeper's env.ts.
 */
export const sweepServicesEnv = z.looseObject({}).transform((source, ctx): SweepService[] => {
  const services: SweepService[] = [];
  const said = new Set<string>();
  for (const d of sweepServiceDefinitions) {
    const parsed = (d.env as z.ZodType).safeParse(source);
    if (parsed.success) {
      services.push((d.make as (s: unknown) => SweepService)(parsed.data));
      continue;
    }
    for (const issue of parsed.error.issues) {
      const line = `${issue.path.join(".")}: ${issue.message}`;
      if (said.has(line)) continue; // a sweeper-wide variable is read by every service: said once
      said.add(line);
      ctx.addIssue({ code: "custom", message: issue.message, path: issue.path, input: issue.input });
    }
  }
  return services;
});

export {
  breakerProbes,
  budgetReaping,
  connectionNotices,
  connectionProbes,
  countFold,
  dueTimers,
  expiredRuns,
  invitationEmails,
  leaseRescue,
  missingTimers,
  outboxRetention,
  owedNotifications,
  sessionPurge,
  staleWakeups,
  stalledRuns,
  throttlePurge,
  timelineRetention,
};
