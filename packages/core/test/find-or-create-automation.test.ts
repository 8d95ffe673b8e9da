import { connectAs, createTestDatabase, seenBlockedBy, type TestDatabase } from "@holdfast/testkit";
import { inTx } from "@holdfast/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findOrCreateAutomation } from "../src/versions/triggers/credentials";

let t: TestDatabase;
let admin: Awaited<ReturnType<typeof connectAs>>;
let orgId: string;
beforeAll(async () => {
  t = await createTestDatabase();
  admin = await connectAs(t.adminUrl, new URL(t.adminUrl).username);
  orgId = (await t.sql.query("INSERT INTO organisations (slug, name) VALUES ('acme', 'Acme') RETURNING id")).rows[0].id;
  // The pool has its connection before the race begins: what the test waits for is the lock, not a first connect.
  await t.db.$queryRaw`SELECT 1`;
});
afterAll(async () => {
  await admin.end();
  await t.drop();
});

describe("findOrCreateAutomation (seed and `automations publish` with a new slug)", () => {
  it("finds an existing automation and leaves it as it is", async () => {
    const first = await inTx(t.db, (tx) => findOrCreateAutomation(tx, { orgId, slug: "welcome", name: "Welcome" }));
    const again = await inTx(t.db, (tx) => findOrCreateAutomation(tx, { orgId, slug: "welcome", name: "Another name", triggerAuth: "url_token" }));
    expect(again.id).toBe(first.id);
    const { rows } = await t.sql.query("SELECT name, trigger_auth FROM automations WHERE id = $1", [first.id]);
    expect(rows).toEqual([{ name: "Welcome", trigger_auth: "signed" }]);
    const creds = await t.sql.query("SELECT kind FROM trigger_credentials WHERE automation_id = $1 ORDER BY kind", [first.id]);
    expect(creds.rows.map((r) => r.kind)).toEqual(["signing_secret", "url_token"]);
  });

  it("two creating the same new slug at once both get the one automation: the second waited on the first's insert", async () => {
    const other = await connectAs(t.adminUrl, new URL(t.adminUrl).username);
    try {
      await other.query("BEGIN");
      const { rows } = await other.query("INSERT INTO automations (org_id, slug, name, trigger_auth) VALUES ($1, 'raced', 'Raced', 'signed') RETURNING id", [orgId]);
      const second = inTx(t.db, (tx) => findOrCreateAutomation(tx, { orgId, slug: "raced", name: "Raced too" }));
      second.catch(() => {});
      expect(await seenBlockedBy(admin, other)).toBe(true);
      await other.query("COMMIT");
      expect((await second).id).toBe(rows[0].id);
    } finally {
      await other.end();
    }
    const { rows } = await t.sql.query("SELECT count(*)::int AS n FROM automations WHERE org_id = $1 AND slug = 'raced'", [orgId]);
    expect(rows[0].n).toBe(1);
  });
});
