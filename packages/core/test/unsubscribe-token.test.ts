import { describe, expect, it } from "vitest";
import { issueUnsubscribeToken, maskEmail, unsubscribeBase, unsubscribeUrl, verifyUnsubscribeToken } from "../src/people/unsubscribe/token";

/** One-click unsubscribe tokens (people/unsubscribe/token.ts), without a database. */
describe("unsubscribe tokens", () => {
  const c = { orgId: "org_1", email: "Maya@Example.COM", effectKey: "run_1:stp_1:1" };

  it("verifies its own token, with the address lower-cased and no expiry", () => {
    expect(verifyUnsubscribeToken(issueUnsubscribeToken(c))).toEqual({ ok: true, claims: { p: "unsubscribe", o: "org_1", m: "maya@example.com", k: "run_1:stp_1:1" } });
  });

  it("refuses a changed address, organisation or message, a flipped signature and malformed tokens", () => {
    const token = issueUnsubscribeToken(c);
    const [body, mac] = token.split(".") as [string, string];
    const claims = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
    for (const change of [{ m: "sam@example.com" }, { o: "org_2" }, { k: "run_2:stp_1:1" }]) {
      const forged = Buffer.from(JSON.stringify({ ...claims, ...change })).toString("base64url");
      expect(verifyUnsubscribeToken(`${forged}.${mac}`)).toEqual({ ok: false, reason: "bad_signature" });
    }
    expect(verifyUnsubscribeToken(`${body}.${mac[0] === "A" ? "B" : "A"}${mac.slice(1)}`)).toEqual({ ok: false, reason: "bad_signature" });
    expect(verifyUnsubscribeToken(`${body}.${mac}.x`)).toEqual({ ok: false, reason: "malformed" });
    expect(verifyUnsubscribeToken(body)).toEqual({ ok: false, reason: "malformed" });
    expect(verifyUnsubscribeToken("")).toEqual({ ok: false, reason: "malformed" });
    expect(verifyUnsubscribeToken("x".repeat(3_000))).toEqual({ ok: false, reason: "malformed" });
  });

  it("is not an approval button token: another purpose with a valid shape is refused", () => {
    const token = issueUnsubscribeToken(c);
    const [body] = token.split(".") as [string];
    const other = Buffer.from(JSON.stringify({ p: "approval.decide", o: "org_1", m: "maya@example.com", k: "k" })).toString("base64url");
    expect(verifyUnsubscribeToken(`${other}.${token.split(".")[1]}`).ok).toBe(false);
    expect(body.length).toBeGreaterThan(0);
  });

  it("makes the link from the web's public address and masks the address on the page", () => {
    expect(unsubscribeBase({ HOLDFAST_PUBLIC_URL: "https://hf.example.com/" })).toBe("https://hf.example.com");
    expect(unsubscribeBase({})).toBeNull();
    expect(unsubscribeBase({ HOLDFAST_PUBLIC_URL: "not a url" })).toBeNull();
    expect(unsubscribeUrl("https://hf.example.com", c)).toMatch(/^https:\/\/hf\.example\.com\/api\/unsubscribe\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(maskEmail("maya@example.com")).toBe("ma***@example.com");
    expect(maskEmail("a@example.com")).toBe("a***@example.com");
  });
});
