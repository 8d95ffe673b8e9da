import { describeFailure } from "@holdfast/core/run";
import { createDb, type Db, inTx } from "@holdfast/db";
import { createTestDatabase, type TestDatabase } from "@holdfast/testkit";
import { createTRPCClient, httpBatchLink, TRPCClientError } from "@trpc/client";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import superjson from "superjson";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { authed, router } from "../src/server/trpc/init";
import { unreachableSentence, wordsLink } from "../src/server/trpc/words-link";

/**
 * No library or database text on any page (issue 41, item 6): real failures of each class, produced against the real
 * PostgreSQL, go through tRPC's whole path (middleware, error formatter, HTTP) and come out as a sentence with a code
 * the client can act on. Saturation (53300), a refused connection and a statement timeout read "Holdfast is busy" with
 * SERVICE_UNAVAILABLE (503: the client retries); a unique violation is CONFLICT; an input error names its field;
 * anything else is a generic sentence with a reference id.
 */
let t: TestDatabase;
let orgId = "";
const rawText = /prisma|postgres|sqlstate|53300|57014|23505|ECONN|too many|statement timeout|duplicate key|syntax error|invocation|stack|\bat \w+ \(/i;

/** Each failure the procedure below produces, for real. */
const failures: Record<string, () => Promise<unknown>> = {
  // The database's connection slots are all taken for this role: PostgreSQL refuses a new connection (53300).
  saturated: async () => {
    const fresh: Db = createDb(t.url, { poolSize: 1 });
    try {
      return await fresh.$queryRawUnsafe("SELECT 1");
    } finally {
      await fresh.$disconnect();
    }
  },
  // Nothing listens there.
  refused: async () => {
    const nowhere: Db = createDb("postgresql://holdfast_web@127.0.0.1:1/nowhere", { poolSize: 1 });
    try {
      return await nowhere.$queryRawUnsafe("SELECT 1");
    } finally {
      await nowhere.$disconnect();
    }
  },
  // A query that outlives its statement_timeout (57014).
  timeout: () =>
    inTx(t.db, async (tx) => {
      await tx.$executeRawUnsafe("SET LOCAL statement_timeout = 50");
      return tx.$queryRawUnsafe("SELECT pg_sleep(2)");
    }),
  // The same organisation slug twice (23505 through Prisma: P2002).
  unique: () => t.db.organisation.create({ data: { slug: "acme", name: "Acme again" } }),
  // A query the database cannot parse: nothing a person can do about it.
  unknown: () => t.db.$queryRawUnsafe("SELEC 1"),
};

const testRouter = router({
  fail: authed
    .input(z.object({ what: z.enum(Object.keys(failures) as [string, ...string[]]), maxSteps: z.number().int().min(1, "at least 1 step").optional() }))
    .mutation(({ input }) => failures[input.what]!()),
});

async function call(input: unknown): Promise<{ status: number; code: string; message: string; body: string }> {
  const response = await fetchRequestHandler({
    endpoint: "/api/trpc",
    req: new Request("http://localhost/api/trpc/fail", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ json: input }) }),
    router: testRouter,
    createContext: async () => ({ db: t.db, user: { id: "usr_1", email: "sam@acme.test", name: "Sam", memberships: [] } as never }),
  });
  const body = await response.text();
  const error = JSON.parse(body).error.json;
  return { status: response.status, code: error.data.code, message: error.message, body };
}

beforeAll(async () => {
  t = await createTestDatabase();
  orgId = (await t.sql.query("INSERT INTO organisations (slug, name) VALUES ('acme', 'Acme') RETURNING id")).rows[0].id;
});
afterAll(async () => {
  await t.sql.query(`ALTER DATABASE ${t.name} CONNECTION LIMIT -1`).catch(() => {});
  await t?.drop();
});

