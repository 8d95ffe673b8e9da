import { createConnection } from "@holdfast/core/providers";
import { parseGraph } from "@holdfast/core/versions";
import {
  addMember,
  mailInPort,
  mailInSpec,
  productProcesses,
  publish,
  screenshots,
  signInPage,
  type SmtpTarget,
  startSmtpTarget,
  startTestDeployment,
  startTestRun,
  type TestDeployment,
  testPassword,
  waitFor,
} from "@holdfast/testkit";
import nodemailer from "nodemailer";
import { percent } from "../apps/web/src/app/percent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { selectStep } from "./fixtures/editor";

/**
 * Email outcomes (issue 43) through real processes: the io lane sends with its links rewritten through the web's
 * signed redirect, an unsubscribe footer and a VERP envelope sender at the inbound domain; the built web app records
 * clicks and redirects only to links that were in the message; mail-in takes a delivery status notification (RFC
 * 3464) over SMTP at the message's bounce address and marks the message bounced, suppressing the address only for a
 * permanent failure. Every outcome's first occurrence writes its count once.
 */
const domain = "bounce.acme.test";
let d: TestDeployment;
let smtp: SmtpTarget;
let orgId = "";
let mailIn = 0;
const q = (sql: string, p: unknown[] = []) => d.q(sql, p);
const shot = screenshots("email-outcomes");

const graph = parseGraph({
  nodes: [
    { id: "t", kind: "trigger", config: { eventIdField: "id" } },
    {
      id: "send",
      kind: "send_email",
      config: {
        connection: "mail",
        subject: "Spring offer",
        text: "Read it at https://shop.example.com/offer?a=1&b=2. Or reply.",
        html: '<html><body><p>See <a href="https://shop.example.com/offer?a=1&amp;b=2">the offer</a> and <a href="mailto:sam@acme.test">write</a>.</p></body></html>',
      },
    },
    { id: "await_reply", kind: "wait_for_reply", config: { replyTo: "send", timeoutSeconds: 3600 } },
    { id: "replied", kind: "end" },
    { id: "silent", kind: "end" },
  ],
  edges: [
    { from: "t", to: "send" },
    { from: "send", to: "await_reply" },
    { from: "await_reply", to: "replied", label: "reply" },
    { from: "await_reply", to: "silent", label: "timeout" },
  ],
});

beforeAll(async () => {
  d = await startTestDeployment();
  smtp = d.closeAtStop(await startSmtpTarget());
  ({ orgId } = await publish(d.t.db, graph, { automation: "offer" }));
  await createConnection(d.t.db, { orgId, kind: "smtp", name: "mail", config: { host: "127.0.0.1", port: smtp.port, tls: "none", from: "sam@acme.test" }, secret: null });
  await d.startWeb();
  // The sweeper folds count_changes into journey_counts (deleting them) every half second: here it folds hourly, so
  // each run's own changes stay to be read (`changes`).
  const sweeper = { app: "sweeper", env: { SWEEP_INTERVAL_MS: "500", SWEEP_COUNT_FOLD_INTERVAL_MS: "3600000" } } as const;
  await d.startApps([...productProcesses({ io: { HOLDFAST_PUBLIC_URL: d.web.base, INBOUND_EMAIL_DOMAIN: domain }, human: {} }, { sweeper: false }), sweeper, mailInSpec], 90_000);
  mailIn = mailInPort(d.app("mail-in"));
});
afterAll(async () => d?.stop());

let tab: import("playwright-core").Page | undefined;
/** A browser tab signed in as the organisation's owner (made once). */
async function ownerTab() {
  if (tab) return tab;
  await addMember(d.t.db, orgId, "owner@acme.test", "Owner", "owner", { password: testPassword });
  tab = await (await d.launchBrowser()).newPage();
  await signInPage(tab, d.web.base, "owner@acme.test", testPassword);
  return tab;
}

