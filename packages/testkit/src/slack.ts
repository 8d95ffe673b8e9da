import { createHmac } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Slack's Web API as a local HTTP server (Bolt's client takes its base URL): chat.postMessage, chat.update,
 * conversations.history (with message metadata), conversations.open and views.open, checking the bot token, recording
 * every message posted and updated and every modal opened; plus response_url endpoints that record ephemeral replies.
 */
export interface SlackMessageRecord {
  channel: string;
  ts: string;
  text: string;
  blocks: unknown[];
  metadata: { event_type: string; event_payload: Record<string, string> } | null;
  updates: number;
}

export interface SlackApi {
  /** Base URL to configure as the connection's apiUrl (ends in /api/). */
  apiUrl: string;
  origin: string;
  token: string;
  teamId: string;
  messages: SlackMessageRecord[];
  posts: number;
  /** chat.update calls, in order. */
  updates: { channel: string; ts: string; text: string; blocks: unknown[] }[];
  ephemerals: { path: string; body: unknown }[];
  /** views.open calls Slack accepted, in order: the trigger they used and the modal (as Slack answers, with its id). */
  views: { triggerId: string; view: Record<string, unknown> & { id: string } }[];
  /** Make the next n postMessage calls fail with this Slack error (e.g. "channel_not_found"). */
  failNextPosts(n: number, error: string): void;
  /**
   * Holds the answers to postMessage calls until the returned release is called: the message is already in the
   * channel (a person can click it) while the poster does not yet know where it is.
   */
  holdPostAnswers(): () => void;
  /** The app's OAuth client (oauth.v2.access checks it) and the consent page Add to Slack goes to. */
  clientId: string;
  clientSecret: string;
  authorizeUrl: string;
  /** Codes oauth.v2.access exchanged (each once), and the tokens it issued; an issued token is the one accepted. */
  exchanges: { code: string; redirectUri: string; token: string }[];
  /** Workspace users by email, for users.lookupByEmail. */
  users: Map<string, string>;
  /** The app is removed: every call with a token answers token_revoked until the next install. */
  revoke(): void;
  close(): Promise<void>;
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let s = "";
    req.on("data", (d) => (s += d));
    req.on("end", () => resolve(s));
  });

