import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { throttlePurge } from "../../src/run/sweeper/services";
import { type Bed, sweeperBed } from "./bed";

let bed: Bed;
beforeAll(async () => {
  bed = await sweeperBed();
});
afterAll(() => bed?.drop());

describe("throttle-purge", () => {
  it("deletes sign-in counters an hour after they lapsed, in batches; recently lapsed and live ones stay", async () => {
    // `expire` is epoch milliseconds (rate-limiter-flexible's column), written here from the database clock.
    await bed.rows(
      `INSERT INTO signin_throttle (key, points, expire) VALUES
         ('account:old1', 5, (extract(epoch FROM now() - interval '2 hours') * 1000)::bigint),
         ('account:old2', 5, (extract(epoch FROM now() - interval '3 hours') * 1000)::bigint),
         ('address:old3', 5, (extract(epoch FROM now() - interval '61 minutes') * 1000)::bigint),
         ('account:recent', 5, (extract(epoch FROM now() - interval '10 minutes') * 1000)::bigint),
         ('account:live', 5, (extract(epoch FROM now() + interval '10 minutes') * 1000)::bigint)`,
    );
    const service = throttlePurge.make({ batch: 2 });
    expect(await service.runOnce(bed.ctx)).toEqual({ purged: 2 });
    expect(await service.runOnce(bed.ctx)).toEqual({ purged: 1 });
    expect(await service.runOnce(bed.ctx)).toEqual({ purged: 0 });
    expect((await bed.rows("SELECT key FROM signin_throttle ORDER BY key")).map((r) => r.key)).toEqual(["account:live", "account:recent"]);
  });
});
