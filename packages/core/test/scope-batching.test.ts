import { AsyncLocalStorage } from "node:async_hooks";
import { createDb, type DbScope, urlAsRole } from "@holdfast/db";
import { createTestDatabase, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, expect, it } from "vitest";

/**
 * Prisma batches findUnique calls of one shape made in the same tick into one query, sent from the first caller's
 * async context. The web's pool reads the row-level security scope from the asking request's context when it hands
 * out a connection, so two requests resuming together would read under the first one's scope: Y's request would get
 * X's row. Core's table modules (the only Prisma callers: the apps make no model call) therefore use findFirst, which
 * is never batched; architecture.test.ts holds that no findUnique is written.
 */
let t: TestDatabase;
const ids = { x1: "", x2: "" };
let orgX = "";
let orgY = "";

beforeAll(async () => {
  t = await createTestDatabase();
  const org = async (slug: string) => (await t.sql.query<{ id: string }>("INSERT INTO organisations (slug, name) VALUES ($1, $1) RETURNING id", [slug])).rows[0]?.id as string;
  orgX = await org("batch-x");
  orgY = await org("batch-y");
  const aut = async (o: string, slug: string) =>
    (await t.sql.query<{ id: string }>("INSERT INTO automations (org_id, slug, name) VALUES ($1, $2, $2) RETURNING id", [o, slug])).rows[0]?.id as string;
  ids.x1 = await aut(orgX, "one");
  ids.x2 = await aut(orgX, "two");
});

afterAll(async () => {
  await t?.drop();
});

async function sameTick(find: (id: string) => Promise<{ id: string } | null>): Promise<{ mine: string | undefined; theirs: string | undefined }[]> {
  const rounds = [];
  for (let round = 0; round < 5; round++) {
    let go: () => void = () => {};
    const gate = new Promise<void>((r) => (go = r));
    // A member of X asks for x1; a member of Y asks for x2 (X's), resuming in the same tick as the first.
    const member = scopes.run({ orgIds: [orgX] }, async () => {
      await gate;
      return find(ids.x1);
    });
    const outsider = scopes.run({ orgIds: [orgY] }, async () => {
      await gate;
      return find(ids.x2);
    });
    go();
    const [mine, theirs] = await Promise.all([member, outsider]);
    rounds.push({ mine: mine?.id, theirs: theirs?.id });
  }
  return rounds;
}

const scopes = new AsyncLocalStorage<DbScope>();
const webDb = () => createDb(urlAsRole(t.url, "holdfast_web"), { poolSize: 4, scope: async () => scopes.getStore() ?? {}, applicationName: "batch-test" });

it("findFirst calls of two requests in the same tick each run under their own scope (what core's table modules use)", async () => {
  const db = webDb();
  try {
    const rounds = await sameTick((id) => db.automation.findFirst({ where: { id } }));
    expect(rounds).toEqual(Array.from({ length: 5 }, () => ({ mine: ids.x1, theirs: undefined })));
  } finally {
    await db.$disconnect();
  }
});

it("why core never calls findUnique (architecture.test.ts): Prisma batches them across requests, under the first one's scope", async () => {
  const db = webDb();
  try {
    // If this stops holding (Prisma no longer batches across async contexts), the rule may go.
    const rounds = await sameTick((id) => db.automation.findUnique({ where: { id } }));
    expect(rounds.some((r) => r.theirs === ids.x2)).toBe(true);
  } finally {
    await db.$disconnect();
  }
});
