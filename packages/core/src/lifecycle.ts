/**
 * The automation lifecycle, Stop all runs, retry and firing a wait now (docs/lifecycle.md, docs/timers.md), for the web and the CLI:
 * `@holdfast/core/lifecycle`. Server-side only (it reaches the database).
 */
export {
  AutomationArchivedError,
  AutomationPausedError,
  assertEditable,
  changeLifecycle,
  decideLifecycle,
  deliveryGate,
  describeLifecycle,
  LifecycleRefusedError,
  lifecycleOf,
  pausedRetryAfterSeconds,
  type AutomationStatus,
  type LifecycleChange,
  type LifecycleOutcome,
  type LifecycleState,
  type PauseMode,
  type PauseRuns,
} from "./automations/lifecycle";
export { holdsWalk } from "./walk/plan";
export { countRunsToStop, stopAllRuns, stopBatchSize, type StopOutcome } from "./runs/stop-all";
export { decideRetry, rerunRun, retryFromFailedStep, type RetryDecision, type RetryOutcome } from "./runs/retry-run";
export { runsRerunOf, runsReruns } from "./sql/runs-retry";
export { fireWaitNow, type FireWaitOutcome, type FireWaitRequest } from "./runs/fire-wait";
export type { HistoryEntry } from "./sql/automation-history";
