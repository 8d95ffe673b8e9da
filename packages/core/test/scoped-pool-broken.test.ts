import { createServer, type Server, Socket } from "node:net";
import { createDb, type Db, sqlOf } from "@holdfast/db";
import { createTestDatabase, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * The web's scoped pool (packages/db/src/scope.ts) when the connection breaks under a statement (the database
 * restarted, a proxy or a load balancer cut it): the statement fails, and the broken client's own 'error' event is
 * not an uncaught exception that ends the web process (a checked-out client has no listener of pg-pool's).
 */
let t: TestDatabase;
let proxy: Server;
const sockets = new Set<Socket>();

beforeAll(async () => {
  t = await createTestDatabase();
  const database = new URL(t.url);
  proxy = createServer((inbound) => {
    const outbound = new Socket();
    outbound.connect(Number(database.port || 5432), database.hostname);
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on("error", () => {});
      s.on("close", () => sockets.delete(s));
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
});

afterAll(async () => {
  proxy?.close();
  await t?.drop();
});

const cutEverything = () => {
  for (const s of sockets) s.resetAndDestroy();
};

describe("a scoped pool whose connection is cut under a statement", () => {
  it("fails the statement, single or in a transaction-mode wrapper, and throws nothing uncaught", async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on("uncaughtException", onUncaught);
    try {
      const port = (proxy.address() as { port: number }).port;
      const through = new URL(t.url);
      through.host = `127.0.0.1:${port}`;
      const url = through.toString();
      for (const poolMode of ["session", "transaction"] as const) {
        const db: Db = createDb(url, { poolSize: 2, scope: async () => ({ orgIds: ["org-x"] }), poolMode, applicationName: "scope-cut-test" });
        try {
          // A statement that holds its connection until the cut.
          const slow = sqlOf(db).query({ text: "SELECT pg_sleep(10)" });
          await new Promise((r) => setTimeout(r, 300));
          cutEverything();
          await expect(slow).rejects.toThrow();
          await new Promise((r) => setTimeout(r, 200));
          // The pool is still usable: a new connection answers.
          expect((await sqlOf(db).query<{ one: number }>({ text: "SELECT 1 AS one" })).rows).toEqual([{ one: 1 }]);
        } finally {
          await db.$disconnect();
        }
      }
      expect(uncaught).toEqual([]);
    } finally {
      process.off("uncaughtException", onUncaught);
    }
  });
});
