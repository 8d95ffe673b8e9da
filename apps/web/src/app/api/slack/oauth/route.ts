import { isDatabaseUnreachable } from "@holdfast/core/run";
import { outages } from "../../../../server/db";
import { backToSettings, finishInstall } from "../../../../server/slack-install";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** Slack's OAuth v2 redirect: the code and state come back here, then the browser goes back to Settings. */
export function GET(request: Request): Promise<Response> {
  return finishInstall(request).catch((error: unknown) => {
    if (!isDatabaseUnreachable(error)) throw error;
    outages.report(error);
    return backToSettings(null, { slack_error: "Holdfast cannot reach its database right now, so Slack was not added: try Add to Slack again in a minute." });
  });
}
