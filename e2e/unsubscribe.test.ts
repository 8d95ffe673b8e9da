import { createConnection } from "@holdfast/core/providers";
import { productProcesses, publish, screenshots, replyGraph, type SmtpTarget, startSmtpTarget, startTestDeployment, startTestRun, type TestDeployment, waitFor } from "@holdfast/testkit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * One-click unsubscribe (RFC 8058) through real processes: the io lane sends with List-Unsubscribe and
 * List-Unsubscribe-Post; a POST to the link on the built web app suppresses the address once; a GET, a changed or a
 * forged link suppresses nothing; the contact's next email is skipped with the reason.
 */
let d: TestDeployment;
let smtp: SmtpTarget;
let orgId = "";
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);

beforeAll(async () => {
  d = await startTestDeployment();
  smtp = d.closeAtStop(await startSmtpTarget());
  ({ orgId } = await publish(d.t.db, replyGraph(), { automation: "ask" }));
  await createConnection(d.t.db, { orgId, kind: "smtp", name: "mail", config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "sam@acme.test" }, secret: null });
  await d.startWeb();
  await d.startApps(productProcesses({ io: { HOLDFAST_PUBLIC_URL: d.web.base } }), 90_000);
});
afterAll(async () => d?.stop());

let seq = 0;
/** Starts a run for `email` and returns its send step once settled. */
async function send(email: string) {
  const runId = await startTestRun(d.t.db, "ask", { id: `evt_${++seq}`, email });
  const [step] = await waitFor(async () => {
    const r = await q("SELECT id, output FROM steps WHERE run_id = $1 AND node_id = 'send' AND status = 'done'", [runId]);
    return r.length ? r : undefined;
  }, 20_000, "the send step to settle");
  return step as { id: string; output: Record<string, unknown> };
}

/** A header of a received message, with folded lines unfolded. */
function header(raw: string, name: string): string | null {
  const head = (raw.split(/\r?\n\r?\n/)[0] ?? "").replace(/\r?\n[ \t]+/g, " ");
  return new RegExp(`^${name}:\\s*(.+)$`, "im").exec(head)?.[1]?.trim() ?? null;
}

const shot = screenshots("unsubscribe");
const suppressions = (email: string) => q("SELECT email, reason FROM suppressions WHERE org_id = $1 AND email = $2", [orgId, email]);

describe("one-click unsubscribe", () => {
  it("the email carries the signed link; GET asks, POST suppresses once; a changed link is refused; the next send is skipped", async () => {
    const first = await send("Lena@Example.com");
    const mail = smtp.received.find((m) => m.messageId === first.output.messageId);
    expect(mail).toBeDefined();
    const list = header(mail?.raw ?? "", "List-Unsubscribe");
    expect(header(mail?.raw ?? "", "List-Unsubscribe-Post")).toBe("List-Unsubscribe=One-Click");
    const url = /^<(.+)>$/.exec(list ?? "")?.[1] ?? "";
    expect(url.startsWith(`${d.web.base}/api/unsubscribe/`)).toBe(true);

    // A GET (a person's click, a link scanner) shows a question and a button; it suppresses nothing.
    const page = await fetch(url);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("Unsubscribe le***@example.com from");
    expect(html).toMatch(/<form method="post" action="\/api\/unsubscribe\/[^"]+"><button type="submit">Unsubscribe<\/button>/);
    expect(html).not.toMatch(/token|effect|suppress|HMAC|org_/i);
    expect(await suppressions("lena@example.com")).toEqual([]);

    // Changed or forged links: 400 in plain words, nothing suppressed.
    const token = url.slice(url.lastIndexOf("/") + 1);
    const [body, mac] = token.split(".") as [string, string];
    const claims = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
    const other = Buffer.from(JSON.stringify({ ...claims, m: "kim@example.com" })).toString("base64url");
    for (const bad of [`${other}.${mac}`, `${body}.${mac[0] === "A" ? "B" : "A"}${mac.slice(1)}`, "nonsense", `${body}.${mac}.x`]) {
      const res = await fetch(`${d.web.base}/api/unsubscribe/${bad}`, { method: "POST", body: "List-Unsubscribe=One-Click" });
      expect(res.status, bad).toBe(400);
      expect(await res.text()).toContain("This unsubscribe link is not valid");
    }
    expect(await q("SELECT email FROM suppressions WHERE org_id = $1", [orgId])).toEqual([]);

    // RFC 8058's POST: suppressed at once; a repeat answers 200 and says so.
    const post = () => fetch(url, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "List-Unsubscribe=One-Click" });
    // Five clicks at once (a provider's retry, a person's double click): one suppresses, the others read "already".
    const answers = await Promise.all(Array.from({ length: 5 }, async () => {
      const res = await post();
      return `${res.status} ${/is (already )?unsubscribed/.exec(await res.text())?.[0]}`;
    }));
    expect(answers.sort()).toEqual(["200 is already unsubscribed", "200 is already unsubscribed", "200 is already unsubscribed", "200 is already unsubscribed", "200 is unsubscribed"]);
    expect(await suppressions("lena@example.com")).toEqual([{ email: "lena@example.com", reason: "unsubscribed by one click" }]);
    const again = await post();
    expect(again.status).toBe(200);
    expect(await again.text()).toContain("is already unsubscribed");
    expect(await q("SELECT count(*)::int AS n FROM suppressions WHERE org_id = $1", [orgId])).toEqual([{ n: 1 }]);

    // The contact's next email is skipped, with the reason recorded for its run page; nothing reaches the server.
    const before = smtp.received.length;
    const next = await send("lena@example.com");
    expect(next.output).toMatchObject({ skipped: true, reason: "suppressed: unsubscribed by one click", to: "lena@example.com" });
    expect(smtp.received.length).toBe(before);
    // The run page says "Email to … not sent: <reason>" from this output (run/runs/story-steps.ts); the timeline too.
    expect(await q("SELECT data->>'reason' AS reason FROM run_events WHERE step_id = $1 AND type = 'step.skipped'", [next.id])).toEqual([{ reason: "suppressed: unsubscribed by one click" }]);
  });

  it("in a browser: the page asks once, in plain words, and its button unsubscribes", async () => {
    const sent = await send("kim@example.com");
    const raw = smtp.received.find((m) => m.messageId === sent.output.messageId)?.raw ?? "";
    const url = /^<(.+)>$/.exec(header(raw, "List-Unsubscribe") ?? "")?.[1] ?? "";
    const browser = await d.launchBrowser();
    const page = await browser.newPage();
    await page.goto(url);
    await page.getByRole("heading", { name: "Unsubscribe ki***@example.com from" , exact: false }).waitFor();
    await shot(page, "asks");
    expect(await suppressions("kim@example.com")).toEqual([]);
    await page.getByRole("button", { name: "Unsubscribe" }).click();
    await page.getByRole("heading", { name: "ki***@example.com is unsubscribed" }).waitFor();
    await shot(page, "done");
    expect(await suppressions("kim@example.com")).toEqual([{ email: "kim@example.com", reason: "unsubscribed by one click" }]);
  });
});
