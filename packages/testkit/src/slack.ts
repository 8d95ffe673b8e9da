import { createHmac } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Slack's Web API as a local HTTP server (Bolt's client takes its base URL): chat.postMessage, chat.update,
 * conversations.history (with message metadata) and conversations.open, checking the bot token, recording every
 * message posted and updated; plus response_url endpoints that record ephemeral replies.
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
  /** Make the next n postMessage calls fail with this Slack error (e.g. "channel_not_found"). */
  failNextPosts(n: number, error: string): void;
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

export async function startSlackApi(opts: { token?: string; teamId?: string; channels?: string[] } = {}): Promise<SlackApi> {
  const token = opts.token ?? "xoxb-test-token";
  const teamId = opts.teamId ?? "T0TEST";
  const channels = new Set(opts.channels ?? ["C0APPROVALS", "C0MARKETING"]);
  const messages: SlackMessageRecord[] = [];
  const updates: SlackApi["updates"] = [];
  const ephemerals: SlackApi["ephemerals"] = [];
  let seq = 0;
  let posts = 0;
  let failing = { n: 0, error: "" };

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
    if (req.headers.authorization !== `Bearer ${token}`) return send({ ok: false, error: "invalid_auth" });
    const args = parseArgs(body, req.headers["content-type"]);
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
      case "conversations.open":
        return send({ ok: true, channel: { id: dm(String(args.users)) } });
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
    token,
    teamId,
    messages,
    get posts() {
      return posts;
    },
    updates,
    ephemerals,
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
    trigger_id: "1.2.3",
    response_url: p.responseUrl,
    actions: [{ type: "button", action_id: p.actionId, block_id: "b", value: p.value, action_ts: String(timestamp) }],
  };
  const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
  const signature = `v0=${createHmac("sha256", signingSecret).update(`v0:${timestamp}:${body}`).digest("hex")}`;
  return {
    body,
    headers: { "content-type": "application/x-www-form-urlencoded", "x-slack-request-timestamp": String(timestamp), "x-slack-signature": signature },
  };
}
