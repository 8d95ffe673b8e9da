import { jsonShapeProblem, payloadLimits } from "@holdfast/core/base";
import { sessionCookie, sessionUser } from "@holdfast/core/people";
import { TRPCError } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { env } from "../../../../env";
import { readBodyLimited } from "../../../../server/body";
import { db } from "../../../../server/db";
import { wordedTrpcError } from "../../../../server/trpc/init";
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

/** Calls in one batched request: the client batches what one page asks for at once, far fewer than this. */
const maxBatchSize = 50;

async function handler(request: Request): Promise<Response> {
  // Every procedure needs a session (init.ts `authed`): the session is resolved before a byte of the body is read.
  const session = await sessionUser(db, cookieValue(request.headers.get("cookie"), sessionCookie), { idleMinutes: env.SESSION_IDLE_MINUTES }).then(
    (user) => ({ user }),
    (error: unknown) => ({ refusal: wordedTrpcError(error, "session") }),
  );
  let refusal = "refusal" in session ? session.refusal : null;
  let req = request;
  if (request.method !== "GET" && request.method !== "HEAD") {
    let bytes: Uint8Array | null = null;
    if ("user" in session && session.user) {
      // The body is read under the limit and its shape bounded here; tRPC gets a request over the bytes in hand.
      const body = await readBodyLimited(request, maxBytes);
      if (!body.ok) return body.response;
      const problem = jsonShapeProblem(body.text(), { maxDepth: payloadLimits.maxDepth, maxValues: 200_000 });
      if (problem) refusal = new TRPCError({ code: "BAD_REQUEST", message: problem });
      else bytes = body.bytes;
    } else {
      // No session: tRPC answers UNAUTHORIZED in its own shape before it would read any input; nothing is read.
      await request.body?.cancel().catch(() => {});
    }
    const headers = new Headers(request.headers);
    headers.delete("content-length");
    headers.delete("transfer-encoding");
    req = new Request(request.url, { method: request.method, headers, ...(bytes ? { body: bytes as BodyInit } : {}) });
  }
  return fetchRequestHandler({
    endpoint: "/api/trpc",
    req,
    router: appRouter,
    maxBatchSize,
    createContext: async () => {
      // A lost database or a body of a shape we do not take: every call of the request answers it, in tRPC's shape.
      if (refusal) throw refusal;
      return { db, user: "user" in session ? session.user : null };
    },
  });
}

export { handler as GET, handler as POST };
