import { describe, expect, it } from "vitest";
import { detectIdFields } from "../src/versions/kinds/id-fields";
import { MissingStartKeyError, planStartKey, resolveStartKey } from "../src/run/start/start-key";
import { signPayload, verifySignature } from "../src/run/start/signature";

describe("start keys", () => {
  const none = { payloadHashFallback: false };
  it("prefers the webhook-id header, then the configured event id field", () => {
    expect(resolveStartKey("aut_1", { eventIdField: "data.id", payloadHashFallback: false }, { webhookId: "msg_1", body: { data: { id: "e" } } })).toBe(
      "aut_1:wh:msg_1",
    );
    expect(resolveStartKey("aut_1", { eventIdField: "data.id", payloadHashFallback: false }, { webhookId: null, body: { data: { id: "e" } } })).toBe(
      "aut_1:ev:e",
    );
  });

  it("hashes the payload only when the trigger opts in, independent of key order", () => {
    expect(() => resolveStartKey("aut_1", none, { webhookId: null, body: { a: 1 } })).toThrow(MissingStartKeyError);
    const a = resolveStartKey("aut_1", { payloadHashFallback: true }, { webhookId: null, body: { a: 1, b: [1, { c: 2, d: 3 }] } });
    const b = resolveStartKey("aut_1", { payloadHashFallback: true }, { webhookId: null, body: { b: [1, { d: 3, c: 2 }], a: 1 } });
    expect(a).toBe(b);
    expect(a).toMatch(/^aut_1:sha256:[0-9a-f]{64}$/);
  });
});

describe("form intake (URL-token mode)", () => {
  const form = { email: "maya@example.com", name: "Maya" };
  const defaults = { eventIdField: "id", payloadHashFallback: false };

  it("keys a post without webhook-id or id by its content, the same lead within 24 hours by default", () => {
    const plan = planStartKey("aut_1", defaults, { webhookId: null, body: form }, "url_token");
    expect(plan.key).toMatch(/^aut_1:sha256:[0-9a-f]{64}$/);
    expect(plan.windowHours).toBe(24);
    // The same submission, fields in another order: the same key; another submission: another key.
    expect(planStartKey("aut_1", defaults, { webhookId: null, body: { name: "Maya", email: "maya@example.com" } }, "url_token").key).toBe(plan.key);
    expect(planStartKey("aut_1", defaults, { webhookId: null, body: { ...form, name: "Max" } }, "url_token").key).not.toBe(plan.key);
  });

  it("uses the trigger's window, and window 0 gives every submission a key of its own", () => {
    expect(planStartKey("aut_1", { ...defaults, duplicateWindowHours: 2 }, { webhookId: null, body: form }, "url_token").windowHours).toBe(2);
    const a = planStartKey("aut_1", { ...defaults, duplicateWindowHours: 0 }, { webhookId: null, body: form }, "url_token");
    const b = planStartKey("aut_1", { ...defaults, duplicateWindowHours: 0 }, { webhookId: null, body: form }, "url_token");
    expect(a.windowHours).toBeUndefined();
    expect(a.key).not.toBe(b.key);
  });

  it("prefers the webhook-id header, then the id field, over the content; signed mode still refuses without opt-in", () => {
    expect(planStartKey("aut_1", defaults, { webhookId: "msg_1", body: { id: "e" } }, "url_token")).toEqual({ key: "aut_1:wh:msg_1" });
    expect(planStartKey("aut_1", defaults, { webhookId: null, body: { id: 42, ...form } }, "url_token")).toEqual({ key: "aut_1:ev:42" });
    expect(() => planStartKey("aut_1", defaults, { webhookId: null, body: form }, "signed")).toThrow(MissingStartKeyError);
    expect(planStartKey("aut_1", { ...defaults, payloadHashFallback: true }, { webhookId: null, body: form }, "signed").windowHours).toBe(24);
  });

  it("detects the common id fields a sample has, with their values", () => {
    expect(detectIdFields({ submission_id: "s_1", email: "x@y", token: "", entry_id: 7 })).toEqual([
      { path: "submission_id", example: "s_1" },
      { path: "entry_id", example: "7" },
    ]);
    expect(detectIdFields({ form_response: { token: "tf_1" } }).map((d) => d.path)).toEqual(["form_response.token"]);
    expect(detectIdFields({ email: "x@y" })).toEqual([]);
    expect(detectIdFields(null)).toEqual([]);
  });
});

describe("Standard Webhooks signatures", () => {
  const secret = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
  const other = `whsec_${Buffer.alloc(32, 9).toString("base64")}`;
  const now = 1_800_000_000;
  const body = '{"id":"e1"}';
  const headers = (signature: string, ts = now) => ({ "webhook-id": "msg_1", "webhook-timestamp": String(ts), "webhook-signature": signature });

  it("accepts a valid signature, one of several, and a rotated secret", () => {
    const sig = signPayload(secret, "msg_1", now, body);
    expect(() => verifySignature([secret], body, headers(sig), now)).not.toThrow();
    expect(() => verifySignature([secret], body, headers(`${signPayload(other, "msg_1", now, body)} ${sig}`), now)).not.toThrow();
    expect(() => verifySignature([other, secret], body, headers(sig), now)).not.toThrow();
  });

  it("refuses a tampered body, a wrong secret and a timestamp outside 5 minutes either way", () => {
    const sig = signPayload(secret, "msg_1", now, body);
    expect(() => verifySignature([secret], '{"id":"e2"}', headers(sig), now)).toThrow(/no signature matches/);
    expect(() => verifySignature([other], body, headers(sig), now)).toThrow(/no signature matches/);
    expect(() => verifySignature([secret], body, headers(sig), now + 301)).toThrow(/5 minutes/);
    expect(() => verifySignature([secret], body, headers(sig), now - 301)).toThrow(/5 minutes/);
    expect(() => verifySignature([secret], body, { ...headers(sig), "webhook-signature": null }, now)).toThrow(/requires/);
  });
});
