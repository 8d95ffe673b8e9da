import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";
import { type Db, inTx } from "@holdfast/db";
import { slackClient } from "../../providers/connections/slack-client";
import { addConnection, updateConnection } from "../../providers/connections/manage";
import { HoldfastError } from "../../base/errors";
import { secretKey } from "../../store/keys/secret-key";
import type { EgressOptions } from "../../providers/net/egress";
import { egressRefusalOf } from "../../providers/net/egress";
import { approvalsRenotifyFailed } from "../../store/sql/approvals";
import { connectionsByName } from "../../store/sql/connections";
import { membershipsLinkSlackIfUnset, membershipsSlackLinks } from "../../store/sql/memberships";
import { slackInstallStatesInsert, slackInstallStatesUse } from "../../store/sql/slack-install-states";

/**
 * "Add to Slack": Slack's OAuth v2. Starting writes a state that is signed (HMAC over organisation, session and a
 * nonce, with a key derived from the deployment's secret), bound to the browser session and organisation, kept for
 * 10 minutes and used once (slack_install_states). The callback checks all of that before it exchanges the code at
 * oauth.v2.access on the deployment's Slack API base, stores the bot token as the organisation's connection named
 * "slack" (encrypted like every connection secret), re-posts approvals whose post failed on a revoked token, and
 * links members to Slack users by email (users.lookupByEmail), never over a link someone set by hand.
 */

/** The bot scopes asked for: post and update (chat:write), DM an approver (im:write), find a post after an
 *  uncertain attempt (*:history), link members by email (users:read, users:read.email). */
export const slackBotScopes = ["chat:write", "im:write", "im:history", "channels:history", "groups:history", "users:read", "users:read.email"];

/** The deployment's Slack app (its client id and secret are the app's, from api.slack.com/apps). */
export interface SlackApp {
  clientId: string;
  clientSecret: string;
  /** Web API base, e.g. https://slack.com/api/ (a local server in tests). */
  apiUrl: string;
  /** The consent page, e.g. https://slack.com/oauth/v2/authorize. */
  authorizeUrl: string;
  /** This deployment's callback: <public url>/api/slack/oauth (also set as a Redirect URL in the app). */
  redirectUri: string;
  egress?: EgressOptions;
}

export class SlackInstallError extends HoldfastError {}

const connectionName = "slack";
let stateKey: Buffer | undefined;
const key = () => (stateKey ??= Buffer.from(hkdfSync("sha256", secretKey(), Buffer.alloc(0), "holdfast slack install state v1", 32)));
const b64url = (b: Buffer) => b.toString("base64url");
const stateMac = (orgId: string, sessionId: string, nonce: string, k: Buffer) =>
  createHmac("sha256", k).update(`${orgId}\n${sessionId}\n${nonce}`).digest().subarray(0, 20);
const nonceId = (nonce: string) => createHash("sha256").update(nonce).digest("hex");

/** Starts an install: the URL of Slack's consent page with a fresh state for this session and organisation. */
export async function startSlackInstall(db: Db, who: { orgId: string; userId: string; sessionId: string }, app: SlackApp, k: Buffer = key()): Promise<string> {
  const nonce = b64url(randomBytes(24));
  const state = `${who.orgId}.${nonce}.${b64url(stateMac(who.orgId, who.sessionId, nonce, k))}`;
  await inTx(db, (tx) => slackInstallStatesInsert(tx, { id: nonceId(nonce), orgId: who.orgId, userId: who.userId, sessionId: who.sessionId }));
  const url = new URL(app.authorizeUrl);
  url.searchParams.set("client_id", app.clientId);
  url.searchParams.set("scope", slackBotScopes.join(","));
  url.searchParams.set("redirect_uri", app.redirectUri);
  url.searchParams.set("state", state);
  return url.toString();
}

/** The organisation a state names, if its signature is this session's (no database read). */
export function installStateOrg(state: string, sessionId: string, k: Buffer = key()): { orgId: string; nonce: string } | null {
  const m = /^(org_[A-Za-z0-9]{1,64})\.([A-Za-z0-9_-]{32})\.([A-Za-z0-9_-]{27})$/.exec(state);
  if (!m) return null;
  const [, orgId = "", nonce = "", mac = ""] = m;
  const given = Buffer.from(mac, "base64url");
  const expected = stateMac(orgId, sessionId, nonce, k);
  return given.length === expected.length && timingSafeEqual(given, expected) ? { orgId, nonce } : null;
}

export interface InstallResult {
  orgId: string;
  teamId: string;
  teamName: string | null;
  connectionId: string;
  created: boolean;
  /** Steps parked on the connection that the new token resumed. */
  resumed: number;
  /** Approvals whose Slack post had failed (a revoked token) and are owed it again. */
  renotified: number;
  links: LinkResult;
}

const restart = "Start again with Add to Slack in Settings.";

