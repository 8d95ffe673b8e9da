import { createTestDatabase, publish, startSmtpTarget, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { upsertMember } from "../src/people/auth/users";
import { createConnection } from "../src/providers/connections/connect";
import { sendConnectionNoticesOnce } from "../src/providers/connections/notices";
import { probeConnection } from "../src/providers/connections/probe";
import { connectionsByName } from "../src/store/sql/connections";
import { setContactZone } from "../src/run/timers/contact-zone";
import { advanceRun } from "../src/run/engine/advance";
import { parseAllowList } from "../src/base/allow-list";
import { startRun } from "../src/run/start/start-run";
import { noticesOpenForOrgs } from "../src/store/sql/connection-notices";
import { parseGraph } from "../src/versions/graph";
import { GraphCache } from "../src/versions/graph-cache";

let t: TestDatabase;
let orgId: string;
const graphs = new GraphCache();
const rows = async (q: string, p: unknown[] = []) => (await t.sql.query(q, p)).rows;

function waitGraph(wait: Record<string, unknown>) {
  return parseGraph({
    nodes: [
      { id: "form", kind: "trigger", config: { eventIdField: "id", contactEmailField: "email", contactTimeZoneField: "tz" } },
      { id: "monday", kind: "wait", config: { rule: { kind: "next_weekday", at: "09:00" }, spreadSeconds: 0, ...wait } },
      { id: "done", kind: "end" },
    ],
    edges: [
      { from: "form", to: "monday" },
      { from: "monday", to: "done" },
    ],
  });
}

beforeAll(async () => {
  t = await createTestDatabase();
  await publish(t.db, waitGraph({ zoneFrom: "input.tz" }), { automation: "follows" });
  await publish(t.db, waitGraph({ zone: "Europe/Paris" }), { automation: "fixed" });
  // No wait first: its start is the one-statement path (holdfast_run_start with the delivery row).
  await publish(
    t.db,
    parseGraph({
      nodes: [
        { id: "form", kind: "trigger", config: { eventIdField: "id", contactEmailField: "email", contactTimeZoneField: "tz" } },
        { id: "done", kind: "end" },
      ],
      edges: [{ from: "form", to: "done" }],
    }),
    { automation: "notes" },
  );
  orgId = (await rows("SELECT id FROM organisations WHERE slug = 'acme'"))[0].id;
});
afterAll(() => t?.drop());

const deliver = (automation: string, body: Record<string, unknown>, delivery = false) =>
  startRun(t.db, {
    orgSlug: "acme",
    automationSlug: automation,
    rawBody: JSON.stringify(body),
    body,
    headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null },
    via: "test",
    auth: { kind: "operator" },
    ...(delivery ? { delivery: { contentType: "application/json", bodyBytes: JSON.stringify(body).length } } : {}),
  });

async function waitingRun(automation: string, body: Record<string, unknown>) {
  const { runId } = await deliver(automation, body);
  await advanceRun(t.db, graphs, { orgId, runId, reason: "started" });
  const [timer] = await rows("SELECT zone, zone_source, due_at, anchor_at FROM timers WHERE run_id = $1", [runId]);
  return { runId, timer };
}

const contact = async (email: string, zone: string | null) =>
  (
    await rows(
      `INSERT INTO contacts (org_id, email, time_zone) VALUES ($1, $2, $3)
       ON CONFLICT (org_id, email) DO UPDATE SET time_zone = EXCLUDED.time_zone RETURNING id`,
      [orgId, email, zone],
    )
  )[0].id as string;

const localHour = (at: Date, zone: string) => new Intl.DateTimeFormat("en-GB", { timeZone: zone, hour: "2-digit", minute: "2-digit" }).format(at);