let seq = 0;
/** Starts a run for `email`; its send step once settled, and the message the SMTP server received (if any). */
async function send(email: string) {
  const runId = await startTestRun(d.t.db, "offer", { id: `evt_${++seq}`, email });
  const [step] = await waitFor(async () => {
    const r = await q("SELECT id, output FROM steps WHERE run_id = $1 AND node_id = 'send' AND status = 'done'", [runId]);
    return r.length ? r : undefined;
  }, 20_000, "the send step to settle");
  const output = step.output as Record<string, string | boolean>;
  return { runId, stepId: step.id as string, output, mail: smtp.received.find((m) => m.messageId === output.messageId) };
}

const message = async (stepId: string) => (await q("SELECT * FROM email_messages WHERE step_id = $1", [stepId]))[0] as Record<string, unknown> | undefined;
const changes = async (runId: string) =>
  (await q("SELECT node_id, to_bucket FROM count_changes WHERE run_id = $1 AND (to_bucket LIKE 'email:%' OR to_bucket LIKE 'outcome:%') ORDER BY to_bucket, node_id", [runId])).map(
    (r) => `${r.node_id || "(run)"} ${r.to_bucket}`,
  );

/** The test's own count of the send step's messages (not test runs) that reached each outcome. */
async function sendStepScan() {
  const [row] = await q(
    `SELECT count(*)::int AS sent, count(m.delivered_at)::int AS delivered, count(m.bounced_at)::int AS bounced, count(m.opened_at)::int AS opened,
            count(m.clicked_at)::int AS clicked, count(m.replied_at)::int AS replied, count(m.unsubscribed_at)::int AS unsubscribed
     FROM email_messages m JOIN runs r ON r.id = m.run_id WHERE m.org_id = $1 AND m.node_id = 'send' AND NOT r.test`,
    [orgId],
  );
  return row as Record<"sent" | "delivered" | "bounced" | "opened" | "clicked" | "replied" | "unsubscribed", number>;
}

/** The same token with its claims changed and the old signature kept: what an attacker can make. */
function forge(token: string, change: Record<string, unknown>): string {
  const [body, mac] = token.split(".") as [string, string];
  const claims = JSON.parse(Buffer.from(body, "base64url").toString("utf8"));
  return `${Buffer.from(JSON.stringify({ ...claims, ...change })).toString("base64url")}.${mac}`;
}

// The spellings the sign-in redirect is tested against (apps/web/test/web-hygiene.test.ts), as a changed target.
const offSite = [
  "//evil.com",
  "/.//evil.com",
  "/%2e//evil.com",
  "/\\evil.com",
  "/%5cevil.com",
  "/%2f/evil.com",
  "/\t/evil.com",
  "https://evil.com",
  "https:evil.com",
  "https:/evil.com",
  "https://shop.example.com@evil.com/offer",
  "https://shop.example.com/offer?a=1&b=2#",
  "evil.com",
  "javascript:alert(1)",
  "JaVaScRiPt:alert(1)",
  "javascript%3aalert(1)",
  " javascript:alert(1)",
  "data:text/html,<script>alert(1)</script>",
  "https://evil.com%0d%0aSet-Cookie:x=1",
  "https://shop.example.com/offer?a=1&b=2\r\nLocation: https://evil.com",
];

