import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A real HTTP CRM on 127.0.0.1 speaking the protocol crm_upsert uses: `PUT /objects/{object}/records/{externalId}`
 * upserts (201 created, 200 updated), `GET /objects/{object}/records?externalId=` searches. Bearer tokens name the
 * connected account; it records calls, records, and the most calls in flight per token (for caps).
 */
export interface CrmTarget {
  baseUrl: string;
  records: Map<string, { externalId: string; fields: Record<string, unknown>; version: number }>;
  upserts: Map<string, number>;
  maxInFlight(token: string): number;
  setTokens(tokens: string[]): void;
  behave(b: Partial<{ delayMs: number; failFirst: number; failStatus: number; retryAfter: string }>): void;
  close(): Promise<void>;
}

export async function startCrmTarget(tokens: string[] = ["crm-token"]): Promise<CrmTarget> {
  let allowed = new Set(tokens);
  const records: CrmTarget["records"] = new Map();
  const upserts = new Map<string, number>();
  const inFlight = new Map<string, number>();
  const maxInFlight = new Map<string, number>();
  let behaviour = { delayMs: 0, failFirst: 0, failStatus: 503, retryAfter: undefined as string | undefined };
  const server: Server = createServer(async (req, res) => {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
    const body = await new Promise<string>((resolve) => {
      let data = "";
      req.on("data", (c) => (data += c));
      req.on("end", () => resolve(data));
    });
    const send = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(JSON.stringify(value));
    };
    if (!allowed.has(token)) return send(401, { error: "invalid token" });
    const n = (inFlight.get(token) ?? 0) + 1;
    inFlight.set(token, n);
    maxInFlight.set(token, Math.max(maxInFlight.get(token) ?? 0, n));
    try {
      if (behaviour.delayMs) await new Promise((r) => setTimeout(r, behaviour.delayMs));
      const url = new URL(req.url ?? "/", "http://crm");
      const put = /^\/objects\/([^/]+)\/records\/([^/]+)$/.exec(url.pathname);
      if (req.method === "PUT" && put) {
        const externalId = decodeURIComponent(put[2] as string);
        const count = (upserts.get(externalId) ?? 0) + 1;
        upserts.set(externalId, count);
        if (count <= behaviour.failFirst) return send(behaviour.failStatus, { error: "busy" }, behaviour.retryAfter ? { "retry-after": behaviour.retryAfter } : {});
        const fields = (JSON.parse(body || "{}") as { fields?: Record<string, unknown> }).fields ?? {};
        const existing = records.get(externalId);
        const record = { externalId, fields, version: (existing?.version ?? 0) + 1 };
        records.set(externalId, record);
        return send(existing ? 200 : 201, { id: `rec_${externalId}`, ...record });
      }
      const list = /^\/objects\/([^/]+)\/records$/.exec(url.pathname);
      if (req.method === "GET" && list) {
        const externalId = url.searchParams.get("externalId") ?? "";
        const record = records.get(externalId);
        return send(200, { records: record ? [{ id: `rec_${externalId}`, ...record }] : [] });
      }
      return send(404, { error: "not found" });
    } finally {
      inFlight.set(token, (inFlight.get(token) ?? 1) - 1);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    records,
    upserts,
    maxInFlight: (token) => maxInFlight.get(token) ?? 0,
    setTokens(t) {
      allowed = new Set(t);
    },
    behave(b) {
      behaviour = { ...behaviour, ...b };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