describe("the contact's stored time zone", () => {
  it("decides a wait when the payload carries no zone", async () => {
    await contact("tokyo@example.com", "Asia/Tokyo");
    const { timer } = await waitingRun("follows", { id: "z1", email: "tokyo@example.com" });
    expect(timer).toMatchObject({ zone: "Asia/Tokyo", zone_source: "contact" });
    expect(localHour(timer.due_at, "Asia/Tokyo")).toBe("09:00");
  });

  it("is updated by a payload's zone, which then decides the wait", async () => {
    await contact("mover@example.com", "Asia/Tokyo");
    const { timer } = await waitingRun("follows", { id: "z2", email: "mover@example.com", tz: "America/New_York" });
    expect(timer).toMatchObject({ zone: "America/New_York", zone_source: "run" });
    const [c] = await rows("SELECT time_zone FROM contacts WHERE org_id = $1 AND email = 'mover@example.com'", [orgId]);
    expect(c.time_zone).toBe("America/New_York");
  });

  it("is the fallback for an unknown payload zone, and the run's timeline says so in words", async () => {
    await contact("berlin@example.com", "Europe/Berlin");
    const { runId, timer } = await waitingRun("follows", { id: "z3", email: "berlin@example.com", tz: "Mars/Olympus_Mons" });
    expect(timer).toMatchObject({ zone: "Europe/Berlin", zone_source: "contact" });
    const [warning] = await rows("SELECT data FROM run_events WHERE run_id = $1 AND type = 'timer.zone_unknown'", [runId]);
    expect(warning.data).toMatchObject({ given: "Mars/Olympus_Mons", fallback: "Europe/Berlin", fallbackSource: "contact" });
    expect(warning.data.message).toContain(`"Mars/Olympus_Mons" is not a time zone; the wait counts in Europe/Berlin (the contact's stored time zone)`);
    const [c] = await rows("SELECT time_zone FROM contacts WHERE org_id = $1 AND email = 'berlin@example.com'", [orgId]);
    expect(c.time_zone).toBe("Europe/Berlin"); // an invalid zone never overwrites the stored one
  });

  it("names UTC as the fallback when nothing else is known (never a silent UTC)", async () => {
    const { runId, timer } = await waitingRun("follows", { id: "z4", email: "nozone@example.com", tz: "Nowhere" });
    expect(timer).toMatchObject({ zone: "UTC", zone_source: "default" });
    const [warning] = await rows("SELECT data FROM run_events WHERE run_id = $1 AND type = 'timer.zone_unknown'", [runId]);
    expect(warning.data.message).toContain("counts in UTC (UTC (no time zone was known))");
  });

  it("changed recomputes that contact's pending waits from the same anchors, old and new instants on each timeline", async () => {
    const id = await contact("lena@example.com", "Europe/Berlin");
    const a = await waitingRun("follows", { id: "z5", email: "lena@example.com" });
    const b = await waitingRun("follows", { id: "z6", email: "lena@example.com" });
    const fixed = await waitingRun("fixed", { id: "z7", email: "lena@example.com" });
    expect(fixed.timer).toMatchObject({ zone: "Europe/Paris", zone_source: "node" });

    const change = await setContactZone(t.db, orgId, id, "America/Los_Angeles", "user:owner@example.com");
    expect(change).toEqual({ changed: true, oldZone: "Europe/Berlin", zone: "America/Los_Angeles", moved: 2 });
    for (const run of [a, b]) {
      const [timer] = await rows("SELECT zone, due_at, anchor_at, wake FROM timers WHERE run_id = $1", [run.runId]);
      expect(timer.zone).toBe("America/Los_Angeles");
      expect(timer.wake).toBe(2);
      expect(timer.anchor_at.getTime()).toBe(run.timer.anchor_at.getTime());
      expect(localHour(timer.due_at, "America/Los_Angeles")).toBe("09:00");
      const [ev] = await rows("SELECT data FROM run_events WHERE run_id = $1 AND type = 'timer.recomputed'", [run.runId]);
      expect(new Date(ev.data.oldDueAt).getTime()).toBe(run.timer.due_at.getTime());
      expect(new Date(ev.data.newDueAt).getTime()).toBe(timer.due_at.getTime());
      expect(ev.data).toMatchObject({ oldZone: "Europe/Berlin", zone: "America/Los_Angeles" });
      expect(ev.data.reason).toContain("from Europe/Berlin to America/Los_Angeles");
    }
    // The wait with its own zone stays where it was.
    const [kept] = await rows("SELECT zone, wake FROM timers WHERE run_id = $1", [fixed.runId]);
    expect(kept).toEqual({ zone: "Europe/Paris", wake: 1 });
    // A repeated change is harmless and says nothing moved.
    expect(await setContactZone(t.db, orgId, id, "America/Los_Angeles", "user:owner@example.com")).toMatchObject({ changed: false, moved: 0 });
    await expect(setContactZone(t.db, orgId, id, "Europe/Atlantis", "x")).rejects.toThrow(/not a time zone/);
  });
});