describe("email outcomes", () => {
  it("a click through a message's link records once (100 at once) and redirects to that link; anything changed is 400 and no redirect", async () => {
    const sent = await send("lena@example.com");
    expect(sent.mail?.mailFrom).toMatch(new RegExp(`^bounce\\+[a-z2-7]{42}@${domain.replace(/\./g, "\\.")}$`));
    const html = String(sent.output.html);
    const text = String(sent.output.text);
    // The http(s) link goes through the redirect; the mailto: link is left alone; the footer links the unsubscribe page.
    const tracked = [...html.matchAll(/href="([^"]+)"/g)].map((m) => (m[1] as string).replace(/&#38;/g, "&"));
    expect(tracked[0]?.startsWith(`${d.web.base}/api/email/click/`)).toBe(true);
    expect(tracked[1]).toBe("mailto:sam@acme.test");
    expect(tracked[2]?.startsWith(`${d.web.base}/api/unsubscribe/`)).toBe(true);
    expect(html).not.toContain("shop.example.com");
    expect(text).toMatch(new RegExp(`^Read it at ${d.web.base}/api/email/click/[^\\s]+\\. Or reply\\.`));
    expect(text).toContain(`To stop these emails, unsubscribe: ${d.web.base}/api/unsubscribe/`);
    expect(await message(sent.stepId)).toMatchObject({ org_id: orgId, node_id: "send", recipient: "lena@example.com", message_id: sent.output.messageId, click_count: 0, clicked_at: null });
    expect(await changes(sent.runId)).toEqual(["send email:delivered", "send email:sent"]);

    const link = tracked[0] as string;
    const clicks = await Promise.all(Array.from({ length: 100 }, () => fetch(link, { redirect: "manual" })));
    expect(new Set(clicks.map((r) => `${r.status} ${r.headers.get("location")}`))).toEqual(new Set(["302 https://shop.example.com/offer?a=1&b=2"]));
    // The link in the text body is the same message's: it counts as a click too, still once for the message.
    const textLink = /(http:\/\/\S+\/api\/email\/click\/\S+)\. Or reply/.exec(text)?.[1] as string;
    expect((await fetch(textLink, { redirect: "manual" })).headers.get("location")).toBe("https://shop.example.com/offer?a=1&b=2");
    // A HEAD (a link checker that only looks) is told where it goes and counts nothing.
    const head = await fetch(link, { method: "HEAD", redirect: "manual" });
    expect([head.status, head.headers.get("location")]).toEqual([302, "https://shop.example.com/offer?a=1&b=2"]);
    expect(await message(sent.stepId)).toMatchObject({ click_count: 101 });
    expect((await message(sent.stepId))?.clicked_at).not.toBeNull();
    expect(await changes(sent.runId)).toEqual(["send email:clicked", "send email:delivered", "send email:sent", "(run) outcome:clicked"]);
    expect(await q("SELECT count(*)::int AS n FROM run_events WHERE run_id = $1 AND type = 'email.clicked'", [sent.runId])).toEqual([{ n: 1 }]);

    // Changed targets, messages, organisations or signatures: a plain 400 page, never a Location.
    const token = link.slice(link.lastIndexOf("/") + 1);
    const [body, mac] = token.split(".") as [string, string];
    const bad = [
      ...offSite.map((u) => forge(token, { u })),
      forge(token, { k: "another-message" }),
      forge(token, { o: "org_other" }),
      forge(token, { p: "open" }),
      `${body}.${mac[0] === "A" ? "B" : "A"}${mac.slice(1)}`,
      `${body}.${mac}.x`,
      body,
      "nonsense",
      `${body}.${mac}${"A".repeat(5_000)}`,
    ];
    for (const b of bad) {
      const res = await fetch(`${d.web.base}/api/email/click/${encodeURIComponent(b)}`, { redirect: "manual" });
      expect(res.status, b).toBe(400);
      expect(res.headers.get("location"), b).toBeNull();
      expect(await res.text()).toContain("This link is not valid");
    }
    expect(await message(sent.stepId)).toMatchObject({ click_count: 101 });
  });

  it("the footer's unsubscribe page suppresses the contact once; the next send is skipped with the reason on its run page", async () => {
    const sent = await send("kim@example.com");
    const url = /href="([^"]*\/api\/unsubscribe\/[^"]+)"/.exec(String(sent.output.html))?.[1] as string;
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toMatch(/style-src 'sha256-/);
    expect(await page.text()).toContain("Nothing changes until you press the button.");
    expect((await message(sent.stepId))?.unsubscribed_at).toBeNull();
    const answers = await Promise.all(Array.from({ length: 5 }, () => fetch(url, { method: "POST" }).then((r) => r.status)));
    expect(answers).toEqual([200, 200, 200, 200, 200]);
    expect(await q("SELECT email, reason FROM suppressions WHERE org_id = $1 AND email = 'kim@example.com'", [orgId])).toEqual([{ email: "kim@example.com", reason: "unsubscribed by one click" }]);
    expect((await message(sent.stepId))?.unsubscribed_at).not.toBeNull();
    expect(await changes(sent.runId)).toEqual(["send email:delivered", "send email:sent", "send email:unsubscribed"]);

    const before = smtp.received.length;
    const next = await send("kim@example.com");
    expect(next.output).toMatchObject({ skipped: true, reason: "suppressed: unsubscribed by one click" });
    expect(smtp.received.length).toBe(before);
    expect(await message(next.stepId)).toBeUndefined();
    expect(await changes(next.runId)).toEqual([]);

    // The run page of the skipped send says why, in words.
    const tab = await ownerTab();
    await tab.goto(`${d.web.base}/runs/${next.runId}`);
    await tab.getByText("suppressed: unsubscribed by one click").first().waitFor();
    await shot(tab, "skipped-after-unsubscribe");
    // The first run's page shows the message's outcomes with their instants.
    await tab.goto(`${d.web.base}/runs/${sent.runId}`);
    const outcomes = tab.locator("[data-email-outcomes]");
    await outcomes.waitFor();
    expect(await outcomes.textContent()).toMatch(/Unsubscribed/);
    await shot(tab, "outcomes");
  });

  it("a DSN sent to the message's bounce address over SMTP marks it bounced; 5.x.x suppresses the address, 4.x.x does not", async () => {
    const transport = nodemailer.createTransport({ host: "127.0.0.1", port: mailIn, secure: false, ignoreTLS: true });
    const dsn = (to: string, recipient: string, action: string, status: string, id: string) =>
      [
        "From: Mail Delivery System <MAILER-DAEMON@mx.example.net>",
        `To: ${to}`,
        "Subject: Undelivered Mail Returned to Sender",
        `Message-ID: <${id}@mx.example.net>`,
        "MIME-Version: 1.0",
        'Content-Type: multipart/report; report-type=delivery-status; boundary="b1"',
        "",
        "--b1",
        "Content-Type: text/plain; charset=us-ascii",
        "",
        "Your message could not be delivered.",
        "",
        "--b1",
        "Content-Type: message/delivery-status",
        "",
        "Reporting-MTA: dns; mx.example.net",
        "",
        `Final-Recipient: rfc822; ${recipient}`,
        `Action: ${action}`,
        `Status: ${status}`,
        `Diagnostic-Code: smtp; 550 ${status} <${recipient}>: Recipient address rejected`,
        "",
        "--b1",
        "Content-Type: text/rfc822-headers",
        "",
        "Subject: Spring offer",
        "",
        "--b1--",
        "",
      ].join("\r\n");
    const bounce = (to: string, recipient: string, action: string, status: string, id: string) =>
      transport.sendMail({ envelope: { from: "", to: [to] }, raw: dsn(to, recipient, action, status, id) });
    try {
      const gone = await send("bob@example.com");
      const full = await send("carl@example.com");
      const bobBounce = gone.mail?.mailFrom as string;
      const carlBounce = full.mail?.mailFrom as string;
      expect(bobBounce).not.toBe(carlBounce);

      // A bounce address this deployment did not issue is refused at RCPT; a delay is not a bounce.
      const forged = bobBounce.replace(/^bounce\+(.)/, (_m, c: string) => `bounce+${c === "a" ? "b" : "a"}`);
      await expect(bounce(forged, "bob@example.com", "failed", "5.1.1", "forged")).rejects.toThrow(/550/);
      await bounce(bobBounce, "bob@example.com", "delayed", "4.4.7", "delay");
      expect(await message(gone.stepId)).toMatchObject({ bounced_at: null, bounce_count: 0 });

      // The body's Final-Recipient is not trusted: the address it came to names the message.
      await bounce(bobBounce, "someone-else@example.com", "failed", "5.1.1", "bob-1");
      await bounce(carlBounce, "carl@example.com", "failed", "4.2.2", "carl-1");
      await bounce(bobBounce, "bob@example.com", "failed", "5.1.1", "bob-2"); // the same bounce again
    } finally {
      transport.close();
    }
    const bob = await waitFor(async () => {
      const m = await message((await q("SELECT step_id FROM email_messages WHERE recipient = 'bob@example.com'"))[0]?.step_id as string);
      return m?.bounce_count === 2 ? m : undefined;
    }, 10_000, "both bounces of bob's message");
    expect(bob).toMatchObject({ bounce_status: "5.1.1", bounce_detail: "550 5.1.1 <someone-else@example.com>: Recipient address rejected" });
    const carl = (await q("SELECT * FROM email_messages WHERE recipient = 'carl@example.com'"))[0];
    expect(carl).toMatchObject({ bounce_status: "4.2.2", bounce_count: 1 });
    expect(await changes(bob.run_id as string)).toEqual(["send email:bounced", "send email:delivered", "send email:sent"]);
    const suppressed = await q("SELECT email, reason FROM suppressions WHERE org_id = $1 AND email IN ('bob@example.com', 'carl@example.com', 'someone-else@example.com')", [orgId]);
    expect(suppressed).toEqual([{ email: "bob@example.com", reason: "bounced (5.1.1): the address does not take mail" }]);

    // The next email to the bounced address is skipped with the reason; the transient bounce's address still gets one.
    expect((await send("bob@example.com")).output).toMatchObject({ skipped: true, reason: "suppressed: bounced (5.1.1): the address does not take mail" });
    expect((await send("carl@example.com")).output).toMatchObject({ messageId: expect.any(String), to: "carl@example.com" });
  });

  it("a reply to the message marks it replied once; the run's first reply counts once", async () => {
    const sent = await send("maya@example.com");
    await waitFor(async () => (await q("SELECT status FROM steps WHERE run_id = $1 AND node_id = 'await_reply'", [sent.runId]))[0]?.status === "waiting", 20_000, "the reply wait");
    const transport = nodemailer.createTransport({ host: "127.0.0.1", port: mailIn, secure: false, ignoreTLS: true });
    try {
      await transport.sendMail({ from: "maya@example.com", to: sent.mail?.replyTo as string, subject: "Re: Spring offer", text: "Yes!", messageId: "<maya-1@mail.example.com>" });
      await transport.sendMail({ from: "maya@example.com", to: sent.mail?.replyTo as string, subject: "Re: Spring offer", text: "And again", messageId: "<maya-2@mail.example.com>" });
    } finally {
      transport.close();
    }
    const m = await waitFor(async () => {
      const row = await message(sent.stepId);
      return row?.reply_count === 2 ? row : undefined;
    }, 10_000, "both replies");
    expect(m.replied_at).not.toBeNull();
    expect(await changes(sent.runId)).toEqual(["send email:delivered", "send email:replied", "send email:sent", "(run) outcome:replied"]);
  });

  it("open tracking is off by default; on, the HTML carries a signed pixel that records the first open once", async () => {
    const off = await send("nina@example.com");
    expect(String(off.output.html)).not.toContain("/api/email/open/");
    // The owner turns it on in the trigger's panel, which says why an open is only a hint.
    const page = await ownerTab();
    const [{ id: automationId }] = await q("SELECT id FROM automations WHERE org_id = $1 AND slug = 'offer'", [orgId]);
    await page.goto(`${d.web.base}/automations/${automationId}`);
    await selectStep(page, "t");
    const box = page.locator('input[name="track-opens"]');
    expect(await box.isChecked()).toBe(false);
    await page.getByText("an \"open\" is a hint, not proof", { exact: false }).waitFor();
    await box.click();
    await waitFor(async () => (await q("SELECT track_opens FROM automations WHERE id = $1", [automationId]))[0]?.track_opens === true || undefined, 10_000, "open tracking on");
    await expect.poll(() => box.isChecked()).toBe(true);
    await page.locator('[data-email-rates="send"]').first().waitFor();
    await shot(page, "automation-email-settings");
    const on = await send("omar@example.com");
    const pixel = (/<img src="([^"]+\/api\/email\/open\/[^"]+)"/.exec(String(on.output.html))?.[1] ?? "").replace(/&#38;/g, "&");
    expect(pixel).not.toBe("");
    expect(String(on.output.text)).not.toContain("/api/email/open/");
    const answers = await Promise.all(Array.from({ length: 20 }, () => fetch(pixel)));
    expect(new Set(answers.map((r) => `${r.status} ${r.headers.get("content-type")}`))).toEqual(new Set(["200 image/gif"]));
    expect(await message(on.stepId)).toMatchObject({ open_count: 20 });
    expect(await changes(on.runId)).toEqual(["send email:delivered", "send email:opened", "send email:sent"]);
    const token = pixel.slice(pixel.lastIndexOf("/") + 1);
    expect((await fetch(`${d.web.base}/api/email/open/${forge(token, { k: "another" })}`)).status).toBe(400);
    expect((await fetch(`${d.web.base}/api/email/open/${forge(token, { p: "click", u: "https://evil.com" })}`)).status).toBe(400);
    // The send step's panel shows its rates.
    await page.goto(`${d.web.base}/automations/${automationId}`);
    await selectStep(page, "send");
    const rates = page.locator('section[data-email-rates="send"]');
    await rates.waitFor();
    // Its figures (read from the journey counts) equal the test's own scan of the messages, each of its base.
    const s = await sendStepScan();
    expect(s.opened).toBe(1);
    const shown = async () => Object.fromEntries(await rates.locator("dd[data-rate]").evaluateAll((dds) => dds.map((dd) => [dd.getAttribute("data-rate"), dd.textContent])));
    const ofBase = (k: keyof typeof s, base: "sent" | "delivered") => `${percent(s[k], s[base])} (${s[k]} of ${s[base]})`;
    expect(await shown()).toEqual({
      sent: String(s.sent),
      delivered: ofBase("delivered", "sent"),
      bounced: ofBase("bounced", "sent"),
      opened: ofBase("opened", "delivered"),
      clicked: ofBase("clicked", "delivered"),
      replied: ofBase("replied", "delivered"),
      unsubscribed: ofBase("unsubscribed", "delivered"),
    });
    expect(s.bounced + s.clicked + s.replied).toBeGreaterThan(0); // the earlier tests' outcomes are in the figures
    await rates.scrollIntoViewIfNeeded();
    await shot(page, "send-step-rates");
    // The run page: the message's own outcome from its row, and the step's figures, the same counts in a sentence.
    await page.goto(`${d.web.base}/runs/${on.runId}`);
    expect(await page.locator('[data-outcome="opened"]').textContent()).not.toBe("not yet");
    const step = page.locator('[data-email-step-rates="send"]');
    const sentence = await step.textContent();
    expect(sentence).toContain(
      `Of the ${s.sent} emails this step has sent (all versions, all time): ${percent(s.delivered, s.sent)} delivered, ${percent(s.bounced, s.sent)} bounced; ` +
        `of those delivered: ${percent(s.opened, s.delivered)} opened, ${percent(s.clicked, s.delivered)} clicked, ${percent(s.replied, s.delivered)} replied, ` +
        `${percent(s.unsubscribed, s.delivered)} unsubscribed.`,
    );
    await step.scrollIntoViewIfNeeded();
    await shot(page, "run-page-step-rates");
    await q("UPDATE automations SET track_opens = false WHERE org_id = $1 AND slug = 'offer'", [orgId]);
  });
});
