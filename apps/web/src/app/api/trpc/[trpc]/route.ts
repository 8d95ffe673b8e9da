import { sessionCookie, sessionUser } from "@holdfast/core";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { db } from "../../../../server/db";
import { appRouter } from "../../../../server/trpc/router";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

function cookieValue(header: string | null, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return decodeURIComponent(v.join("="));
  }
  return undefined;
}

const handler = (request: Request) =>
  fetchRequestHandler({
    endpoint: "/api/trpc",
    req: request,
    router: appRouter,
    createContext: async () => ({ db, user: await sessionUser(db, cookieValue(request.headers.get("cookie"), sessionCookie)) }),
  });

export { handler as GET, handler as POST };
