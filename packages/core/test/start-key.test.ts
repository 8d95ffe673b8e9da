import { describe, expect, it } from "vitest";
import { MissingStartKeyError, resolveStartKey } from "../src/start/start-key";
import { signPayload, verifySignature } from "../src/start/signature";

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
