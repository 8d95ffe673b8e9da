/**
 * The run layer: what moves runs and automations. Starts, the engine, the lane workers' runner, the
 * applier, timers that fire, the sweeper, the relay, run actions, contacts, publishing and lifecycles. It may
 * import every other layer.
 *
 * `@holdfast/core/run`: what the apps, the CLI and the tests use of it.
 */
export { type Draft, DraftConflictError, draftProblems, getDraft, InvalidDraftError, publishDraft, type Published, publishGraph, publishProblems, saveDraft } from "./automations/drafts";
export { createFromTemplate, TemplateAnswersError, templateProblems } from "./automations/from-template";
export { assertEditable, AutomationArchivedError, AutomationPausedError, changeLifecycle, decideLifecycle, deliveryGate, describeLifecycle, type LifecycleChange, lifecycleOf, type LifecycleOutcome, LifecycleRefusedError, type LifecycleState, pausedRetryAfterSeconds } from "./automations/lifecycle";
export { attributeKeyPattern, type ContactActor, setContactAttributesAs, setContactZoneAs, upsertContact } from "./contacts/change";
export { eraseContact, type EraseOutcome } from "./contacts/erase";
export { type ContactChange, ContactChangeForbiddenError, contactChangeRefusal, type ContactFacts, contactRefusals } from "./contacts/rules";
export { countWindows, type CountWindow, type EmailCounts, type JourneyCounts, journeyCounts, journeyCountsQuery, type NodeCounts, type SplitPathCounts } from "./counts/journey-counts";
export { InvalidCursorError, type RunAtCount, runsAtCount, runsAtCountQuery, type RunsAtCountPage, type RunsAtCountQuery } from "./counts/runs-at-count";
export { advanceLocked, type AdvanceResult, advanceRun } from "./engine/advance";
export { DueDrain } from "./engine/due-drain";
export { TimerFirer } from "./engine/fire-timers";
export { type Finding, repairAll, repairMissingTimers, type RepairReport, runChecks } from "./ops/doctor";
export { busyFormSentence, busySentence, describeFailure, type Failure, type FailureKind, invalidInputSentence } from "./ops/failure";
export { healthFigures, type HealthFigures, readiness, type Readiness } from "./ops/health";
export { listenChannels } from "./ops/listen";
export { redisTargetAtStart } from "./ops/redis-target";
export { connectionFailureOf, isDatabaseUnreachable, type OutageReporter, Outages, type Service, unavailableRetryAfterSeconds, watchOutages } from "./ops/outage";
export { type AutomationPreview, previewAutomation, PreviewSampleError, type SampleChoice, typedSampleLimits } from "./preview/automation";
export type { JourneyPreview, MissingValue, StepDetail, StepPreview } from "./preview/journey-types";
export { handleWakeUp, loop, onShutdown, pollOutbox, requireSecretKey, workerId } from "./process";
export { publicationsOf } from "./relay/publications";
export { relayOnce, type RelayResult } from "./relay/relay";
export { applyMigration, type ApplyReport, type Landing, landingFor, migrationInput, type MigrationInput, type MigrationPlan, planMigration, removedRule } from "./run-migrations/migrate";
export { runBudgetsOf, type RunBudgetsView, setRunBudgets } from "./runs/budgets";
export { type CancelOutcome, requestCancel } from "./runs/cancel";
export { deliverGoal, type GoalDelivery, type GoalDeliveryOutcome, NotTheGoalError } from "./goals/deliver";
export { ensureGoalCredentials, type GoalCredentialKind, goalPath, goalSettings, type GoalSettings, setGoal } from "./goals/settings";
export { fireableWaitKinds, fireWaitConfirmation, type FireWaitResult, fireWaitRoleWords, fireWaitWords, mayFireWaits } from "./runs/fire-wait-words";
export { fireWaitNow, type FireWaitOutcome, type FireWaitRequest } from "./runs/fire-wait";
export { ActionRefusedError, resolveNeedsReview, resumeRun, type ReviewAction } from "./runs/resolve";
export { decideRetry, rerunRun, type RetryDecision, retryFromFailedStep, type RetryOutcome } from "./runs/retry-run";
export { reviewStoppedRunEffect } from "./runs/review-stopped";
export { heldWords, runStatusWords } from "./runs/status-words";
export { countRunsToStop, stopAllRuns, stopBatchSize, type StopOutcome } from "./runs/stop-all";
export { contactOf, type PayloadContact } from "./start/contact-of";
export { deliveryContentType, type DeliveryFacts, deliveryStatus, recordRefusedDelivery, refusalReason } from "./start/deliveries";
export { triggerPayload } from "./start/payload";
export { SignatureError, signatureToleranceSeconds, signPayload, verifySignature } from "./start/signature";
export { defaultDuplicateWindowHours, MissingStartKeyError, planStartKey, resolveStartKey, type TriggerMode } from "./start/start-key";
export { type StartRequest, UnparsedBody } from "./start/start-plan";
export { type StartOptions, type StartOutcome, startRun } from "./start/start-run";
export { authenticateTrigger, operatorAuth, type StartAuth } from "./start/trigger-auth";
export { ReadyDemand } from "./steps/ready-demand";
export { takeReadySteps } from "./steps/ready-listener";
export { retryDelayMs, settlementFor } from "./steps/retry";
export { defaultHandlers, type RunStepResult, type StepHandler, StepRunner } from "./steps/runner";
export { Slots } from "./steps/slots";
export { acquireLeadership, runSweeper, sweeperLeaderName } from "./sweeper/runner";
export { defineService, type ServiceDefinition, type SweepContext, type SweepService } from "./sweeper/service";
export { sweepServiceDefinitions, sweepServicesEnv } from "./sweeper/services";
export { type SweepConfig, sweepOnce, type SweepResult } from "./sweeper/sweep";
export { decideTestApproval, simulateTestReply, skipTestWait, TestRunError } from "./test-runs/actions";
export { type PlayOutcome, playTestRun, type TestRunState, testRunState, type WaitingStep } from "./test-runs/play";
export { testRunSample } from "./test-runs/sample";
export { type CallAnswer, callAnswer, type TestScript, testScript } from "./test-runs/script";
export { InvalidZoneError, setContactZone, type ZoneChange } from "./timers/contact-zone";
export { type FireResult, fireTimer, type RecomputeReport, recomputeTimers, timerWalkBackstopMs } from "./timers/fire";
export { type AutomationQuietHoursView, automationQuietHours, orgQuietHours, type OrgQuietHoursView, setAutomationQuietHours, setOrgQuietHours } from "./sending-rules/quiet-hours-settings";
export { type CarryDecision, decideCarry } from "./restore/carry-plan";
export { RestoreRefused, reconcileRestore, type RestoreReport } from "./restore/reconcile";
