import { handleSlackInteraction, postEphemeral } from "@holdfast/core/people";
import { readBodyLimited } from "../../../../server/body";
import { db } from "../../../../server/db";
import { errorResponse } from "../../../../server/hooks";
import { withScope } from "../../../../server/scope";
import { env } from "../../../../env";
import { answerOrUnavailable } from "../../../../server/unavailable";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** Largest interactivity body accepted (Slack's block_actions payloads are a few KB). */
const maxBytes = 64 * 1024;

/**
 * Slack's interactivity endpoint: an Approve / Reject / Edit button pressed on an approval message, or the edit
 * modal submitted. The exact bytes are verified (signature, 5-minute window), then the button's or the modal's
 * token, then the decision or the edit (core/approvals).
 */
export async function POST(request: Request): Promise<Response> {
  const body = await readBodyLimited(request, maxBytes);
  if (!body.ok) return body.response;
  // Deployment-wide scope: the request is verified with the deployment's Slack signing secret, then the button's
  // token (bound to one organisation, run and step), and every query inside is filtered by that organisation.
  return answerOrUnavailable(() => answerSlack(request, body.text()), "Holdfast cannot reach its database right now: nothing was recorded; press the button again in a minute.");
}

async function answerSlack(request: Request, text: string): Promise<Response> {
  const reply = await withScope({ allOrgs: true }, () => handleSlackInteraction(
    db,
    {
      body: text,
      signature: request.headers.get("x-slack-signature"),
      timestamp: request.headers.get("x-slack-request-timestamp"),
    },
    env.SLACK_SIGNING_SECRET ?? "",
  ));
  if (reply.ephemeral) void postEphemeral(reply.ephemeral);
  // A modal's submission: Slack reads the body as its answer (close the modal, or errors under its inputs).
  if (reply.view !== undefined) return reply.view ? Response.json(reply.view) : new Response(null, { status: 200 });
  if (reply.status >= 400) return errorResponse(reply.status, reply.body.error ?? "refused", reply.body.message);
  return Response.json(reply.body, { status: reply.status });
}

const notAllowed = () => errorResponse(405, "method_not_allowed", "Slack interactions are POSTed", { allow: "POST" });

export const GET = notAllowed;
export const PUT = notAllowed;
export const PATCH = notAllowed;
export const DELETE = notAllowed;
