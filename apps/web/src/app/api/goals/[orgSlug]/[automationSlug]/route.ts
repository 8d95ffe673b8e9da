// An automation's goal URL in signed mode (Standard Webhooks headers); the handlers are shared with the URL-token route.
export { DELETE, GET, PATCH, POST, PUT } from "../../../../../server/goal-routes";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";
