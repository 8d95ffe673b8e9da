import { type UnsubscribeClaims, unsubscribeOnce, unsubscribePreview, verifyUnsubscribeToken } from "@holdfast/core/people";
import { db } from "../../../../server/db";
import { withScope } from "../../../../server/scope";
import { escapeHtml as html, plainPage as page } from "../../../../server/plain-page";
import { answerOrUnavailable } from "../../../../server/unavailable";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

type Params = { params: Promise<{ token: string }> };

/**
 * One-click unsubscribe (RFC 8058). POST (the mail provider's one click, or the button below) suppresses the address
 * the signed token names, at once and once; the body is ignored. GET never unsubscribes (link scanners and previews
 * fetch links): it shows a page with one button that POSTs. No session: the token is the credential, checked by its
 * HMAC before anything is read, so a forged link costs one hash.
 */
export async function POST(_request: Request, context: Params): Promise<Response> {
  const claims = check((await context.params).token);
  if (!claims) return refused();
  return answerOrUnavailable(async () => {
    const done = await withScope({ orgIds: [claims.o] }, async () => ({
      outcome: await unsubscribeOnce(db, claims),
      ...(await unsubscribePreview(db, claims)),
    }));
    const said = done.outcome === "unsubscribed" ? `${done.masked} is unsubscribed` : `${done.masked} is already unsubscribed`;
    return page(200, "Unsubscribed", `<h1>${html(said)}</h1><p>${html(done.orgName)} will send no more emails to this address.</p>`);
  }, "We cannot reach our records right now, so nothing was changed. Please try again in a minute.");
}

export async function GET(_request: Request, context: Params): Promise<Response> {
  const token = (await context.params).token;
  const claims = check(token);
  if (!claims) return refused();
  return answerOrUnavailable(async () => {
    const { masked, orgName } = await withScope({ orgIds: [claims.o] }, () => unsubscribePreview(db, claims));
    return page(
      200,
      "Unsubscribe",
      `<h1>Unsubscribe ${html(masked)} from ${html(orgName)}?</h1>
<form method="post" action="/api/unsubscribe/${encodeURIComponent(token)}"><button type="submit">Unsubscribe</button></form>
<p>Nothing changes until you press the button.</p>`,
    );
  }, "We cannot reach our records right now. Please try again in a minute.");
}

function check(token: string): UnsubscribeClaims | null {
  const verdict = verifyUnsubscribeToken(token);
  return verdict.ok ? verdict.claims : null;
}

const refused = () =>
  page(400, "Link not valid", "<h1>This unsubscribe link is not valid</h1><p>It may have been changed or copied only in part. Nothing was changed. Use the link in the email itself.</p>");