describe("every tRPC failure reads as a sentence", () => {
  it("no free connection slot (53300): busy, SERVICE_UNAVAILABLE", async () => {
    const admin = createDb(t.adminUrl, { poolSize: 1 });
    await admin.$executeRawUnsafe(`ALTER DATABASE ${t.name} CONNECTION LIMIT 0`);
    try {
      const raw = await failures.saturated!().then(
        () => null,
        (e: unknown) => e,
      );
      expect(String((raw as Error)?.message ?? raw)).toMatch(/too many connections/); // the real thing
      expect(describeFailure(raw).kind).toBe("busy");
      const answer = await call({ what: "saturated" });
      expect(answer).toMatchObject({ status: 503, code: "SERVICE_UNAVAILABLE", message: "Holdfast is busy; your change is kept and will be saved. Try again in a moment." });
      expect(answer.body).not.toMatch(rawText);
    } finally {
      await admin.$executeRawUnsafe(`ALTER DATABASE ${t.name} CONNECTION LIMIT -1`);
      await admin.$disconnect();
    }
  });

  it("a refused connection: busy, SERVICE_UNAVAILABLE", async () => {
    const answer = await call({ what: "refused" });
    expect(answer).toMatchObject({ status: 503, code: "SERVICE_UNAVAILABLE", message: "Holdfast is busy; your change is kept and will be saved. Try again in a moment." });
    expect(answer.body).not.toMatch(rawText);
  });

  it("a statement timeout (57014): busy, SERVICE_UNAVAILABLE", async () => {
    const raw = await failures.timeout!().then(
      () => null,
      (e: unknown) => e,
    );
    expect(String((raw as Error)?.message)).toMatch(/statement timeout/);
    const answer = await call({ what: "timeout" });
    expect(answer).toMatchObject({ status: 503, code: "SERVICE_UNAVAILABLE", message: "Holdfast is busy; your change is kept and will be saved. Try again in a moment." });
    expect(answer.body).not.toMatch(rawText);
  });

  it("a unique violation (23505): CONFLICT in words", async () => {
    const answer = await call({ what: "unique" });
    expect(answer).toMatchObject({ status: 409, code: "CONFLICT" });
    expect(answer.message).toMatch(/^This was already saved/);
    expect(answer.body).not.toMatch(rawText);
  });

  it("an input that fails validation names the field", async () => {
    const answer = await call({ what: "unique", maxSteps: 0 });
    expect(answer).toMatchObject({ status: 400, code: "BAD_REQUEST", message: "Check max steps: at least 1 step." });
  });

  it("anything else: a generic sentence with a reference id", async () => {
    const answer = await call({ what: "unknown" });
    expect(answer).toMatchObject({ status: 500, code: "INTERNAL_SERVER_ERROR" });
    expect(answer.message).toMatch(/^Something went wrong on Holdfast's side and nothing was changed\. Try again; if it keeps happening, give your administrator the reference [0-9a-f]{8}\.$/);
    expect(answer.body).not.toMatch(rawText);
    expect(orgId).not.toBe("");
  });
});

describe("the browser's client puts a call with no answer in words", () => {
  const client = (fetcher: (url: string, init: RequestInit) => Promise<Response>) =>
    createTRPCClient<typeof testRouter>({
      links: [wordsLink as never, httpBatchLink({ url: "http://127.0.0.1:1/api/trpc", transformer: superjson, fetch: fetcher as never })],
    });
  const failureOf = (c: ReturnType<typeof client>, input: { what: string; maxSteps?: number }) =>
    c.fail.mutate(input).then(
      () => null,
      (e: unknown) => e as TRPCClientError<typeof testRouter>,
    );

  it("nothing listens (the browser's fetch fails): a sentence and SERVICE_UNAVAILABLE", async () => {
    const e = await failureOf(client((url, init) => fetch(url, init)), { what: "unique" });
    expect(e).toBeInstanceOf(TRPCClientError);
    expect(e?.message).toBe(unreachableSentence);
    expect(e?.data?.code).toBe("SERVICE_UNAVAILABLE");
  });

  it("a proxy's HTML error page: the same sentence, not the parser's message", async () => {
    const e = await failureOf(client(async () => new Response("<html><body>502 Bad Gateway</body></html>", { status: 502, headers: { "content-type": "text/html" } })), { what: "unique" });
    expect(e?.message).toBe(unreachableSentence);
  });

  it("an answer in tRPC's shape passes as it is", async () => {
    const handler = (url: string, init: RequestInit) =>
      fetchRequestHandler({
        endpoint: "/api/trpc",
        req: new Request(url, init),
        router: testRouter,
        createContext: async () => ({ db: t.db, user: { id: "usr_1", email: "sam@acme.test", name: "Sam", memberships: [] } as never }),
      });
    const e = await failureOf(client(handler), { what: "unique", maxSteps: 0 });
    expect(e?.message).toBe("Check max steps: at least 1 step.");
    expect(e?.data?.code).toBe("BAD_REQUEST");
  });
});

describe("the detailed readiness (/api/health with the metrics token) says why it is not ready in words", () => {
  it("a database that refuses the connection is named with what to check; any other failure is a sentence with a reference", async () => {
    const { notReadyBecause } = await import("../src/server/not-ready");
    for (const what of ["refused"] as const) {
      const error = await failures[what]!().then(
        () => null,
        (e: unknown) => e,
      );
      expect(error, what).not.toBeNull();
      const said = notReadyBecause(error);
      expect(said.error, what).toMatch(/^PostgreSQL does not answer this process: check that it runs/);
      // The product's own name for the database is the sentence's subject; no driver text beside it.
      expect(said.error.replace(/^PostgreSQL /, ""), what).not.toMatch(rawText);
    }
    const other = notReadyBecause(await failures.unknown!().catch((e: unknown) => e));
    expect(other.error).toMatch(/^Something went wrong on Holdfast's side/);
    expect(other.reference).toMatch(/^[0-9a-f]{8}$/);
    expect(other.error).not.toMatch(rawText);
  });
});
