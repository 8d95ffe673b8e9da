import { recordClick, verifyClickToken } from "@holdfast/core/people";
import { db } from "../../../../../server/db";
import { failureFor } from "../../../../../server/failure";
import { plainPage } from "../../../../../server/plain-page";
import { withScope } from "../../../../../server/scope";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

type Params = { params: Promise<{ token: string }> };

/**
 * A tracked link of a sent email (issue 43). The token's HMAC binds the organisation, the message and the exact
 * target, and is checked before anything is read: a token that does not verify (forged, changed, cut short, too long,
 * a target that is not a plain http(s) URL) is a 400 page and never a redirect, so this is no open redirect. A valid
 * one records the message's click (its first click once, race-free in SQL) and answers 302 to exactly the signed
 * target. If the click cannot be recorded (the database is away) the person still gets their link.
 */
export async function GET(_request: Request, context: Params): Promise<Response> {
  const claims = verifyClickToken((await context.params).token);
  if (!claims) {
    return plainPage(400, "Link not valid", "<h1>This link is not valid</h1><p>It may have been changed or copied only in part. Use the link in the email itself.</p>");
  }
  try {
    await withScope({ orgIds: [claims.o] }, () => recordClick(db, claims));
  } catch (error) {
    failureFor(error, "email click");
  }
  return new Response(null, { status: 302, headers: { location: claims.u, "cache-control": "no-store", "referrer-policy": "no-referrer" } });
}

/**
 * HEAD (link checkers and previews that only look): the same answer without recording a click, so a scanner that
 * only asks where a link goes does not count as a person.
 */
export async function HEAD(_request: Request, context: Params): Promise<Response> {
  const claims = verifyClickToken((await context.params).token);
  if (!claims) return new Response(null, { status: 400, headers: { "cache-control": "no-store" } });
  return new Response(null, { status: 302, headers: { location: claims.u, "cache-control": "no-store", "referrer-policy": "no-referrer" } });
}
