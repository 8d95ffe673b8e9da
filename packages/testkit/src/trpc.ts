/** A tRPC procedure's answer: its data, or the error's code, HTTP status and message. */
export type TrpcReply = { ok: true; data: unknown } | { ok: false; code: string; status: number; message: string };

/** A tRPC call over HTTP to the web app at `base` as the browser makes it (superjson envelope), with a session cookie. */
export async function trpcCall(base: string, cookie: string, path: string, input: unknown, type: "query" | "mutation" = "mutation"): Promise<TrpcReply> {
  const body = JSON.stringify({ json: input });
  const res =
    type === "query"
      ? await fetch(`${base}/api/trpc/${path}?input=${encodeURIComponent(body)}`, { headers: { cookie } })
      : await fetch(`${base}/api/trpc/${path}`, { method: "POST", headers: { cookie, "content-type": "application/json" }, body });
  const json = (await res.json()) as { result?: { data: { json: unknown } }; error?: { json: { message: string; data: { code: string; httpStatus: number } } } };
  if (json.error) return { ok: false, code: json.error.json.data.code, status: json.error.json.data.httpStatus, message: json.error.json.message };
  return { ok: true, data: json.result?.data.json };
}

/** The data of a tRPC call that must succeed; its error code and message otherwise. */
export async function trpcData<T>(reply: Promise<TrpcReply>): Promise<T> {
  const r = await reply;
  if (!r.ok) throw new Error(`${r.code}: ${r.message}`);
  return r.data as T;
}
