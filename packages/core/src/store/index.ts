/**
 * The store layer: the table modules (store/sql/, every SQL statement with its table) and the secret key.
 * It imports only the base layer.
 *
 * `@holdfast/core/store`: what the apps, the CLI and the tests use of it.
 */
export { checkSecretKey } from "./keys/key-check";
export { initSecretKey, keyCheckOf, loadSecretKey, secretKey, SecretKeyError, secretKeyPath } from "./keys/secret-key";
export { type ApprovalEditRow, approvalEditsLatestOf, approvalEditsOfRun } from "./sql/approval-edits";
export { type ApprovalRow, approvalsForRun, approvalsGet, approvalsList, approvalsRewakeNotify, type ApprovalStatus } from "./sql/approvals";
export type { HistoryEntry } from "./sql/automation-history";
export { type AutomationCapSettings, automationsCapSettings, automationsSetCappedAction, automationsSetTransactional, type CappedAction } from "./sql/automations-cap";
export { automationVersionsHasPublished, automationVersionsInsertPublished, automationVersionsLatest, automationVersionsListPublished, automationVersionsMarkPublished, automationVersionsPublishedOne, automationVersionsPublishedPair } from "./sql/automation-versions";
export { type AutomationGoal, automationsExists, automationsFindBySlug, automationsGoal, automationsSetGoal, automationsForFirstRequest, automationsHeaderInOrgs, automationsListWithLatest, automationsLock, automationsSampleInput, automationsSetSampleFromDelivery, automationsSetTrackOpens, automationsStatuses, automationsTrackOpens, type AutomationStatus, automationsTriggerOf, automationsWithPublishedVersions, type PauseMode, type PauseRuns } from "./sql/automations";
export { budgetsModelPrices, budgetsOf, budgetsSetAllowed, budgetsSettleAbandoned, defaultModelBudgetUsd } from "./sql/budgets";
export { type CheckName, checkNames } from "./sql/checks";
export { breakersWakeProbes, type ConnectionLimitsView, connectionsLimitsView, connectionsSetLimits, stepsResumeParked } from "./sql/connection-limits";
export { noticesOpenForOrgs, type OpenNotice } from "./sql/connection-notices";
export { connectionsByName, connectionsMarkNeedsReconnect } from "./sql/connections";
export { type ContactDetail, type ContactRun, contactsDetail, contactsEraseCount, contactsIdByEmail, contactsMaySend, contactsOfRun, contactsRuns, contactsSearch, contactsUnsubscribe } from "./sql/contacts";
export { databaseAdvisoryXactLock, databaseNow, databasePing } from "./sql/database";
export { type EmailMessageView, emailMessagesOfRun, type EmailOutcome, emailOutcomes } from "./sql/email-messages";
export { effectsUncertainOfRun, effectsViewOfRun, effectUncertainSql, type EffectView, type UncertainEffect } from "./sql/effects";
export { invitationDays, type InvitationEmailProblem, type OpenInvitation } from "./sql/invitations";
export { leaderLeasesCurrent, leaderLeasesRelease } from "./sql/leader-leases";
export { membershipsEmailOf, membershipsList, membershipsSetSlackUser, type Role } from "./sql/memberships";
export { organisationsCount, organisationsEnsure, organisationsIdBySlug, type RunBudgets } from "./sql/organisations";
export { outboxChannel, readyChannel } from "./sql/outbox";
export { runEventsForRun, type TimelineEntry } from "./sql/run-events";
export { runMigrationsIsOf, runMigrationsList } from "./sql/run-migrations";
export { runsRerunOf, runsReruns } from "./sql/runs-retry";
export { type RunDetailHead, type RunDisplayStatus, runDisplayStatuses, type RunListFilters, type RunListItem, runsDetailHead, runsFindById, runsListForOrgs, runsNewest } from "./sql/runs-view";
export { sessionsPurgeExpired } from "./sql/sessions";
export { signalsViewOfRun, type SignalView } from "./sql/signals";
export { signinThrottlePurgeExpired } from "./sql/signin-throttle";
export { stepsCountParkedForBudget, stepsViewOfRun, type StepView } from "./sql/steps-view";
export { suppressionsDelete, suppressionsInsert, suppressionsList } from "./sql/suppressions";
export { duePickDefaults, type DuePick, timersFireDueFairly, timersOverdue, timersViewOfRun, type TimerView } from "./sql/timers";
export type { CredentialKind, TriggerAuth } from "./sql/trigger-credentials";
export { deliveriesKept, type DeliveryOutcome, type DeliveryView, triggerDeliveriesList } from "./sql/trigger-deliveries";
export { usersPasswordHash } from "./sql/users";
export { goalEventsContactConverted } from "./sql/goal-events";
export { sendingRulesFrequencyCap, sendingRulesSetFrequencyCap, type StoredFrequencyCap } from "./sql/sending-rules";