describe("a delivery whose payload names another zone for the contact", () => {
  const zoneOf = async (email: string) => (await rows("SELECT time_zone FROM contacts WHERE org_id = $1 AND email = $2", [orgId, email]))[0]?.time_zone;
  const timerOf = async (runId: string) => (await rows("SELECT zone, due_at, anchor_at, wake FROM timers WHERE run_id = $1", [runId]))[0];
  const recomputed = (runId: string) => rows("SELECT data FROM run_events WHERE run_id = $1 AND type = 'timer.recomputed' ORDER BY id", [runId]);

  it("moves the contact's other pending waits from the same anchors, with old and new instants on their timelines", async () => {
    await contact("ines@example.com", "Europe/Berlin");
    const a = await waitingRun("follows", { id: "d1", email: "ines@example.com" });
    expect(a.timer).toMatchObject({ zone: "Europe/Berlin", zone_source: "contact" });
    expect(localHour(a.timer.due_at, "Europe/Berlin")).toBe("09:00");

    const b = await deliver("follows", { id: "d2", email: "ines@example.com", tz: "America/New_York" }, true);
    expect(await zoneOf("ines@example.com")).toBe("America/New_York");
    const moved = await timerOf(a.runId);
    expect(moved.zone).toBe("America/New_York");
    expect(moved.wake).toBe(2);
    expect(moved.anchor_at.getTime()).toBe(a.timer.anchor_at.getTime());
    expect(localHour(moved.due_at, "America/New_York")).toBe("09:00");
    const [ev] = await recomputed(a.runId);
    expect(new Date(ev.data.oldDueAt).getTime()).toBe(a.timer.due_at.getTime());
    expect(new Date(ev.data.newDueAt).getTime()).toBe(moved.due_at.getTime());
    expect(ev.data).toMatchObject({ oldZone: "Europe/Berlin", zone: "America/New_York" });
    expect(ev.data.reason).toBe(`the contact's time zone changed from Europe/Berlin to America/New_York (by a delivery to "follows", run ${b.runId})`);
    // The new run's own wait is in the new zone and was never moved.
    await advanceRun(t.db, graphs, { orgId, runId: b.runId, reason: "started" });
    expect(await timerOf(b.runId)).toMatchObject({ zone: "America/New_York", wake: 1 });
    expect(await recomputed(b.runId)).toEqual([]);
  });

  it("does the same on the one-statement start path (with its delivery row); a duplicate delivery changes nothing", async () => {
    await contact("omar@example.com", "Europe/Berlin");
    const a = await waitingRun("follows", { id: "d3", email: "omar@example.com" });
    const body = { id: "d4", email: "omar@example.com", tz: "America/New_York" };
    const note = await deliver("notes", body, true);
    expect(note.duplicate).toBe(false);
    expect(await rows("SELECT status FROM runs WHERE id = $1", [note.runId])).toEqual([{ status: "completed" }]);
    expect(await rows("SELECT outcome FROM trigger_deliveries WHERE run_id = $1", [note.runId])).toEqual([{ outcome: "accepted" }]);
    expect(await zoneOf("omar@example.com")).toBe("America/New_York");
    const moved = await timerOf(a.runId);
    expect(moved).toMatchObject({ zone: "America/New_York", wake: 2 });
    expect(localHour(moved.due_at, "America/New_York")).toBe("09:00");
    expect((await recomputed(a.runId)).map((e) => e.data.reason)).toEqual([
      `the contact's time zone changed from Europe/Berlin to America/New_York (by a delivery to "notes", run ${note.runId})`,
    ]);

    // A person moves the contact afterwards; the provider re-sends the old delivery: it finds its run and the
    // person's word stands (a re-sent event is not news about where the contact is).
    const id = (await rows("SELECT id FROM contacts WHERE org_id = $1 AND email = 'omar@example.com'", [orgId]))[0].id;
    await setContactZone(t.db, orgId, id, "Asia/Tokyo", "user:owner@example.com");
    const again = await deliver("notes", body, true);
    expect(again).toMatchObject({ runId: note.runId, duplicate: true });
    expect(await rows("SELECT outcome FROM trigger_deliveries WHERE run_id = $1 ORDER BY seq", [note.runId])).toEqual([{ outcome: "accepted" }, { outcome: "duplicate" }]);
    expect(await zoneOf("omar@example.com")).toBe("Asia/Tokyo");
    expect(await timerOf(a.runId)).toMatchObject({ zone: "Asia/Tokyo", wake: 3 });
    // The same zone again is the one-statement path and moves nothing.
    const same = await deliver("notes", { id: "d5", email: "omar@example.com", tz: "Asia/Tokyo" }, true);
    expect(same.duplicate).toBe(false);
    expect(await timerOf(a.runId)).toMatchObject({ zone: "Asia/Tokyo", wake: 3 });
  });
});

