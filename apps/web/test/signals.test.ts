import { parseGraph } from "@holdfast/core/versions";
import { createConnection } from "@holdfast/core/providers";
import { createTestDatabase, publish, type TestDatabase } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { handleEmailSignal } from "../src/server/signals";

let t: TestDatabase;
const token = "inbound-token-0123456789";
beforeAll(async () => {
  t = await createTestDatabase();
  const { orgId } = await publish(
    t.db,
    parseGraph({
      nodes: [
        { id: "t", kind: "trigger", config: { eventIdField: "id" } },
        { id: "e", kind: "end" },
      ],
      edges: [{ from: "t", to: "e" }],
    }),
  );
  await createConnection(t.db, { orgId, kind: "smtp", name: "mail", config: { host: "127.0.0.1", from: "a@acme.test" }, secret: null });
});
afterAll(async () => {
  await t?.drop();
});

const post = (body: unknown, headers: Record<string, string> = { authorization: `Bearer ${token}` }, org = "acme") =>
  handleEmailSignal(
    t.db,
    new Request(`http://localhost/api/signals/email?org=${org}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) }),
    { token },
  );
const email = { messageId: "<m1@mail.example.com>", from: "maya@example.com", subject: "Re: hi", inReplyTo: "<unknown@acme.test>", text: "yes" };

describe("POST /api/signals/email", () => {
  it("stores a reply once per Message-ID; unmatched is a 200, not an error", async () => {
    const first = await post(email);
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ duplicate: false, consumed: false });
    const again = await post(email);
    expect(await again.json()).toMatchObject({ duplicate: true });
    const { rows } = await t.sql.query("SELECT count(*)::int AS n FROM signals");
    expect(rows[0].n).toBe(1);
  });

  it("refuses a missing or wrong token, a bad body and an unknown organisation, storing nothing", async () => {
    expect((await post(email, {})).status).toBe(401);
    expect((await post(email, { authorization: "Bearer wrong-token-0123456789" })).status).toBe(401);
    const bad = await post({ from: "x" });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toMatch(/messageId/);
    expect((await post({ ...email, messageId: "<m2@x>" }, undefined, "nope")).status).toBe(404);
    const off = await handleEmailSignal(t.db, new Request("http://localhost/api/signals/email?org=acme", { method: "POST", body: "{}" }), { token: undefined });
    expect(off.status).toBe(503);
    const { rows } = await t.sql.query("SELECT count(*)::int AS n FROM signals");
    expect(rows[0].n).toBe(1);
  });
});
