/**
 * The base layer: errors, JSON, logging, settings, the catalog of lanes, crash points, tracing, templates and
 * the leaf types every other layer uses. It imports no other layer.
 *
 * `@holdfast/core/base`: what the apps, the CLI and the tests use of it.
 */
export { type AllowEntry, type AllowList, AllowListError, parseAllowList } from "./allow-list";
export { jsonShapeProblem, parseFormBounded, parseJsonBounded, payloadLimits } from "./bodies";
export { type ApprovalNotify, type Lane, type LaneName, laneNames, laneOverrides, lanes, lanesEnv, queueForTopic, resolveLanes, type RetryPolicy, type RunWake, type StepReady, type TimerDue, timersDueJob, type Topic, topics } from "./catalog";
export { crashArmed, crashDuringMs, crashEnv, crashpoint, type CrashPoint, crashPoints } from "./crash";
export { type DatabaseSettings, databaseSettingsProblem, listenUrl, migrateUrl, requireDatabaseSettings } from "./database-settings";
export { baseEnv, egressAllowFromEnv, egressAllowSchema, loadEnv, tracingEnv } from "./env";
export { HoldfastError, InvalidGraphError, InvalidPayloadError, LeaseLostError, NoPublishedVersionError, NotFoundError, pgErrorCode } from "./errors";
export { canonicalJson, hasUnstorableText, storable } from "./json";
export { createLogger, type Logger } from "./log";
export type { SendHold, StepOutcome } from "./outcome/outcome";
export { parseRetryAfter } from "./outcome/retry-after";
export { sleep } from "./sleep";
export { type TemplateContact, templateContact } from "./templates/contact";
export { renderTemplate, TemplateError, templateProblems } from "./templates/render";
export { type AttemptSpan, endAttemptSpan, failedOutcomeCode, inAttempt, isTracing, recordRunWork, runContext, runSpanId, runTraceId, startAttemptSpan, startTracing, traceAttr, traceProviderCall, traceRunWork, type Tracing, type TracingEnv } from "./tracing";
export { type Goal, goals, goalWords } from "./types/goals";
