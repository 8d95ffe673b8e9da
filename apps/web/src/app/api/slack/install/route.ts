import { startInstall } from "../../../../server/slack-install";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** Add to Slack (Settings' button posts here): to Slack's consent page with a state for this session and organisation. */
export function POST(request: Request): Promise<Response> {
  return startInstall(request);
}
