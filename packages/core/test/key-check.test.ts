import { connectAs, createTestDatabase, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkSecretKey } from "../src/keys/key-check";
import { keyCheckOf } from "../src/keys/secret-key";

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t.drop());

describe("the secret key check at start-up", () => {
  it("processes started together on a new database all pass: the one that waited on the first's insert reads its row", async () => {
    const key = Buffer.alloc(32, 5);
    const first = await connectAs(t.url, "holdfast_worker");
    try {
      await first.query("DELETE FROM deployment_settings");
      // The first process's insert, not yet committed: the second's insert waits on it.
      await first.query("BEGIN");
      await first.query("INSERT INTO deployment_settings (id, key_check) VALUES (1, $1)", [keyCheckOf(key)]);
      const second = checkSecretKey(t.db, key);
      const waited = await Promise.race([second.then(() => "returned"), new Promise((r) => setTimeout(() => r("waiting"), 300))]);
      expect(waited).toBe("waiting");
      await first.query("COMMIT");
      await expect(second).resolves.toBeUndefined();
    } finally {
      await first.end();
    }
  });

  it("a process with another key is refused, also when it waited on the first's insert", async () => {
    const key = Buffer.alloc(32, 6);
    const first = await connectAs(t.url, "holdfast_worker");
    try {
      await first.query("DELETE FROM deployment_settings");
      await first.query("BEGIN");
      await first.query("INSERT INTO deployment_settings (id, key_check) VALUES (1, $1)", [keyCheckOf(key)]);
      const second = checkSecretKey(t.db, Buffer.alloc(32, 7));
      second.catch(() => {});
      await new Promise((r) => setTimeout(r, 300));
      await first.query("COMMIT");
      await expect(second).rejects.toThrow(/not the one this database's secrets were encrypted with/);
    } finally {
      await first.end();
    }
  });
});
