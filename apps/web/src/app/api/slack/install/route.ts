import { isDatabaseUnreachable } from "@holdfast/core/run";
import { outages } from "../../../../server/db";
import { backToSettings, startInstall } from "../../../../server/slack-install";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** Add to Slack (Settings' button posts here): to Slack's consent page with a state for this session and organisation. */
export function POST(request: Request): Promise<Response> {
  return startInstall(request).catch((error: unknown) => {
    if (!isDatabaseUnreachable(error)) throw error;
    outages.report(error);
    return backToSettings(null, { slack_error: "Holdfast cannot reach its database right now, so Slack was not added: try Add to Slack again in a minute." });
  });
}
