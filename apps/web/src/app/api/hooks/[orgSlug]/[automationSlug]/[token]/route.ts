// A trigger in url_token mode, for form tools that cannot sign: the token in the path is the credential.
export { DELETE, GET, PATCH, POST, PUT } from "../../../../../../server/hook-routes";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";
