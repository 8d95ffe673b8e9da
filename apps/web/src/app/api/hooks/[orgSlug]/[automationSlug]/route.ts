// A trigger in signed mode (Standard Webhooks headers); the handlers are shared with the URL-token route.
export { DELETE, GET, PATCH, POST, PUT } from "../../../../../server/hook-routes";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";
