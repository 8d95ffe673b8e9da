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
export { approvalMessage, approveActionId, rejectActionId } from "./approvals/slack-blocks";
export { handleSlackInteraction, postEphemeral, type SlackReply, type SlackRequest, slackToleranceSeconds } from "./approvals/slack-interaction";
export { type ButtonClaims, issueButtonToken, type TokenCheck, verifyButtonToken } from "./approvals/token";
export { invitationEmailProblemMessage, invitationEmailState, type InvitationEmailState, invitationEmailText } from "./auth/invitation-mail";
export { acceptInvitation, acceptInvitationAsNewUser, declineInvitation, InvalidAccountError, type InvitationLookup, type InvitationOffer, type InvitationOutcome, invitationPath, type InvitationRefusal, invitationRefusalMessage, inviteMember, inviteMemberByEmail, listOpenInvitations, MemberExistsError, minPasswordLength, type OrgScope, revokeInvitation, viewInvitation } from "./auth/invitations";
export { hashPassword, verifyPassword } from "./auth/password";
export { revokeUserSessions, sessionCookie, sessionDays, sessionIdleMinutes, sessionIdOf, sessionUser, type SessionUser, signIn, type SignInOptions, signOut } from "./auth/sessions";
export { accountKey, addressKey, createSignInThrottle, defaultSignInLimits, retryPhrase, type SignInLimits, type SignInThrottle, throttleMessage, type ThrottleVerdict } from "./auth/throttle";
export { LastOwnerError, removeMember, setMemberRole, setUserPassword, upsertMember } from "./auth/users";
export { inboundEmail, type InboundEmail, ingestEmailReply, type IngestOutcome, messageIds } from "./signals/email";
export { type InboundOutcome, ingestInboundEmail, type ScopeRunner, UnroutableReplyError } from "./signals/inbound";
export { inboundEmailDomain, replyRoutingAddress, replyRoutingToken, resolveReplyRoutes, routingTokenMatches, routingTokenOf } from "./signals/routing";
export { finishSlackInstall, type InstallResult, linkMembersBySlackEmail, type LinkResult, type SlackApp, SlackInstallError, startSlackInstall } from "./slack/install";
export { issueUnsubscribeToken, maskEmail, type UnsubscribeCheck, type UnsubscribeClaims, unsubscribeBase, unsubscribeOnce, unsubscribePreview, unsubscribeReason, unsubscribeUrl, verifyUnsubscribeToken } from "./unsubscribe/token";
