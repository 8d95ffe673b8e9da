import { createHash, timingSafeEqual } from "node:crypto";
import type { TriggerAuth } from "../../store/sql/trigger-credentials";
import { SignatureError, type SignedHeaders, verifySignature } from "./signature";

/**
 * Who may start a run. `operator`: the CLI and tests, which already hold database access. `http`: a request to a
 * trigger URL, which must carry the credential the automation's mode asks for.
 */
export type StartAuth = { kind: "operator" } | { kind: "http"; urlToken: string | null };

export const operatorAuth: StartAuth = { kind: "operator" };

export interface TriggerCredentials {
  mode: TriggerAuth;
  signingSecrets: string[];
  urlTokens: string[];
}

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

/** Compares in constant time whatever the lengths (both sides hashed to 32 bytes first). */
function sameToken(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

/** Throws SignatureError (401 at the edge) unless the request carries a credential this trigger accepts now. */
export function authenticateTrigger(
  trigger: TriggerCredentials,
  auth: StartAuth,
  request: { rawBody: string; headers: SignedHeaders },
  dbNowSeconds: number,
): void {
  if (auth.kind === "operator") return;
  if (trigger.mode === "url_token") {
    if (auth.urlToken === null) {
      throw new SignatureError(
        "this trigger's URL includes its token (/api/hooks/{org}/{automation}/{token}); copy it from the trigger's settings",
        "URL has no token (this trigger takes one)",
      );
    }
    const token = auth.urlToken;
    // Check every accepted token, not the first match, so timing does not tell which one matched.
    const matches = trigger.urlTokens.map((t) => sameToken(t, token)).filter(Boolean).length;
    if (matches === 0) throw new SignatureError("the token in this URL is not valid for this trigger (it may have been rotated)", "unknown or revoked URL token");
    return;
  }
  if (auth.urlToken !== null) {
    throw new SignatureError(
      "this trigger takes signed requests at /api/hooks/{org}/{automation}; URL tokens are turned off in its settings",
      "URL token sent to a signed trigger",
    );
  }
  if (trigger.signingSecrets.length === 0) throw new SignatureError("this trigger has no signing secret; rotate it in the trigger's settings", "trigger has no signing secret");
  verifySignature(trigger.signingSecrets, request.rawBody, request.headers, dbNowSeconds);
}
