/**
 * The people layer: approvals, signals (replies), Slack, sign-in, sessions and invitations. It imports
 * every layer below it but run.
 *
 * `@holdfast/core/people`: what the apps, the CLI and the tests use of it.
 */
export { decideApproval, type DecisionActor, type DecisionRequest, type DecisionResult, reviseApproval } from "./approvals/decide";
export { contentDigest } from "./approvals/digest";
export { type Decider, describeOutcome, judge, mayDecide, readBack, type Refusal } from "./approvals/judge";
export { notifyApproval, type NotifyOptions, type NotifyResult } from "./approvals/notify";
export { approvalMessage, approveActionId, editActionId, rejectActionId } from "./approvals/slack-blocks";
export { editApproval, editLimits, editProblem, type EditRequest, type EditResult } from "./approvals/edit";
export { type EditClaims, issueEditToken, verifyEditToken } from "./approvals/edit-token";
export { bodyBlock, editCallbackId, subjectBlock } from "./approvals/slack-modal";
export { handleSlackInteraction, postEphemeral, type SlackReply, type SlackRequest, slackToleranceSeconds } from "./approvals/slack-interaction";
export { type ButtonClaims, issueButtonToken, type TokenCheck, verifyButtonToken } from "./approvals/token";
export { invitationEmailProblemMessage, invitationEmailState, type InvitationEmailState, invitationEmailText } from "./auth/invitation-mail";
export { acceptInvitation, acceptInvitationAsNewUser, declineInvitation, InvalidAccountError, type InvitationLookup, type InvitationOffer, type InvitationOutcome, invitationPath, type InvitationRefusal, invitationRefusalMessage, inviteMember, inviteMemberByEmail, listOpenInvitations, MemberExistsError, minPasswordLength, type OrgScope, revokeInvitation, viewInvitation } from "./auth/invitations";
export { hashPassword, verifyPassword } from "./auth/password";
export { revokeUserSessions, sessionCookie, sessionDays, sessionIdleMinutes, sessionIdOf, sessionUser, type SessionUser, signIn, type SignInOptions, signOut } from "./auth/sessions";
export { accountKey, addressKey, createSignInThrottle, defaultSignInLimits, retryPhrase, type SignInLimits, type SignInThrottle, throttleMessage, type ThrottleVerdict } from "./auth/throttle";
export { LastOwnerError, removeMember, setMemberRole, setUserPassword, upsertMember } from "./auth/users";
export { bounceAddress, type BounceOutcome, bounceSuppressionReason, bounceTokenOf, type DsnVerdict, readDeliveryStatus, recordBounce, resolveBounceAddress } from "./email-outcomes/bounce";
export { clickUrl, decorateEmail, type Decoration, footerHtml, footerText, openPixelUrl, trackHtmlLinks, trackTextLinks } from "./email-outcomes/links";
export { recordClick, recordOpen } from "./email-outcomes/record";
export { type ClickClaims, isTrackableTarget, issueClickToken, issueOpenToken, maxTrackingToken, type OpenClaims, verifyClickToken, verifyOpenToken } from "./email-outcomes/tokens";
export { type GoalMet, goalMet, type GoalMetOutcome } from "./goals/goal-met";
export { runMeetsGoal } from "./goals/run-goal";
export { inboundEmail, type InboundEmail, ingestEmailReply, type IngestOutcome, messageIds } from "./signals/email";
export { type InboundOutcome, ingestInboundEmail, type ScopeRunner, UnroutableReplyError } from "./signals/inbound";
export { inboundEmailDomain, replyRoutingAddress, replyRoutingToken, resolveReplyRoutes, routingTokenMatches, routingTokenOf } from "./signals/routing";
export { finishSlackInstall, type InstallResult, linkMembersBySlackEmail, type LinkResult, type SlackApp, SlackInstallError, startSlackInstall } from "./slack/install";
export { issueUnsubscribeToken, maskEmail, type UnsubscribeCheck, type UnsubscribeClaims, unsubscribeBase, unsubscribeOnce, unsubscribePreview, unsubscribeReason, unsubscribeUrl, verifyUnsubscribeToken } from "./unsubscribe/token";
export { isOpen, nextOpening, quietHoursSentence, quietHoursWords, type QuietOverride, quietOverrideSchema, type QuietWindow, quietWindowInForce, quietWindowSchema } from "./sending-rules/quiet-hours";
export { capWords, frequencyCapOf, frequencyCapSchema, type FrequencyCap, periodWords } from "./sending-rules/frequency-cap";
export { frequencyCapAfterSend, frequencyCapGate } from "./sending-rules/frequency-cap-gate";
