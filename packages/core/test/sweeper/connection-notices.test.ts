import { startSmtpTarget } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { upsertMember } from "../../src/people/auth/users";
import { createConnection } from "../../src/providers/connections/connect";
import { parseAllowList } from "../../src/base/allow-list";
import { connectionNotices } from "../../src/run/sweeper/services";
import { type Bed, sweeperBed } from "./bed";

let bed: Bed;
let connectionId: string;
beforeAll(async () => {
  bed = await sweeperBed();
  await upsertMember(bed.t.db, { orgId: bed.orgId, email: "owner@acme.test", name: "Owner", password: null, role: "owner" });
  connectionId = await createConnection(bed.t.db, {
    orgId: bed.orgId,
    kind: "smtp",
    name: "mailbox",
    config: { host: "127.0.0.1", port: 2525, from: "a@acme.test" },
    secret: null,
  });
});
afterAll(() => bed?.drop());

/** The connection breaks again (a new break, a new notice owed). */
const breakIt = async (reason: string) => {
  await bed.rows("UPDATE connections SET status = 'ok', status_reason = NULL WHERE id = $1", [connectionId]);
  await bed.rows("UPDATE connections SET status = 'needs_reconnect', status_reason = $2 WHERE id = $1", [connectionId, reason]);
};

describe("connection-notices", () => {
  it("emails the owners once per break through the system mailbox", async () => {
    const smtp = await startSmtpTarget();
    try {
      await breakIt("the mailbox refused our login");
      const ctx = {
        ...bed.ctx,
        systemMail: { url: `smtp+plain://127.0.0.1:${smtp.port}`, from: "ops@holdfast.test" },
        egress: { allow: parseAllowList(`127.0.0.1:${smtp.port}`) },
      };
      const service = connectionNotices.make();
      expect(await service.runOnce(ctx)).toEqual({ sent: 1, skipped: 0, failed: 0, retrying: 0 });
      expect(smtp.received.map((m) => m.to)).toEqual([["owner@acme.test"]]);
      expect(await bed.rows("SELECT break_no, email_status, email_to FROM connection_notices WHERE connection_id = $1", [connectionId])).toEqual([
        { break_no: 1, email_status: "sent", email_to: ["owner@acme.test"] },
      ]);
      expect(await service.runOnce(ctx)).toEqual({ sent: 0, skipped: 0, failed: 0, retrying: 0 });
    } finally {
      await smtp.close();
    }
  });

  it("without a system mailbox marks the notice skipped, saying why; a mailbox that does not answer is retried up to maxAttempts", async () => {
    await breakIt("second break");
    expect(await connectionNotices.make().runOnce(bed.ctx)).toEqual({ sent: 0, skipped: 1, failed: 0, retrying: 0 });
    const [skipped] = await bed.rows("SELECT email_status, email_error FROM connection_notices WHERE break_no = 2");
    expect(skipped?.email_status).toBe("skipped");
    expect(skipped?.email_error).toContain("HOLDFAST_SYSTEM_SMTP_URL");

    await breakIt("third break");
    const down = { ...bed.ctx, systemMail: { url: "smtp+plain://127.0.0.1:9", from: "ops@holdfast.test" } };
    const service = connectionNotices.make({ maxAttempts: 2, leaseSeconds: 5 });
    expect(await service.runOnce(down)).toEqual({ sent: 0, skipped: 0, failed: 0, retrying: 1 });
    await bed.rows("UPDATE connection_notices SET email_claimed_until = now() - interval '1 second' WHERE break_no = 3");
    expect(await service.runOnce(down)).toEqual({ sent: 0, skipped: 0, failed: 1, retrying: 0 });
    expect(await bed.rows("SELECT email_status, email_attempts FROM connection_notices WHERE break_no = 3")).toEqual([{ email_status: "failed", email_attempts: 2 }]);
  });
});