describe("a broken connection", () => {
  let connectionId: string;
  beforeAll(async () => {
    connectionId = await createConnection(t.db, { orgId, kind: "smtp", name: "mailbox", config: { host: "127.0.0.1", port: 2525, from: "a@b.c" }, secret: null });
    await upsertMember(t.db, { orgId, email: "owner1@example.com", name: "Owner One", password: null, role: "owner" });
    await upsertMember(t.db, { orgId, email: "owner2@example.com", name: "Owner Two", password: null, role: "owner" });
    await upsertMember(t.db, { orgId, email: "viewer@example.com", name: "Viewer", password: null, role: "viewer" });
  }, 30_000);

  it("gets one notice per break even when two processes mark it at once", async () => {
    // Two sessions, as two processes would have: a holds the row, b's update waits for it.
    const [a, b] = await Promise.all([t.sql.connect(), t.sql.connect()]);
    const mark = "UPDATE connections SET status = 'needs_reconnect', status_reason = $2 WHERE id = $1";
    await a.query("BEGIN");
    await b.query("BEGIN");
    await a.query(mark, [connectionId, "the mailbox refused our login (process a)"]);
    const second = b.query(mark, [connectionId, "the mailbox refused our login (process b)"]); // waits for a's row lock
    await new Promise((r) => setTimeout(r, 100));
    await a.query("COMMIT");
    await second;
    await b.query("COMMIT");
    a.release();
    b.release();
    expect(await rows("SELECT break_no, reason FROM connection_notices WHERE connection_id = $1", [connectionId])).toEqual([
      { break_no: 1, reason: "the mailbox refused our login (process a)" },
    ]);
    const open = await noticesOpenForOrgs(t.db, [orgId]);
    expect(open.map((n) => [n.connectionName, n.parkedRuns])).toEqual([["mailbox", 0]]);

    // Healthy again: the notice is resolved (the banner drops it); a second break is a second notice.
    await rows("UPDATE connections SET status = 'ok', status_reason = NULL WHERE id = $1", [connectionId]);
    expect(await noticesOpenForOrgs(t.db, [orgId])).toEqual([]);
    await rows("UPDATE connections SET status = 'needs_reconnect', status_reason = 'revoked' WHERE id = $1", [connectionId]);
    await rows("UPDATE connections SET status = 'needs_reconnect', status_reason = 'still revoked' WHERE id = $1", [connectionId]);
    expect((await rows("SELECT break_no FROM connection_notices WHERE connection_id = $1 ORDER BY break_no", [connectionId])).map((r) => r.break_no)).toEqual([1, 2]);
  });

  it("emails the owners once per notice through the system mailbox, even with two senders at once", async () => {
    const smtp = await startSmtpTarget();
    try {
      const mail = { url: `smtp+plain://127.0.0.1:${smtp.port}`, from: "Holdfast <ops@holdfast.test>" };
      const egress = { allow: parseAllowList(`127.0.0.1:${smtp.port}`) };
      const [x, y] = await Promise.all([sendConnectionNoticesOnce(t.db, mail, { egress }), sendConnectionNoticesOnce(t.db, mail, { egress })]);
      expect(x.sent + y.sent).toBe(2); // break 1 and break 2
      expect(await sendConnectionNoticesOnce(t.db, mail, { egress })).toEqual({ sent: 0, skipped: 0, failed: 0, retrying: 0 });
      expect(smtp.received).toHaveLength(2);
      for (const m of smtp.received) {
        expect(m.to.sort()).toEqual(["owner1@example.com", "owner2@example.com"]);
        const subject = (m.subject ?? "").replace(/=\?UTF-8\?Q\?(.*?)\?=\s*/gi, (_, q: string) =>
          Buffer.from(q.replace(/_/g, " ").replace(/=([0-9A-F]{2})/gi, (_x, h: string) => String.fromCharCode(parseInt(h, 16))), "latin1").toString("utf8"),
        );
        expect(subject.startsWith('Reconnect "mailbox" in Acme: 0 run')).toBe(true); // (the sink keeps a folded header's first line)
        expect(m.raw).toContain("Message-ID: <notice-ntc_");
      }
      const sent = await rows("SELECT email_status, email_to FROM connection_notices WHERE connection_id = $1", [connectionId]);
      expect(sent.every((r) => r.email_status === "sent")).toBe(true);
    } finally {
      await smtp.close();
    }
  });

  it("takes a notice again when its sender died mid-send (lease lapsed), and skips with a reason without a mailbox", async () => {
    await rows("UPDATE connections SET status = 'ok' WHERE id = $1", [connectionId]);
    await rows("UPDATE connections SET status = 'needs_reconnect', status_reason = 'third' WHERE id = $1", [connectionId]);
    // A sender claimed it and died: attempt 1, lease already over.
    await rows("UPDATE connection_notices SET email_status = 'sending', email_attempts = 1, email_claimed_until = now() - interval '1 second' WHERE break_no = 3");
    const smtp = await startSmtpTarget();
    try {
      const mail = { url: `smtp+plain://127.0.0.1:${smtp.port}`, from: "ops@holdfast.test" };
      expect(await sendConnectionNoticesOnce(t.db, mail, { egress: { allow: parseAllowList(`127.0.0.1:${smtp.port}`) } })).toMatchObject({ sent: 1 });
      expect(smtp.received).toHaveLength(1);
    } finally {
      await smtp.close();
    }
    await rows("UPDATE connections SET status = 'ok' WHERE id = $1", [connectionId]);
    await rows("UPDATE connections SET status = 'needs_reconnect' WHERE id = $1", [connectionId]);
    expect(await sendConnectionNoticesOnce(t.db, null)).toMatchObject({ skipped: 1 });
    const [n] = await rows("SELECT email_status, email_error FROM connection_notices WHERE break_no = 4");
    expect(n.email_status).toBe("skipped");
    expect(n.email_error).toContain("HOLDFAST_SYSTEM_SMTP_URL");
  });

  it("probed by two sweepers at once, a revoked mailbox is marked and noticed once", async () => {
    const smtp = await startSmtpTarget({ credentials: { user: "sam", pass: "revoked" } });
    try {
      await createConnection(t.db, { orgId, kind: "smtp", name: "revoked", config: { host: "127.0.0.1", port: smtp.port, tls: "none", user: "sam", from: "sam@acme.test" }, secret: "old" });
      const row = (await connectionsByName(t.db, orgId, "revoked")) as NonNullable<Awaited<ReturnType<typeof connectionsByName>>>;
      const results = await Promise.all([probeConnection(t.db, row), probeConnection(t.db, row)]);
      expect(results.map((r) => r.status)).toEqual(["needs_reconnect", "needs_reconnect"]);
      expect(await rows("SELECT break_no FROM connection_notices WHERE connection_id = $1", [row.id])).toEqual([{ break_no: 1 }]);
      const open = await noticesOpenForOrgs(t.db, [orgId]);
      expect(open.find((n) => n.connectionName === "revoked")?.reason).toMatch(/^the mailbox "revoked" refused our login: reconnect it/);
    } finally {
      await smtp.close();
    }
  });

  it("refuses the system mailbox's host through the egress guard unless allowed", async () => {
    await rows("UPDATE connections SET status = 'ok' WHERE id = $1", [connectionId]);
    await rows("UPDATE connections SET status = 'needs_reconnect' WHERE id = $1", [connectionId]);
    const r = await sendConnectionNoticesOnce(t.db, { url: "smtp+plain://127.0.0.1:9", from: "ops@holdfast.test" }, { egress: { allow: parseAllowList("") } });
    expect(r).toMatchObject({ failed: 2 }); // this break, and the revoked mailbox's above
    const [n] = await rows("SELECT email_status, email_error FROM connection_notices WHERE connection_id = $1 AND break_no = 5", [connectionId]);
    expect(n.email_status).toBe("failed");
    expect(n.email_error).toMatch(/refused to connect to 127\.0\.0\.1/);
  });
});
