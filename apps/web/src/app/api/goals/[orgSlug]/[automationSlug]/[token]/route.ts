// An automation's goal URL in url_token mode, for senders that cannot sign: the token in the path is the credential.
export { DELETE, GET, PATCH, POST, PUT } from "../../../../../../server/goal-routes";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";
