import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * The login endpoints Test connection calls, on 127.0.0.1, for the kinds testkit's other servers do not answer:
 * an OpenAI-compatible `GET /v1/models`, Slack's `auth.test` (`/api/auth.test`), and an HTTP API that checks one
 * credential header (`/api`). Each counts its calls, so a test can show that testing did nothing else.
 */
export interface ConnectionTargets {
  origin: string;
  /** Model base URL (ends in /v1). */
  modelBaseUrl: string;
  modelKey: string;
  models: string[];
  /** Slack Web API base URL (ends in /api/). */
  slackApiUrl: string;
  slackToken: string;
  slackTeamId: string;
  /** HTTP API base URL, and the header and value it wants. */
  httpBaseUrl: string;
  httpHeader: string;
  httpValue: string;
  calls: { method: string; path: string }[];
  close(): Promise<void>;
}

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    let s = "";
    req.on("data", (d) => (s += d));
    req.on("end", () => resolve(s));
  });

export async function startConnectionTargets(
  o: { modelKey?: string; slackToken?: string; slackTeamId?: string; httpHeader?: string; httpValue?: string } = {},
): Promise<ConnectionTargets> {
  const modelKey = o.modelKey ?? "sk-test-model";
  const slackToken = o.slackToken ?? "xoxb-test-token";
  const slackTeamId = o.slackTeamId ?? "T0TEST";
  const httpHeader = o.httpHeader ?? "X-Api-Key";
  const httpValue = o.httpValue ?? "key-123";
  const models = ["gpt-4o-mini", "gpt-4o"];
  const calls: ConnectionTargets["calls"] = [];
  const server = createServer(async (req, res) => {
    await readBody(req);
    const path = (req.url ?? "/").split("?")[0] as string;
    calls.push({ method: req.method ?? "", path });
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(value));
    };
    if (path === "/v1/models" && req.method === "GET") {
      if (req.headers.authorization !== `Bearer ${modelKey}`) return json(401, { error: { message: "Incorrect API key provided", type: "invalid_request_error" } });
      return json(200, { object: "list", data: models.map((id) => ({ id, object: "model", owned_by: "test" })) });
    }
    if (path === "/api/auth.test") {
      if (req.headers.authorization !== `Bearer ${slackToken}`) return json(200, { ok: false, error: "invalid_auth" });
      return json(200, { ok: true, url: "https://acme.slack.com/", team: "Acme", user: "holdfast", team_id: slackTeamId, user_id: "U0BOT", bot_id: "B0BOT" });
    }
    if (path === "/api" || path.startsWith("/api/")) {
      if (req.headers[httpHeader.toLowerCase()] !== httpValue) return json(401, { message: "missing or wrong API key" });
      if (req.method === "HEAD") {
        res.writeHead(200);
        return res.end();
      }
      return json(200, { ok: true });
    }
    json(404, { error: "not found" });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    modelBaseUrl: `${origin}/v1`,
    modelKey,
    models,
    slackApiUrl: `${origin}/api/`,
    slackToken,
    slackTeamId,
    httpBaseUrl: `${origin}/api`,
    httpHeader,
    httpValue,
    calls,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
