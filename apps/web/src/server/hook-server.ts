import type { IncomingMessage, ServerResponse } from "node:http";
import { createLogger } from "@holdfast/core/base";
import { env } from "../env";
import { answerDelivery } from "./hook-routes";
import type { HookParams } from "./hooks";
import { securityHeaders } from "./security-headers";

/**
 * The trigger routes' POSTs, answered by the web's own HTTP server (server.ts) before Next's request pipeline: the same
 * handler as the Next routes (hook-routes.ts, which still answer under `next dev` and every other method), without
 * the routing, rendering and context set-up a page needs, which cost a delivery twice the CPU of its start (bench
 * --intake, docs/performance.md). Everything a delivery meets is handleHook's: the body limit, the credential, the
 * delivery log, the organisation's scope.
 */

/** /api/hooks/{org}/{automation} and /api/hooks/{org}/{automation}/{token}, with an optional query (ignored). */
const hookPath = /^\/api\/hooks\/([^/?#]+)\/([^/?#]+)(?:\/([^/?#]+))?(?:\?.*)?$/;

const commonHeaders = Object.fromEntries(Object.entries(securityHeaders).map(([k, v]) => [k.toLowerCase(), v]));

/**
 * The route's params when this request is a trigger delivery this server answers itself ("malformed" for a trigger
 * URL with a broken %-escape, which names nothing), else null: Next answers (every other path and method).
 */
export function hookRequest(req: IncomingMessage): HookParams | "malformed" | null {
  if (req.method !== "POST" || !req.url) return null;
  const m = hookPath.exec(req.url);
  if (!m) return null;
  try {
    const [orgSlug, automationSlug, token] = [m[1], m[2], m[3]].map((s) => (s === undefined ? undefined : decodeURIComponent(s)));
    return { orgSlug: orgSlug as string, automationSlug: automationSlug as string, ...(token !== undefined ? { token } : {}) };
  } catch {
    return "malformed";
  }
}

/** Answers one delivery: the request as a Fetch Request for handleHook, its Response written back. */
export async function serveHook(req: IncomingMessage, res: ServerResponse, params: HookParams | "malformed"): Promise<void> {
  if (params === "malformed") {
    req.resume();
    return answer(res, 400, { error: { code: "invalid_url", message: "the trigger URL has a broken %-escape: copy it again from the automation's trigger panel" } });
  }
  try {
    // The headers as Node parsed them (a repeated single-valued header keeps its first value, as Next reads it; the
    // peer-address stamp included), the body read only when the handler reads it (an answer without reading it
    // leaves Node to close the connection, not to wait for it).
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (Array.isArray(value)) for (const v of value) headers.append(name, v);
      else if (value !== undefined) headers.set(name, value);
    }
    // The handler reads the route's params, headers and body, never the URL: no Host header a sender wrote is parsed.
    const request = new Request(`http://localhost${req.url}`, { method: "POST", headers, body: req, duplex: "half" } as unknown as RequestInit);
    const response = await answerDelivery(params, request);
    const body = Buffer.from(await response.arrayBuffer());
    const out: Record<string, string> = { ...commonHeaders };
    response.headers.forEach((value, name) => {
      out[name] = value;
    });
    out["content-length"] = String(body.byteLength);
    res.writeHead(response.status, out);
    res.end(body);
  } catch (error) {
    // handleHook answers every outcome it knows; anything else (a sender gone mid-body, a bug) is logged and answered
    // as a Next route's uncaught error is.
    createLogger("web", env.LOG_LEVEL).error({ err: error, orgSlug: params.orgSlug, automationSlug: params.automationSlug }, "webhook failed");
    if (res.headersSent) return void res.destroy();
    answer(res, 500, { error: { code: "internal", message: "internal error" } });
  }
}

function answer(res: ServerResponse, status: number, json: unknown): void {
  const body = JSON.stringify(json);
  res.writeHead(status, { ...commonHeaders, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) });
  res.end(body);
}
