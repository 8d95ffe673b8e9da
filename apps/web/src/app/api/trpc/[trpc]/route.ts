import { isDatabaseUnreachable, sessionCookie, sessionUser } from "@holdfast/core";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { env } from "../../../../env";
import { readBodyLimited } from "../../../../server/body";
import { db } from "../../../../server/db";
import { databaseUnavailable } from "../../../../server/trpc/init";
import { appRouter } from "../../../../server/trpc/router";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** Largest tRPC request body: a draft of the largest graph (500 nodes, 2,000 edges) with its configs fits. */
const maxBytes = 2 * 1024 * 1024;

function cookieValue(header: string | null, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) {
      try {
        return decodeURIComponent(v.join("="));
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

async function handler(request: Request): Promise<Response> {
  let req = request;
  if (request.method !== "GET" && request.method !== "HEAD") {
    // The body is read under the limit here; tRPC gets a request over the bytes already in hand.
    const body = await readBodyLimited(request, maxBytes);
    if (!body.ok) return body.response;
    const headers = new Headers(request.headers);
    headers.delete("content-length");
    headers.delete("transfer-encoding");
    req = new Request(request.url, { method: request.method, headers, body: body.bytes as BodyInit });
  }
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    createContext: async () => ({
      db,
      user: await sessionUser(db, cookieValue(req.headers.get("cookie"), sessionCookie), { idleMinutes: env.SESSION_IDLE_MINUTES }).catch((error) => {
        throw isDatabaseUnreachable(error) ? databaseUnavailable(error) : error;
      }),
    }),
  });
}

export { handler as GET, handler as POST };