/**
 * The callback: checks the state (signature for this session, then single use and expiry in the database), exchanges
 * the code, stores the token and links members. A refused state changes nothing; Slack's refusal of the code is a
 * sentence with Slack's error.
 */
export async function finishSlackInstall(
  db: Db,
  input: { state: string; code: string; sessionId: string; actor: string; mayInstall: (orgId: string) => boolean },
  app: SlackApp,
  k: Buffer = key(),
): Promise<InstallResult> {
  const claimed = installStateOrg(input.state, input.sessionId, k);
  if (!claimed) throw new SlackInstallError("state_invalid", `This Slack sign-in was not started from this browser session. ${restart}`);
  const { orgId } = claimed;
  if (!input.mayInstall(orgId)) throw new SlackInstallError("forbidden", "Only an owner of the organisation can connect Slack.");
  const use = await inTx(db, (tx) => slackInstallStatesUse(tx, { id: nonceId(claimed.nonce), orgId, sessionId: input.sessionId }));
  if (use.kind === "used") throw new SlackInstallError("state_used", `This Slack sign-in was already used. ${restart}`);
  if (use.kind === "expired") throw new SlackInstallError("state_expired", `This Slack sign-in took longer than 10 minutes. ${restart}`);
  if (use.kind !== "ok") throw new SlackInstallError("state_invalid", `This Slack sign-in was not started from this browser session. ${restart}`);

  const client = await slackClient("", app.apiUrl, 10_000, app.egress);
  let access: { access_token?: string; team?: { id?: string; name?: string }; token_type?: string };
  try {
    access = await client.oauth.v2.access({ client_id: app.clientId, client_secret: app.clientSecret, code: input.code, redirect_uri: app.redirectUri });
  } catch (error) {
    throw slackCallError(error, "Slack did not accept the sign-in");
  }
  const token = access.access_token;
  const teamId = access.team?.id;
  if (!token || !teamId || (access.token_type && access.token_type !== "bot")) {
    throw new SlackInstallError("slack_refused", `Slack's answer had no bot token for a workspace. ${restart}`);
  }

  const config = { teamId, apiUrl: app.apiUrl };
  const existing = await connectionsByName(db, orgId, connectionName);
  if (existing && existing.kind !== "slack") {
    throw new SlackInstallError("name_taken", `A ${existing.kind} connection is named "slack": rename it in Settings, then add Slack again.`);
  }
  let connectionId: string;
  let resumed = 0;
  if (existing) {
    connectionId = existing.id;
    resumed = (await updateConnection(db, orgId, existing.id, { config, secret: token }, input.actor)).resumed;
  } else {
    connectionId = await addConnection(db, { orgId, kind: "slack", name: connectionName, config, secret: token });
  }
  const renotified = await inTx(db, (tx) => approvalsRenotifyFailed(tx, orgId, connectionName, input.actor));
  const links = await linkMembersBySlackEmail(db, orgId, await slackClient(token, app.apiUrl, 10_000, app.egress));
  return { orgId, teamId, teamName: access.team?.name ?? null, connectionId, created: !existing, resumed, renotified, links };
}

export interface LinkResult {
  /** Members linked now, by email. */
  linked: { email: string; slackUserId: string }[];
  /** Members who already had a Slack user (set by hand or earlier): left as they are. */
  kept: string[];
  /** Members Slack has no user for (or whose Slack user another member has). */
  unmatched: string[];
}

type WebClient = Awaited<ReturnType<typeof slackClient>>;

/** Links each member without a Slack user to the workspace user with their email (users.lookupByEmail). */
export async function linkMembersBySlackEmail(db: Db, orgId: string, client: WebClient): Promise<LinkResult> {
  const result: LinkResult = { linked: [], kept: [], unmatched: [] };
  for (const m of await membershipsSlackLinks(db, orgId)) {
    if (m.slackUserId) {
      result.kept.push(m.email);
      continue;
    }
    let slackUserId: string | undefined;
    try {
      slackUserId = (await client.users.lookupByEmail({ email: m.email })).user?.id;
    } catch (error) {
      const slackError = (error as { data?: { error?: string } }).data?.error;
      if (slackError !== "users_not_found") throw slackCallError(error, "Slack did not answer a lookup by email");
    }
    if (slackUserId && (await inTx(db, (tx) => membershipsLinkSlackIfUnset(tx, orgId, m.userId, slackUserId)))) {
      result.linked.push({ email: m.email, slackUserId });
    } else result.unmatched.push(m.email);
  }
  return result;
}

function slackCallError(error: unknown, what: string): SlackInstallError {
  const refused = egressRefusalOf(error);
  if (refused) return new SlackInstallError("egress_refused", `${what}: ${refused.message}`);
  const slackError = (error as { data?: { error?: string } }).data?.error;
  if (slackError) return new SlackInstallError("slack_refused", `${what} (Slack said "${slackError}"). ${restart}`);
  return new SlackInstallError("slack_unreachable", `${what}: ${(error as Error).message}. Try again in a minute.`);
}
