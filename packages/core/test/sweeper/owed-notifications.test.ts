import { approvalGraph, publish, startTestRun } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { upsertMember } from "../../src/people/auth/users";
import { advanceRun } from "../../src/run/engine/advance";
import { owedNotifications } from "../../src/run/sweeper/services";
import { type Bed, sweeperBed } from "./bed";

let bed: Bed;
beforeAll(async () => {
  bed = await sweeperBed();
  await publish(bed.t.db, approvalGraph(), { automation: "review" });
  await upsertMember(bed.t.db, { orgId: bed.orgId, email: "sam@acme.test", name: "Sam", password: null, role: "approver" });
});
afterAll(() => bed?.drop());

let n = 0;
/** A pending approval whose Slack post is owed (`state`) since `secondsAgo`, its earlier wake-ups delivered. */
async function owed(state: "post" | "update" | "done", secondsAgo: number) {
  const runId = await startTestRun(bed.t.db, "review", { id: `a_${++n}`, email: "maya@example.com", draft: "Hi" });
  await advanceRun(bed.t.db, bed.ctx.graphs, { orgId: bed.orgId, runId, reason: "started" });
  const [a] = await bed.rows("SELECT id FROM approvals WHERE run_id = $1", [runId]);
  await bed.rows("UPDATE approvals SET notify_state = $2, updated_at = now() - make_interval(secs => $3) WHERE id = $1", [a?.id, state, secondsAgo]);
  await bed.sendOutbox();
  return a?.id as string;
}

const wakes = () => bed.rows("SELECT payload->>'approvalId' AS approval FROM outbox WHERE topic = 'approval.notify' AND sent_at IS NULL ORDER BY id");

describe("owed-notifications", () => {
  it("wakes the notifier again for each approval whose Slack post or update is owed and untaken; not while one is pending", async () => {
    const post = await owed("post", 60);
    const update = await owed("update", 60);
    await owed("done", 60); // nothing owed
    await owed("post", 0); // just written: its own wake-up is on its way
    const service = owedNotifications.make({ batch: 10, leaseSeconds: 30 });

    expect(await service.runOnce(bed.ctx)).toEqual({ rewoken: 2 });
    expect((await wakes()).map((w) => w.approval).sort()).toEqual([post, update].sort());
    expect(await service.runOnce(bed.ctx)).toEqual({ rewoken: 0 }); // their wake-ups are pending
  });

  it("leaves an attempt alone inside the notifier's lease", async () => {
    await bed.rows("UPDATE approvals SET notify_state = 'done'");
    const taken = await owed("post", 60);
    await bed.rows("UPDATE approvals SET notify_attempted_at = now() WHERE id = $1", [taken]);
    expect(await owedNotifications.make({ leaseSeconds: 30 }).runOnce(bed.ctx)).toEqual({ rewoken: 0 });
    await bed.rows("UPDATE approvals SET notify_attempted_at = now() - interval '31 seconds' WHERE id = $1", [taken]);
    expect(await owedNotifications.make({ leaseSeconds: 30 }).runOnce(bed.ctx)).toEqual({ rewoken: 1 });
    expect(await wakes()).toEqual([{ approval: taken }]);
  });
});
