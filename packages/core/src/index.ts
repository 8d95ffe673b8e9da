export * from "./catalog";
export * from "./crash";
export * from "./env";
export * from "./errors";
export * from "./log";
export { advanceRun, advanceLocked, type AdvanceResult } from "./engine/advance";
export { effectKey } from "./effects/keys";
export { performHttpRequest } from "./effects/http-request";
export { relayOnce, type RelayResult } from "./relay/relay";
export { requestCancel, type CancelOutcome } from "./runs/cancel";
export { startRun, type StartOptions, type StartOutcome, type StartRequest, UnparsedBody } from "./start/start-run";
export { deliveryContentType, deliveryStatus, recordRefusedDelivery, refusalReason, type DeliveryFacts } from "./start/deliveries";
export { deliveriesKept, triggerDeliveriesList, type DeliveryOutcome, type DeliveryView } from "./sql/trigger-deliveries";
export { automationsSampleInput, automationsSetSampleFromDelivery } from "./sql/automations";
export { MissingStartKeyError, canonicalJson, defaultDuplicateWindowHours, planStartKey, resolveStartKey, type TriggerMode } from "./start/start-key";
export { SignatureError, signPayload, signatureToleranceSeconds, verifySignature } from "./start/signature";
export { authenticateTrigger, operatorAuth, type StartAuth } from "./start/trigger-auth";
export {
  AutomationExistsError,
  createAutomation,
  findOrCreateAutomation,
  newSigningSecret,
  newUrlToken,
  revokePreviousTriggerCredentials,
  rotateTriggerCredential,
  rotationOverlapSeconds,
  setTriggerAuth,
  triggerPath,
  triggerSettings,
  type CredentialKind,
  type TriggerAuth,
  type TriggerSettings,
} from "./triggers/credentials";
export { automationsFindBySlug, automationsLock } from "./sql/automations";
export { parseRetryAfter, retryDelayMs, settlementFor, type StepOutcome } from "./steps/retry";
export { StepRunner, defaultHandlers, type RunStepResult, type StepHandler } from "./steps/runner";
export { sweepOnce, type SweepConfig, type SweepResult } from "./sweeper/sweep";
export { acquireLeadership, runSweeper, sweeperLeaderName } from "./sweeper/runner";
export { defineService, type ServiceDefinition, type SweepContext, type SweepService } from "./sweeper/service";
export { sweepServiceDefinitions, sweepServicesEnv } from "./sweeper/services";
export { leaderLeasesCurrent, leaderLeasesRelease } from "./sql/leader-leases";
export { runEventsForRun, type TimelineEntry } from "./sql/run-events";
export { GraphCache } from "./versions/graph-cache";
export * from "./versions/graph";
export { type Command, type RunState } from "./walk/plan";
export { evaluate, type WalkContext } from "./walk/condition";
export * from "./process";
export { heldWords, runStatusWords } from "./runs/status-words";
export { busySentence, describeFailure, type Failure, type FailureKind, invalidInputSentence } from "./ops/failure";
export { connectionFailureOf, isDatabaseUnreachable, Outages, unavailableRetryAfterSeconds, watchOutages, type OutageReporter, type Service } from "./ops/outage";
export { fireTimer, recomputeTimers, timerWalkBackstopMs, type FireResult, type RecomputeReport } from "./timers/fire";
export { TimerFirer } from "./engine/fire-timers";
export { dueInstant, instantOf, isValidZone, spreadOffsetSeconds, waitRuleSchema, type WaitRule } from "./timers/schedule";
export { instantFor, timerFor, zoneFor } from "./timers/plan";
export { timersFireDueFairly, timersOverdue } from "./sql/timers";
export { hasUnstorableText, storable } from "./json";
export { createConnection, reconnectConnection } from "./connections/connect";
export { decryptSecret, encryptSecret, secretKey } from "./connections/secrets";
export { initSecretKey, keyCheckOf, loadSecretKey, SecretKeyError, secretKeyPath } from "./keys/secret-key";
export { checkSecretKey } from "./keys/key-check";
export { connectionsByName, connectionsMarkNeedsReconnect } from "./sql/connections";
export { contactsMaySend, contactsOfRun, contactsUnsubscribe } from "./sql/contacts";
export { messageIdFor, performSendEmail } from "./effects/send-email";
export { classifyAddress, type AddressVerdict } from "./net/address";
export { AllowListError, parseAllowList, type AllowEntry, type AllowList } from "./allow-list";
export {
  checkAddress,
  defaultEgressAllow,
  EgressRefusedError,
  egressRefusalOf,
  egressStepError,
  literalHostRefusal,
  literalUrlRefusal,
  normalizeHost,
  resolveEgress,
  type Destination,
  type EgressOptions,
  type LookupAll,
} from "./net/egress";
export { egressDispatcher, egressFetch, guardedFetch, type GuardedFetch } from "./net/fetch";
export { EgressHttpAgent, EgressHttpsAgent, egressLookup } from "./net/agent";
export { egressSmtpTransport } from "./net/smtp";
export { renderTemplate, templateProblems, TemplateError } from "./templates/render";
export { type TemplateContact, templateContact } from "./templates/contact";
export { contactOf, type PayloadContact } from "./start/contact-of";
export { probeConnection, probeStaleConnections, type ProbeResult } from "./connections/probe";
export { budgetsModelPrices, budgetsOf, budgetsSetAllowed, budgetsSettleAbandoned, defaultModelBudgetUsd } from "./sql/budgets";
export { eraseContact, type EraseOutcome } from "./contacts/erase";
export { attributeKeyPattern, type ContactActor, setContactAttributesAs, setContactZoneAs, upsertContact } from "./contacts/change";
export { ContactChangeForbiddenError, contactChangeRefusal, contactRefusals, type ContactChange, type ContactFacts } from "./contacts/rules";
export { breakersWakeProbes, stepsResumeParked } from "./sql/connection-limits";
export { connectionLimits, limitsOf, type ConnectionLimits } from "./connections/limits";
export { ingestEmailReply, inboundEmail, messageIds, type InboundEmail, type IngestOutcome } from "./signals/email";
export { ingestInboundEmail, type InboundOutcome, type ScopeRunner, UnroutableReplyError } from "./signals/inbound";
export { finishSlackInstall, type InstallResult, linkMembersBySlackEmail, type LinkResult, type SlackApp, SlackInstallError, startSlackInstall } from "./slack/install";
export { inboundEmailDomain, replyRoutingAddress, replyRoutingToken, resolveReplyRoutes, routingTokenMatches, routingTokenOf } from "./signals/routing";
export { decideApproval, reviseApproval, type DecisionActor, type DecisionRequest, type DecisionResult } from "./approvals/decide";
export { contentDigest } from "./approvals/digest";
export { describeOutcome, judge, mayDecide, readBack, type Decider, type Refusal, type Role } from "./approvals/judge";
export { notifyApproval, slackClient, type NotifyOptions, type NotifyResult } from "./approvals/notify";
export { approvalMessage, approveActionId, rejectActionId } from "./approvals/slack-blocks";
export { issueButtonToken, verifyButtonToken, type ButtonClaims, type TokenCheck } from "./approvals/token";
export {
  approvalsForRun,
  approvalsGet,
  approvalsList,
  approvalsRewakeNotify,
  type ApprovalRow,
  type ApprovalStatus,
} from "./sql/approvals";
export { hashPassword, verifyPassword } from "./auth/password";
export {
  revokeUserSessions,
  sessionCookie,
  sessionDays,
  sessionIdleMinutes,
  sessionUser,
  signIn,
  signOut,
  type SessionUser,
  type SignInOptions,
  sessionIdOf,
} from "./auth/sessions";
export {
  accountKey,
  addressKey,
  createSignInThrottle,
  defaultSignInLimits,
  retryPhrase,
  throttleMessage,
  type SignInLimits,
  type SignInThrottle,
  type ThrottleVerdict,
} from "./auth/throttle";
export { sessionsPurgeExpired } from "./sql/sessions";
export { signinThrottlePurgeExpired } from "./sql/signin-throttle";
export { LastOwnerError, removeMember, setMemberRole, setUserPassword, upsertMember } from "./auth/users";
export {
  acceptInvitation,
  acceptInvitationAsNewUser,
  declineInvitation,
  InvalidAccountError,
  invitationPath,
  invitationRefusalMessage,
  inviteMember,
  inviteMemberByEmail,
  listOpenInvitations,
  MemberExistsError,
  minPasswordLength,
  revokeInvitation,
  viewInvitation,
  type InvitationLookup,
  type InvitationOffer,
  type InvitationOutcome,
  type InvitationRefusal,
  type OrgScope,
} from "./auth/invitations";
export { invitationDays, type InvitationEmailProblem, type OpenInvitation } from "./sql/invitations";
export { invitationEmailProblemMessage, invitationEmailState, invitationEmailText, type InvitationEmailState } from "./auth/invitation-mail";
export { handleSlackInteraction, postEphemeral, slackToleranceSeconds, type SlackReply, type SlackRequest } from "./approvals/slack-interaction";
export { ActionRefusedError, resolveNeedsReview, resumeRun, type ReviewAction } from "./runs/resolve";
export { reviewStoppedRunEffect } from "./runs/review-stopped";
export { effectUncertainSql, effectsUncertainOfRun, type UncertainEffect } from "./sql/effects";
export { setRunBudgets, type RunBudgets } from "./runs/budgets";
export { checkNames, repairAll, repairMissingTimers, runChecks, type CheckName, type Finding, type RepairReport } from "./ops/doctor";
export { healthFigures, readiness, type HealthFigures, type Readiness } from "./ops/health";
export {
  endAttemptSpan,
  failedOutcomeCode,
  inAttempt,
  isTracing,
  runContext,
  runSpanId,
  runTraceId,
  startAttemptSpan,
  startTracing,
  traceAttr,
  traceProviderCall,
  traceRunWork,
  recordRunWork,
  type AttemptSpan,
  type Tracing,
  type TracingEnv,
} from "./ops/tracing";
export { type AutomationPreview, PreviewSampleError, previewAutomation, type SampleChoice, typedSampleLimits } from "./preview/automation";
export type { JourneyPreview, MissingValue, StepDetail, StepPreview } from "./preview/journey-types";
export { DraftConflictError, draftProblems, getDraft, InvalidDraftError, publishDraft, publishGraph, publishProblems, saveDraft, type Draft, type Published } from "./automations/drafts";
export { orgProblems, runtimeProblems } from "./versions/checks";
export { diffGraphs, isEmptyDiff, type GraphDiff } from "./versions/diff";
export {
  applyMigration,
  landingFor,
  migrationInput,
  planMigration,
  removedRule,
  type ApplyReport,
  type Landing,
  type MigrationInput,
  type MigrationPlan,
} from "./run-migrations/migrate";
export { organisationsIdBySlug } from "./sql/organisations";
export { jsonShapeProblem, parseFormBounded, parseJsonBounded, payloadLimits } from "./bodies";
export { triggerPayload } from "./start/payload";
export { type PreviewInstant, previewWait } from "./timers/preview";
export * from "./connections/kinds";
export { ConnectionExistsError } from "./connections/connect";
export {
  addConnection,
  ConnectionConfigError,
  ConnectionInUseError,
  ConnectionNotFoundError,
  deleteConnection,
  listConnections,
  updateConnection,
  validConnectionConfig,
  type ChangeResult,
  type ConnectionChange,
  type ListedConnection,
} from "./connections/manage";
export { deleteRefusal, draftsNote, liveUses, renameRefusal, useWords, type ConnectionUse } from "./connections/uses";
export { testConnectionSettings, testSavedConnection, type ConnectionTestResult } from "./connections/test";
export { runBudgetsOf, type RunBudgetsView } from "./runs/budgets";
export { contactsDetail, contactsEraseCount, contactsIdByEmail, contactsRuns, type ContactDetail, type ContactRun } from "./sql/contacts";
export { InvalidZoneError, setContactZone, type ZoneChange } from "./timers/contact-zone";
export { connectionsLimitsView, connectionsSetLimits, type ConnectionLimitsView } from "./sql/connection-limits";
export { noticesOpenForOrgs, type OpenNotice } from "./sql/connection-notices";
export { noticeText, sendConnectionNoticesOnce, systemMailEnv, systemMailFrom, type NoticeSendResult, type SystemMail } from "./connections/notices";
export { zoneSourceWords } from "./timers/plan";
// The web's reads and writes (issue 18 item 2: no SQL in the web): named queries of the table modules.
export { databaseNow, databasePing } from "./sql/database";
export {
  automationsExists,
  automationsHeaderInOrgs,
  automationsListWithLatest,
  automationsStatuses,
  automationsForFirstRequest,
  automationsTriggerOf,
  automationsWithPublishedVersions,
} from "./sql/automations";
export { automationVersionsHasPublished, automationVersionsListPublished, automationVersionsPublishedPair } from "./sql/automation-versions";
export { runMigrationsIsOf, runMigrationsList } from "./sql/run-migrations";
export { contactsSearch } from "./sql/contacts";
export { suppressionsDelete, suppressionsInsert, suppressionsList } from "./sql/suppressions";
export {
  membershipsEmailOf,
  membershipsList,
  membershipsSetSlackUser,
} from "./sql/memberships";
export { stepsCountParkedForBudget, stepsViewOfRun, type StepView } from "./sql/steps-view";
export { effectsViewOfRun, type EffectView } from "./sql/effects";
export { timersViewOfRun, type TimerView } from "./sql/timers";
export { signalsViewOfRun, type SignalView } from "./sql/signals";
export { runDisplayStatuses, runsDetailHead, runsListForOrgs, type RunDetailHead, type RunDisplayStatus, type RunListFilters, type RunListItem } from "./sql/runs-view";
export { databaseAdvisoryXactLock } from "./sql/database";
export { outboxChannel, readyChannel } from "./sql/outbox";
export { listenChannels } from "./ops/listen";
export { Slots } from "./steps/slots";
export { takeReadySteps } from "./steps/ready-listener";
export { ReadyDemand } from "./steps/ready-demand";
export { organisationsCount, organisationsEnsure } from "./sql/organisations";
export { usersPasswordHash } from "./sql/users";
export { automationVersionsInsertPublished, automationVersionsLatest, automationVersionsMarkPublished, automationVersionsPublishedOne } from "./sql/automation-versions";
export { runsFindById, runsNewest } from "./sql/runs-view";
export { fireableWaitKinds, fireWaitConfirmation, fireWaitRoleWords, fireWaitWords, type FireWaitResult, mayFireWaits } from "./runs/fire-wait-words";
export { decideTestApproval, simulateTestReply, skipTestWait, TestRunError } from "./test-runs/actions";
export { type PlayOutcome, playTestRun, type TestRunState, testRunState, type WaitingStep } from "./test-runs/play";
export { type CallAnswer, callAnswer, type TestScript, testScript } from "./test-runs/script";
export { testRunSample } from "./test-runs/sample";
