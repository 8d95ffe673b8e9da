import { startSmtpTarget, type SmtpTarget } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createConnection } from "../../src/providers/connections/connect";
import { connectionProbes } from "../../src/run/sweeper/services";
import { type Bed, sweeperBed } from "./bed";

let bed: Bed;
let healthy: SmtpTarget;
let revoked: SmtpTarget;
beforeAll(async () => {
  bed = await sweeperBed();
  healthy = await startSmtpTarget();
  revoked = await startSmtpTarget({ credentials: { user: "sam", pass: "the new password" } });
});
afterAll(async () => {
  await healthy?.close();
  await revoked?.close();
  await bed?.drop();
});

const smtp = (name: string, port: number, secret: string | null = null) =>
  createConnection(bed.t.db, {
    orgId: bed.orgId,
    kind: "smtp",
    name,
    config: { host: "127.0.0.1", port, tls: "none", from: "sam@acme.test", ...(secret ? { user: "sam" } : {}) },
    secret,
  });

describe("connection-probes", () => {
  it("logs into each connection not checked lately, without sending: a refused login is marked, a working one stamped", async () => {
    const ok = await smtp("healthy", healthy.port);
    const refused = await smtp("revoked", revoked.port, "the old password");
    const service = connectionProbes.make({ staleSeconds: 300, batch: 5 });

    expect(await service.runOnce(bed.ctx)).toEqual({ ok: 1, needsReconnect: 1, unreachable: 0 });
    expect(await bed.rows("SELECT name, status, checked_at IS NOT NULL AS checked FROM connections WHERE id = ANY($1) ORDER BY name", [[ok, refused]])).toEqual([
      { name: "healthy", status: "ok", checked: true },
      { name: "revoked", status: "needs_reconnect", checked: expect.any(Boolean) },
    ]);
    expect(healthy.received).toHaveLength(0); // logged in, nothing sent
    // Checked within the interval: the healthy one is not probed again.
    expect((await service.runOnce(bed.ctx)).ok).toBe(0);
    await bed.rows("UPDATE connections SET checked_at = now() - interval '301 seconds' WHERE id = $1", [ok]);
    expect((await service.runOnce(bed.ctx)).ok).toBe(1);
  });

  it("probes at most a batch, oldest first; CONNECTION_PROBE_SECONDS=0 turns it off", async () => {
    await bed.rows("DELETE FROM connections");
    const first = await smtp("first", healthy.port);
    const second = await smtp("second", healthy.port);
    await bed.rows("UPDATE connections SET checked_at = now() - interval '1 hour' WHERE id = $1", [first]);
    await bed.rows("UPDATE connections SET checked_at = now() - interval '2 hours' WHERE id = $1", [second]);

    expect(await connectionProbes.make({ staleSeconds: 0 }).runOnce(bed.ctx)).toEqual({ ok: 0, needsReconnect: 0, unreachable: 0 });
    expect(await connectionProbes.make({ staleSeconds: 300, batch: 1 }).runOnce(bed.ctx)).toEqual({ ok: 1, needsReconnect: 0, unreachable: 0 });
    const [row] = await bed.rows("SELECT id FROM connections WHERE checked_at > now() - interval '1 minute'");
    expect(row?.id).toBe(second);
  });
});
