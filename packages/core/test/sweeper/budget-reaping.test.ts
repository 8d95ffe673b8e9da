import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { budgetsOf, budgetsReserve, budgetsSetAllowed } from "../../src/store/sql/budgets";
import { budgetReaping } from "../../src/run/sweeper/services";
import { type Bed, sweeperBed } from "./bed";

let bed: Bed;
beforeAll(async () => {
  bed = await sweeperBed();
  await budgetsSetAllowed(bed.t.db, bed.orgId, 5_000_000, "test");
});
afterAll(() => bed?.drop());

describe("budget-reaping", () => {
  it("counts a reservation whose worker died mid-call as spent once it is older than afterSeconds; a young one stays reserved", async () => {
    const before = await budgetsOf(bed.t.db, bed.orgId);
    await budgetsReserve(bed.t.db, bed.orgId, "run_x/draft/1", "stp_dead:1", 1234);
    await budgetsReserve(bed.t.db, bed.orgId, "run_y/draft/1", "stp_busy:1", 100);
    const service = budgetReaping.make({ afterSeconds: 600 });
    expect(await service.runOnce(bed.ctx)).toEqual({ settled: 0 }); // both too young to call abandoned

    await bed.rows("UPDATE budget_reservations SET created_at = now() - interval '11 minutes' WHERE owner = 'stp_dead:1'");
    expect(await service.runOnce(bed.ctx)).toEqual({ settled: 1 });
    const after = await budgetsOf(bed.t.db, bed.orgId);
    expect(after?.spentMicros).toBe((before?.spentMicros ?? 0) + 1234);
    expect(after?.reservedMicros).toBe((before?.reservedMicros ?? 0) + 100);
    expect(await bed.rows("SELECT owner FROM budget_reservations WHERE settled_at IS NULL")).toEqual([{ owner: "stp_busy:1" }]);
    expect(await service.runOnce(bed.ctx)).toEqual({ settled: 0 });
  });
});
