import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outboxRetention } from "../../src/run/sweeper/services";
import { type Bed, sweeperBed } from "./bed";

let bed: Bed;
beforeAll(async () => {
  bed = await sweeperBed();
});
afterAll(() => bed?.drop());

describe("outbox-retention", () => {
  it("deletes sent rows older than the retention, in batches; recent and unsent rows stay", async () => {
    const old = [await bed.start("call"), await bed.start("call"), await bed.start("call")];
    const recent = await bed.start("call");
    await bed.sendOutbox();
    const unsent = await bed.start("call");
    // Written and sent two hours ago (a row is sent after it is written).
    await bed.rows("UPDATE outbox SET created_at = now() - interval '2 hours', sent_at = now() - interval '2 hours' WHERE run_id = ANY($1)", [old.map((r) => r.runId)]);
    const count = async (runIds: string[]) => (await bed.rows("SELECT count(*)::int AS n FROM outbox WHERE run_id = ANY($1)", [runIds]))[0]?.n as number;
    const perRun = await count([recent.runId]);
    expect(perRun).toBeGreaterThan(0);

    const service = outboxRetention.make({ retentionSeconds: 3600, batch: 2 });
    expect(await service.runOnce(bed.ctx)).toEqual({ deleted: 2 });
    expect(await outboxRetention.make({ retentionSeconds: 3600, batch: 100 }).runOnce(bed.ctx)).toEqual({ deleted: 3 * perRun - 2 });
    expect(await count(old.map((r) => r.runId))).toBe(0);
    expect(await count([recent.runId])).toBe(perRun);
    expect(await count([unsent.runId])).toBe(perRun);
    expect(await service.runOnce(bed.ctx)).toEqual({ deleted: 0 });
  });
});
