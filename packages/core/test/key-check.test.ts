import { connectAs, createTestDatabase, seenBlockedBy, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkSecretKey } from "../src/store/keys/key-check";
import { keyCheckOf } from "../src/store/keys/secret-key";

let t: TestDatabase;
let admin: Awaited<ReturnType<typeof connectAs>>;
beforeAll(async () => {
  t = await createTestDatabase();
  admin = await connectAs(t.adminUrl, new URL(t.adminUrl).username);
  // The pool has its connection before the race begins: what the test waits for is the lock, not a first connect.
  await t.db.$queryRaw`SELECT 1`;
});
afterAll(async () => {
  await admin.end();
  await t.drop();
});

/**
 * Two processes starting together on a new database: the first's insert of its key check is open (not committed)
 * while the second checks `key`; the second's insert waits on it. Returns whether the second's statement was seen
 * blocked by the first (the race this test is about, not a late arrival after the commit), and its check's outcome
 * once the first commits.
 */
async function checkBehindOpenInsert(first: Buffer, key: Buffer): Promise<{ waited: boolean; outcome: Promise<void> }> {
  const other = await connectAs(t.url, "holdfast_worker");
  try {
    await other.query("DELETE FROM deployment_settings");
    await other.query("BEGIN");
    await other.query("INSERT INTO deployment_settings (id, key_check) VALUES (1, $1)", [keyCheckOf(first)]);
    const outcome = checkSecretKey(t.db, key);
    outcome.catch(() => {});
    const waited = await seenBlockedBy(admin, other);
    await other.query("COMMIT");
    await outcome.catch(() => {});
    return { waited, outcome };
  } finally {
    await other.end();
  }
}

describe("the secret key check at start-up", () => {
  it("processes started together on a new database all pass: the one that waited on the first's insert reads its row", async () => {
    const key = Buffer.alloc(32, 5);
    const { waited, outcome } = await checkBehindOpenInsert(key, key);
    expect(waited).toBe(true);
    await expect(outcome).resolves.toBeUndefined();
  });

  it("a process with another key is refused, also when it waited on the first's insert", async () => {
    const { waited, outcome } = await checkBehindOpenInsert(Buffer.alloc(32, 6), Buffer.alloc(32, 7));
    expect(waited).toBe(true);
    await expect(outcome).rejects.toThrow(/not the one this database's secrets were encrypted with/);
  });
});
