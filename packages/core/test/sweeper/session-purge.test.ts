import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signIn } from "../../src/people/auth/sessions";
import { upsertMember } from "../../src/people/auth/users";
import { sessionPurge } from "../../src/run/sweeper/services";
import { type Bed, sweeperBed } from "./bed";

let bed: Bed;
const pw = "a long enough password";
beforeAll(async () => {
  bed = await sweeperBed();
  await upsertMember(bed.t.db, { orgId: bed.orgId, email: "sam@acme.test", name: "Sam", password: pw, role: "owner" });
});
afterAll(() => bed?.drop());

const idOf = async (token: string | undefined) => (await bed.rows("SELECT encode(sha256($1::bytea), 'hex') AS h", [token ?? ""]))[0]?.h as string;

describe("session-purge", () => {
  it("deletes sessions past their absolute or idle expiry, in batches; a live session stays", async () => {
    const live = await signIn(bed.t.db, "sam@acme.test", pw);
    const expired = [];
    for (let i = 0; i < 3; i++) expired.push(await idOf((await signIn(bed.t.db, "sam@acme.test", pw))?.token));
    await bed.rows("UPDATE sessions SET idle_expires_at = now() - interval '1 minute' WHERE id = $1", [expired[0]]);
    await bed.rows("UPDATE sessions SET expires_at = now() - interval '1 minute' WHERE id = ANY($1)", [expired.slice(1)]);

    const service = sessionPurge.make({ batch: 2 });
    expect(await service.runOnce(bed.ctx)).toEqual({ purged: 2 });
    expect(await service.runOnce(bed.ctx)).toEqual({ purged: 1 });
    expect(await service.runOnce(bed.ctx)).toEqual({ purged: 0 });
    expect(await bed.rows("SELECT id FROM sessions")).toEqual([{ id: await idOf(live?.token) }]);
  });
});
