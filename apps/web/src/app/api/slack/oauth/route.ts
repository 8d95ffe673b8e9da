import { finishInstall } from "../../../../server/slack-install";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

/** Slack's OAuth v2 redirect: the code and state come back here, then the browser goes back to Settings. */
export function GET(request: Request): Promise<Response> {
  return finishInstall(request);
}
