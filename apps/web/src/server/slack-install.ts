import { finishSlackInstall, type SessionUser, type SlackApp, SlackInstallError, sessionCookie, sessionIdOf, startSlackInstall } from "@holdfast/core/people";
import { cookies } from "next/headers";
import { env } from "../env";
import { db } from "./db";
import { currentUser } from "./session";

/**
 * "Add to Slack" in Settings: POST /api/slack/install starts Slack's OAuth v2 for an organisation the signed-in
 * owner belongs to; Slack sends the browser back to GET /api/slack/oauth, which finishes it (people/slack/install.ts in
 * core checks the state) and returns to Settings with what happened in the address (shown by add-to-slack.tsx).
 */
export function slackApp(): SlackApp | null {
  if (!env.SLACK_CLIENT_ID || !env.SLACK_CLIENT_SECRET) return null;
  return {
    clientId: env.SLACK_CLIENT_ID,
    clientSecret: env.SLACK_CLIENT_SECRET,
    apiUrl: env.SLACK_API_URL.endsWith("/") ? env.SLACK_API_URL : `${env.SLACK_API_URL}/`,
    authorizeUrl: env.SLACK_AUTHORIZE_URL,
    redirectUri: new URL("/api/slack/oauth", env.HOLDFAST_PUBLIC_URL).toString(),
  };
}

/** Back to Settings (of `orgSlug` when known) with the outcome in the query: `slack=…` or `slack_error=<sentence>`. */
export function backToSettings(orgSlug: string | null, outcome: Record<string, string>): Response {
  const url = new URL("/settings", env.HOLDFAST_PUBLIC_URL);
  if (orgSlug) url.searchParams.set("org", orgSlug);
  for (const [k, v] of Object.entries(outcome)) url.searchParams.set(k, v);
  return new Response(null, { status: 303, headers: { location: `${url.pathname}${url.search}`, "cache-control": "no-store" } });
}

async function signedIn(): Promise<{ user: SessionUser; sessionId: string } | null> {
  const user = await currentUser();
  const token = (await cookies()).get(sessionCookie)?.value;
  return user && token ? { user, sessionId: sessionIdOf(token) } : null;
}

/**
 * POST /api/slack/install?org=<slug>. Reads no body (Settings' button names the organisation in the address), so a
 * request without a session costs a cookie lookup whatever it uploads: the body is cancelled, never buffered.
 */
export async function startInstall(request: Request): Promise<Response> {
  await request.body?.cancel().catch(() => {});
  const slug = (new URL(request.url).searchParams.get("org") ?? "").slice(0, 64);
  const who = await signedIn();
  if (!who) return new Response(null, { status: 303, headers: { location: `/signin?next=${encodeURIComponent(`/settings?org=${slug}`)}` } });
  const org = who.user.memberships.find((m) => m.orgSlug === slug);
  if (!org) return backToSettings(null, { slack_error: "You are not a member of that organisation." });
  if (org.role !== "owner") return backToSettings(slug, { slack_error: "Only an owner of the organisation can connect Slack." });
  const app = slackApp();
  if (!app) {
    return backToSettings(slug, {
      slack_error: "Add to Slack is not set up on this deployment (SLACK_CLIENT_ID and SLACK_CLIENT_SECRET). Ask its operator, or add a Slack connection with a bot token below.",
    });
  }
  const url = await startSlackInstall(db, { orgId: org.orgId, userId: who.user.id, sessionId: who.sessionId }, app);
  return new Response(null, { status: 303, headers: { location: url, "cache-control": "no-store" } });
}

export async function finishInstall(request: Request): Promise<Response> {
  const q = new URL(request.url).searchParams;
  const who = await signedIn();
  if (!who) return new Response(null, { status: 303, headers: { location: `/signin?next=${encodeURIComponent("/settings")}` } });
  const state = q.get("state") ?? "";
  const orgOfState = who.user.memberships.find((m) => state.startsWith(`${m.orgId}.`));
  const slug = orgOfState?.orgSlug ?? null;
  if (q.get("error")) return backToSettings(slug, { slack_error: `Slack was not added: Slack said "${q.get("error")?.slice(0, 100)}".` });
  const app = slackApp();
  if (!app) return backToSettings(slug, { slack_error: "Add to Slack is not set up on this deployment." });
  try {
    const r = await finishSlackInstall(
      db,
      {
        state,
        code: q.get("code") ?? "",
        sessionId: who.sessionId,
        actor: `user:${who.user.email}`,
        mayInstall: (orgId) => who.user.memberships.some((m) => m.orgId === orgId && m.role === "owner"),
      },
      app,
    );
    return backToSettings(slug, {
      slack: r.created ? "added" : "reconnected",
      team: r.teamName ?? r.teamId,
      linked: String(r.links.linked.length),
      unmatched: r.links.unmatched.join(","),
      reposted: String(r.renotified),
    });
  } catch (error) {
    if (error instanceof SlackInstallError) return backToSettings(slug, { slack_error: error.message });
    throw error;
  }
}
