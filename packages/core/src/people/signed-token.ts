import { createHmac, hkdfSync, timingSafeEqual } from "node:crypto";
import type { ZodType } from "zod";
import { secretKey } from "../providers/connections/secrets";

/**
 * Tokens a person carries in a link or a button: `<claims as base64url JSON>.<HMAC-SHA256>`, keyed by a key derived
 * from HOLDFAST_SECRET_KEY for one purpose (`info`), so a token made for one purpose never opens another. Checking the
 * claims' shape and meaning (expiry, binding) is the caller's.
 */
export function signedTokens(info: string) {
  // The key is derived on each use: it follows the secret key the process holds now.
  const sign = (body: string) => createHmac("sha256", Buffer.from(hkdfSync("sha256", secretKey(), Buffer.alloc(0), info, 32))).update(body).digest("base64url");
  return {
    issue(claims: object): string {
      const body = Buffer.from(JSON.stringify(claims)).toString("base64url");
      return `${body}.${sign(body)}`;
    },
    /** The claims' JSON when the signature holds; never parses what was not signed here. */
    open(token: string): { ok: true; json: unknown } | { ok: false; reason: "malformed" | "bad_signature" } {
      const [body, mac, extra] = token.split(".");
      if (!body || !mac || extra !== undefined) return { ok: false, reason: "malformed" };
      const want = Buffer.from(sign(body));
      const got = Buffer.from(mac);
      if (want.length !== got.length || !timingSafeEqual(want, got)) return { ok: false, reason: "bad_signature" };
      try {
        return { ok: true, json: JSON.parse(Buffer.from(body, "base64url").toString("utf8")) };
      } catch {
        return { ok: false, reason: "malformed" };
      }
    },
    /** Opens the token and checks its claims' shape and expiry (`e`, Unix seconds) against `nowSeconds` (the database's). */
    verify<T extends { e: number }>(token: string, schema: ZodType<T>, nowSeconds: number): { ok: true; claims: T } | { ok: false; reason: "malformed" | "bad_signature" | "expired" } {
      const opened = this.open(token);
      if (!opened.ok) return opened;
      const parsed = schema.safeParse(opened.json);
      if (!parsed.success) return { ok: false, reason: "malformed" };
      if (parsed.data.e <= nowSeconds) return { ok: false, reason: "expired" };
      return { ok: true, claims: parsed.data };
    },
  };
}
