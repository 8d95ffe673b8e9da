import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { InvalidPayloadError, NoPublishedVersionError } from "../src/base/errors";
import { authenticatedRefusal, deliveryContentType, pruneDue, pruneEvery, refusalReason } from "../src/run/start/deliveries";
import { MissingStartKeyError } from "../src/run/start/start-key";
import { SignatureError } from "../src/run/start/signature";
import { authenticateTrigger } from "../src/run/start/trigger-auth";
import { triggerPayload } from "../src/run/start/payload";

/** The delivery log's words and limits, without a database (e2e/trigger-deliveries.test.ts covers the rows). */
describe("the delivery log's reasons", () => {
  const refusal = (fn: () => unknown) => {
    try {
      fn();
    } catch (error) {
      return refusalReason(error);
    }
    throw new Error("did not refuse");
  };
  const request = { rawBody: "{}", headers: { "webhook-id": null, "webhook-timestamp": null, "webhook-signature": null } };
  const trigger = (mode: "signed" | "url_token") => ({ mode, signingSecrets: [`whsec_${randomBytes(24).toString("base64")}`], urlTokens: ["right-token"] });

  it("says what went wrong in a few fixed words, whatever the sender wrote", () => {
    expect(refusal(() => authenticateTrigger(trigger("url_token"), { kind: "http", urlToken: "wrong <script>" }, request, 0))).toBe("unknown or revoked URL token");
    expect(refusal(() => authenticateTrigger(trigger("url_token"), { kind: "http", urlToken: null }, request, 0))).toBe("URL has no token (this trigger takes one)");
    expect(refusal(() => authenticateTrigger(trigger("signed"), { kind: "http", urlToken: "x" }, request, 0))).toBe("URL token sent to a signed trigger");
    expect(refusal(() => authenticateTrigger(trigger("signed"), { kind: "http", urlToken: null }, request, 0))).toBe("signature headers missing");
    const now = Math.floor(Date.now() / 1000);
    const headers = { "webhook-id": "msg_1", "webhook-timestamp": String(now), "webhook-signature": "v1,AAAA" };
    expect(refusal(() => authenticateTrigger(trigger("signed"), { kind: "http", urlToken: null }, { rawBody: "{}", headers }, now))).toBe("signature did not match");
    expect(refusal(() => authenticateTrigger(trigger("signed"), { kind: "http", urlToken: null }, { rawBody: "{}", headers }, now + 600))).toBe(
      "timestamp more than 5 minutes from now",
    );
    expect(refusal(() => triggerPayload("text/plain", "hello <evil>"))).toBe("body is not JSON or form data");
    expect(refusal(() => triggerPayload("application/json", "[1]"))).toBe("body must be a JSON object");
    expect(refusalReason(new NoPublishedVersionError("x"))).toBe("the automation is a draft: publish it first");
    expect(refusalReason(new MissingStartKeyError("send a webhook-id header"))).toBe("repeats cannot be told apart: send a webhook-id header");
    expect(refusalReason(new InvalidPayloadError("the body contains U+0000"))).toBe("body contains U+0000");
    expect(refusalReason(new Error("connection reset by 10.0.0.7"))).toBe("internal error (see the web server's log)");
    expect(new SignatureError("detail").reason).toBe("credential refused");
  });

  it("keeps the webhook-id only of requests that passed their credential check", () => {
    expect(["no_published_version", "missing_start_key", "invalid_graph"].every(authenticatedRefusal)).toBe(true);
    expect(["invalid_signature", "invalid_json", "invalid_payload", "payload_too_large", "internal"].some(authenticatedRefusal)).toBe(false);
  });

  it("keeps a content type only as a well-formed media type, never its parameters or free text", () => {
    expect(deliveryContentType("application/json; charset=utf-8")).toBe("application/json");
    expect(deliveryContentType("Application/X-WWW-Form-Urlencoded")).toBe("application/x-www-form-urlencoded");
    expect(deliveryContentType("text/plain; note=ATTACKER")).toBe("text/plain");
    expect(deliveryContentType("drop table runs")).toBeNull();
    expect(deliveryContentType(`application/${"x".repeat(80)}`)).toBeNull();
    expect(deliveryContentType(null)).toBeNull();
  });
});

describe("pruning", () => {
  it("prunes on the first and then every 8th delivery of each automation, counted apart", () => {
    const a = Array.from({ length: 3 * pruneEvery }, () => pruneDue("org_a", "leads"));
    const b = Array.from({ length: pruneEvery }, () => pruneDue("org_a", "other"));
    expect(a.filter(Boolean)).toHaveLength(3);
    expect(a.indexOf(true)).toBe(0);
    expect(a.indexOf(true, 1)).toBe(pruneEvery);
    expect(b.filter(Boolean)).toHaveLength(1);
  });
});