function parseArgs(body: string, type: string | undefined): Record<string, unknown> {
  if (type?.includes("application/json")) return JSON.parse(body || "{}");
  const out: Record<string, unknown> = {};
  for (const [k, v] of new URLSearchParams(body)) {
    out[k] = /^[[{]/.test(v) ? JSON.parse(v) : v;
  }
  return out;
}

export async function startSlackApi(
  opts: { token?: string; teamId?: string; channels?: string[]; clientId?: string; clientSecret?: string; users?: Record<string, string> } = {},
): Promise<SlackApi> {
  let token = opts.token ?? "xoxb-test-token";
  let revoked = false;
  const clientId = opts.clientId ?? "111.222";
  const clientSecret = opts.clientSecret ?? "test-client-secret";
  const users = new Map(Object.entries(opts.users ?? {}).map(([e, id]) => [e.toLowerCase(), id]));
  const codes = new Map<string, { redirectUri: string; used: boolean }>();
  const exchanges: SlackApi["exchanges"] = [];
  const teamId = opts.teamId ?? "T0TEST";
  const channels = new Set(opts.channels ?? ["C0APPROVALS", "C0MARKETING"]);
  const messages: SlackMessageRecord[] = [];
  const updates: SlackApi["updates"] = [];
  const ephemerals: SlackApi["ephemerals"] = [];
  const views: SlackApi["views"] = [];
  const usedTriggers = new Set<string>();
  let seq = 0;
  let posts = 0;
  let failing = { n: 0, error: "" };
  let held: (() => void)[] | null = null;

  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const send = (o: unknown) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(o));
    };
    const path = req.url ?? "";
    if (path.startsWith("/response/")) {
      ephemerals.push({ path, body: JSON.parse(body || "null") });
      return send({ ok: true });
    }
    // Slack's consent page: the workspace and an Allow button that goes back to the app with a code and the state.
    if (path.startsWith("/oauth/v2/authorize") || path.startsWith("/oauth/v2/allow")) {
      const q = new URL(path, "http://x").searchParams;
      const redirectUri = q.get("redirect_uri") ?? "";
      if (q.get("client_id") !== clientId || !redirectUri) {
        res.writeHead(400, { "content-type": "text/plain" });
        return res.end("invalid client_id or redirect_uri");
      }
      if (path.startsWith("/oauth/v2/allow")) {
        const code = `code-${++seq}`;
        codes.set(code, { redirectUri, used: false });
        const back = new URL(redirectUri);
        back.searchParams.set("code", code);
        back.searchParams.set("state", q.get("state") ?? "");
        res.writeHead(302, { location: back.toString() });
        return res.end();
      }
      const html = (v: string) => v.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      return res.end(`<!doctype html><title>Slack</title><body style="font-family:sans-serif;margin:3em">
        <h1>Holdfast is requesting permission to access the Acme Slack workspace (${html(teamId)})</h1>
        <p>Scopes: ${html(q.get("scope") ?? "")}</p>
        <a id="allow" href="/oauth/v2/allow?${html(q.toString())}" style="padding:.6em 1.2em;background:#007a5a;color:#fff;text-decoration:none">Allow</a></body>`);
    }
    const args = parseArgs(body, req.headers["content-type"]);
    if (path.replace(/^\/api\//, "").split("?")[0] === "oauth.v2.access") {
      const basic = req.headers.authorization?.startsWith("Basic ") ? Buffer.from(req.headers.authorization.slice(6), "base64").toString() : null;
      const [id, secret] = basic ? basic.split(":") : [String(args.client_id ?? ""), String(args.client_secret ?? "")];
      if (id !== clientId || secret !== clientSecret) return send({ ok: false, error: "invalid_client_id" });
      const entry = codes.get(String(args.code ?? ""));
      if (!entry || entry.used) return send({ ok: false, error: "invalid_code" });
      if (args.redirect_uri !== undefined && args.redirect_uri !== entry.redirectUri) return send({ ok: false, error: "bad_redirect_uri" });
      entry.used = true;
      token = `xoxb-installed-${exchanges.length + 1}`;
      revoked = false;
      exchanges.push({ code: String(args.code), redirectUri: entry.redirectUri, token });
      return send({ ok: true, access_token: token, token_type: "bot", scope: "chat:write", bot_user_id: "U0BOT", app_id: "A0TEST", team: { id: teamId, name: "Acme" }, enterprise: null });
    }
    if (revoked) return send({ ok: false, error: "token_revoked" });
    if (req.headers.authorization !== `Bearer ${token}`) return send({ ok: false, error: "invalid_auth" });
    const dm = (ch: string) => (/^[UW]/.test(ch) ? `D${ch}` : ch);
    switch (path.replace(/^\/api\//, "").split("?")[0]) {
      case "chat.postMessage": {
        posts++;
        if (failing.n > 0) {
          failing.n--;
          return send({ ok: false, error: failing.error });
        }
        const channel = dm(String(args.channel));
        if (!channels.has(channel) && !channel.startsWith("D")) return send({ ok: false, error: "channel_not_found" });
        const ts = `${Math.floor(Date.now() / 1000)}.${String(++seq).padStart(6, "0")}`;
        const m: SlackMessageRecord = {
          channel,
          ts,
          text: String(args.text ?? ""),
          blocks: (args.blocks as unknown[]) ?? [],
          metadata: (args.metadata as SlackMessageRecord["metadata"]) ?? null,
          updates: 0,
        };
        messages.push(m);
        if (held) {
          held.push(() => send({ ok: true, channel, ts, message: { text: m.text, ts } }));
          return;
        }
        return send({ ok: true, channel, ts, message: { text: m.text, ts } });
      }
      case "chat.update": {
        const m = messages.find((x) => x.channel === args.channel && x.ts === args.ts);
        if (!m) return send({ ok: false, error: "message_not_found" });
        m.text = String(args.text ?? m.text);
        m.blocks = (args.blocks as unknown[]) ?? m.blocks;
        m.updates++;
        updates.push({ channel: m.channel, ts: m.ts, text: m.text, blocks: m.blocks });
        return send({ ok: true, channel: m.channel, ts: m.ts });
      }
      case "conversations.history": {
        const oldest = Number(args.oldest ?? 0);
        const found = messages
          .filter((m) => m.channel === args.channel && Number(m.ts) >= oldest)
          .map((m) => ({ type: "message", ts: m.ts, text: m.text, ...(args.include_all_metadata && m.metadata ? { metadata: m.metadata } : {}) }))
          .reverse();
        return send({ ok: true, messages: found, has_more: false, response_metadata: { next_cursor: "" } });
      }
      case "views.open": {
        const problem = viewProblem(args.view);
        const trigger = String(args.trigger_id ?? "");
        if (!trigger) return send({ ok: false, error: "invalid_arguments", response_metadata: { messages: ["[ERROR] missing required field: trigger_id"] } });
        // A trigger_id opens one view, once (Slack: exchanged_trigger_id), and only a well-formed one.
        if (usedTriggers.has(trigger)) return send({ ok: false, error: "exchanged_trigger_id" });
        if (problem) return send({ ok: false, error: "invalid_arguments", response_metadata: { messages: [`[ERROR] ${problem}`] } });
        usedTriggers.add(trigger);
        const view = { ...(args.view as Record<string, unknown>), id: `V${String(++seq).padStart(8, "0")}`, team_id: teamId, state: { values: {} }, hash: `${seq}.abc` };
        views.push({ triggerId: trigger, view });
        return send({ ok: true, view });
      }
      case "conversations.open":
        return send({ ok: true, channel: { id: dm(String(args.users)) } });
      case "users.lookupByEmail": {
        const id = users.get(String(args.email ?? "").toLowerCase());
        return send(id ? { ok: true, user: { id, team_id: teamId, profile: { email: args.email } } } : { ok: false, error: "users_not_found" });
      }
      case "auth.test":
        return send({ ok: true, team_id: teamId, team: "Acme", user_id: "U0BOT", bot_id: "B0BOT" });
      default:
        return send({ ok: false, error: "unknown_method" });
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    apiUrl: `${origin}/api/`,
    origin,
    get token() {
      return token;
    },
    teamId,
    clientId,
    clientSecret,
    authorizeUrl: `${origin}/oauth/v2/authorize`,
    exchanges,
    users,
    revoke() {
      revoked = true;
    },
    messages,
    get posts() {
      return posts;
    },
    updates,
    ephemerals,
    views,
    holdPostAnswers() {
      held = held ?? [];
      return () => {
        const answers = held ?? [];
        held = null;
        for (const answer of answers) answer();
      };
    },
    failNextPosts(n, error) {
      failing = { n, error };
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** What Slack's views.open refuses in a modal (its documented limits), or null. */
function viewProblem(view: unknown): string | null {
  const v = view as { type?: unknown; title?: { text?: unknown }; blocks?: unknown; private_metadata?: unknown; callback_id?: unknown; submit?: unknown };
  if (!v || typeof v !== "object") return "missing required field: view";
  if (v.type !== "modal") return "view.type must be modal";
  if (typeof v.title?.text !== "string" || v.title.text.length > 24) return "must be less than 25 characters [json-pointer:/view/title/text]";
  if (!Array.isArray(v.blocks) || v.blocks.length > 100) return "view.blocks must be an array of at most 100 blocks";
  if (typeof v.private_metadata === "string" && v.private_metadata.length > 3000) return "must be less than 3001 characters [json-pointer:/view/private_metadata]";
  if (typeof v.callback_id === "string" && v.callback_id.length > 255) return "must be less than 256 characters [json-pointer:/view/callback_id]";
  const inputs = v.blocks.filter((b) => (b as { type?: string }).type === "input") as { element?: { type?: string; max_length?: number; initial_value?: string } }[];
  if (inputs.length > 0 && !v.submit) return "a view with input blocks must have a submit button [json-pointer:/view/submit]";
  for (const b of inputs) {
    const e = b.element;
    if (e?.type === "plain_text_input" && ((e.max_length ?? 3000) > 3000 || (e.initial_value ?? "").length > (e.max_length ?? 3000))) {
      return "plain_text_input: max_length is at most 3000 and initial_value no longer than it";
    }
  }
  return null;
}

/** A view_submission request as Slack sends it (the edit modal's inputs by block and action id), signed. */
export function slackViewSubmission(
  signingSecret: string,
  p: { teamId: string; userId: string; privateMetadata: string; subject: string; text: string; callbackId?: string },
  timestamp = Math.floor(Date.now() / 1000),
): { body: string; headers: Record<string, string> } {
  const payload = {
    type: "view_submission",
    team: { id: p.teamId, domain: "acme" },
    user: { id: p.userId, username: p.userId, team_id: p.teamId },
    api_app_id: "A0TEST",
    trigger_id: `${timestamp}.${Math.random().toString(36).slice(2)}`,
    view: {
      id: "V0EDIT",
      type: "modal",
      callback_id: p.callbackId ?? "holdfast.approval.edit",
      private_metadata: p.privateMetadata,
      state: {
        values: {
          subject: { subject: { type: "plain_text_input", value: p.subject } },
          body: { body: { type: "plain_text_input", value: p.text } },
        },
      },
      hash: "1.abc",
    },
    response_urls: [],
  };
  return signed(signingSecret, payload, timestamp);
}

function signed(signingSecret: string, payload: unknown, timestamp: number): { body: string; headers: Record<string, string> } {
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const signature = `v0=${createHmac("sha256", signingSecret).update(`v0:${timestamp}:${body}`).digest("hex")}`;
  return {
    body,
    headers: { "content-type": "application/x-www-form-urlencoded", "x-slack-request-timestamp": String(timestamp), "x-slack-signature": signature },
  };
}

/** A block_actions request as Slack sends it: form-encoded payload, v0 signature over `v0:<ts>:<body>`. */
export function slackInteraction(
  signingSecret: string,
  p: { teamId: string; userId: string; channel: string; ts: string; actionId: string; value: string; responseUrl?: string },
  timestamp = Math.floor(Date.now() / 1000),
): { body: string; headers: Record<string, string> } {
  const payload = {
    type: "block_actions",
    team: { id: p.teamId, domain: "acme" },
    user: { id: p.userId, username: p.userId, team_id: p.teamId },
    api_app_id: "A0TEST",
    container: { type: "message", channel_id: p.channel, message_ts: p.ts, is_ephemeral: false },
    channel: { id: p.channel },
    // Each interaction has its own trigger_id (views.open takes it once).
    trigger_id: `${timestamp}.${Math.random().toString(36).slice(2)}`,
    response_url: p.responseUrl,
    actions: [{ type: "button", action_id: p.actionId, block_id: "b", value: p.value, action_ts: String(timestamp) }],
  };
  return signed(signingSecret, payload, timestamp);
}
