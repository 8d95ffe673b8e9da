import { recordOpen, verifyOpenToken } from "@holdfast/core/people";
import { db } from "../../../../../server/db";
import { failureFor } from "../../../../../server/failure";
import { withScope } from "../../../../../server/scope";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

type Params = { params: Promise<{ token: string }> };

// A transparent 1x1 GIF.
const pixel = Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64");

/**
 * The open pixel of an email whose automation tracks opens (issue 43): a valid token records the message's open
 * (first once, then a count) and answers the pixel, never cached. Mail clients that preload images open every
 * message, so an open is a hint, not proof that a person read it. A token that does not verify is a 400.
 */
export async function GET(_request: Request, context: Params): Promise<Response> {
  const claims = verifyOpenToken((await context.params).token);
  if (!claims) return new Response("not a valid image link", { status: 400, headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" } });
  try {
    await withScope({ orgIds: [claims.o] }, () => recordOpen(db, claims));
  } catch (error) {
    failureFor(error, "email open");
  }
  return new Response(pixel, { status: 200, headers: { "content-type": "image/gif", "content-length": String(pixel.length), "cache-control": "no-store, private", "referrer-policy": "no-referrer" } });
}
