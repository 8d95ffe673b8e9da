import { approveActionId, rejectActionId } from "@holdfast/core/people";
import { fetchWithin } from "./http";
import { sleep } from "./infra/exec";
import { backoffMs } from "./load";
import { approver, indexOf, type Plan, planFor } from "./mix";
import { sendSmtp } from "./smtp-client";
import type { SlackApi, SmtpTarget } from "./testkit";
import { slackInteraction } from "./testkit";

export interface HumanFigures {
  slackClicks: number;
  inboxClicks: number;
  /** Decisions that reached the product (its answer said decided, or that someone already had). */
  decided: number;
  /** Slack-route approvals whose Slack message never came, decided in the inbox after a minute instead. */
  slackFallbacks: number;
  /**
   * Clicks refused with token_not_for_this_message although the button was on that approval's own message (Slack
   * showed the post before the notifier stored where it is; fixed: such a click now decides). Expected 0; the
   * approver clicks again, as a person would.
   */
  slackRefusedBeforeStored: number;
  repliesSmtp: number;
  repliesApi: number;
  /** Reply attempts the receiving side asked to repeat (451, 5xx, no connection). */
  replyRetries: number;
  /** Answers no retry can change (a refused reply, an inbox form refused): listed in the report. */
  refusals: string[];
}

export interface Humans {
  figures: HumanFigures;
  stop(): Promise<void>;
}

export interface HumanOptions {
  seed: number;
  webs: string[];
  slack: SlackApi;
  smtp: SmtpTarget;
  signingSecret: string;
  cookie: string;
  mailInPort: number;
  inboundToken: string;
  log: (line: string) => void;
}

/**
 * The people around the runs, scripted: an approver who clicks Approve or Reject in Slack (a signed interaction to
 * the web's Slack route) or in the approvals inbox (the page's own form, posted as a browser without JavaScript
 * would), and contacts who reply to the email they got, through the SMTP receiver (mail-in) or the inbound-email
 * webhook, or not at all. Who does what is `planFor(seed, i)`, read from the contact address the product shows.
 */
export function startHumans(o: HumanOptions): Humans {
  const figures: HumanFigures = { slackClicks: 0, inboxClicks: 0, decided: 0, slackFallbacks: 0, slackRefusedBeforeStored: 0, repliesSmtp: 0, repliesApi: 0, replyRetries: 0, refusals: [] };
  let stopped = false;
  let turn = 0;
  const web = () => o.webs[turn++ % o.webs.length] as string;
  const decided = new Set<string>();
  const firstSeen = new Map<string, number>();
  const refusedEarly = new Map<string, number>();
  /** Inbox decisions the web answered "Something went wrong ... Try again": tried again, as its message asks. */
  const failedTries = new Map<string, number>();
  let lastFullLook = 0;

  // Slack messages arrive in order and are only changed in place (an update takes the buttons away), so new ones are
  // read once from a cursor and the ones still to decide are kept by approval.
  let slackReadUpTo = 0;
  const open = new Map<string, { m: SlackApi["messages"][number]; p: Plan }>();
  const posted = new Set<string>();
  const readSlack = () => {
    for (; slackReadUpTo < o.slack.messages.length; slackReadUpTo++) {
      const m = o.slack.messages[slackReadUpTo];
      const approvalId = m?.metadata?.event_payload.approval_id;
      const i = m ? indexOf(m.text) : null;
      if (approvalId) posted.add(approvalId);
      if (m && approvalId && i !== null && !decided.has(approvalId)) open.set(approvalId, { m, p: planFor(o.seed, i) });
    }
    for (const id of open.keys()) if (decided.has(id)) open.delete(id);
  };
  const buttons = (m: SlackApi["messages"][number]) =>
    m.blocks.find((b) => (b as { type: string }).type === "actions") as { elements: { action_id: string; value: string }[] } | undefined;

  const clickOne = async (approvalId: string, m: SlackApi["messages"][number], p: Plan): Promise<void> => {
    const actionId = p.decision === "approved" ? approveActionId : rejectActionId;
    const value = buttons(m)?.elements.find((e) => e.action_id === actionId)?.value;
    if (!value) {
      open.delete(approvalId); // decided elsewhere: the update took its buttons away
      return;
    }
    const req = slackInteraction(o.signingSecret, {
      teamId: o.slack.teamId,
      userId: approver.slackUserId,
      channel: m.channel,
      ts: m.ts,
      actionId,
      value,
      responseUrl: `${o.slack.origin}/response/${approvalId}`,
    });
    figures.slackClicks++;
    try {
      const res = await fetchWithin(`${web()}/api/slack/interactions`, { method: "POST", headers: req.headers, body: req.body }, 10_000);
      const text = res.text;
      if (res.status === 200) {
        decided.add(approvalId);
        figures.decided++;
      } else if (res.status === 403 && text.includes("token_not_for_this_message") && (refusedEarly.get(approvalId) ?? 0) < 20) {
        refusedEarly.set(approvalId, (refusedEarly.get(approvalId) ?? 0) + 1);
        figures.slackRefusedBeforeStored++;
      } else if (res.status < 500 && res.status !== 408 && res.status !== 429) {
        decided.add(approvalId);
        figures.refusals.push(`slack click on ${approvalId}: ${res.status} ${text.slice(0, 200)}`);
      }
    } catch {
      // No answer: clicked again on the next round, as a person would.
    }
  };

  const clickSlack = async (): Promise<void> => {
    readSlack();
    const mine = [...open].filter(([, x]) => x.p.approveVia === "slack");
    // A few clicks at a time: several approvers at their desks.
    for (let k = 0; k < mine.length; k += 8) await Promise.all(mine.slice(k, k + 8).map(([id, x]) => clickOne(id, x.m, x.p)));
  };

  const clickInbox = async (): Promise<void> => {
    const base = web();
    // The inbox page is costly to render: load it only when an approval the approver decides there is waiting
    // (every approval is also posted to Slack, where its contact, and so its plan, can be read).
    readSlack();
    const waiting = [...open.values()].some((x) => x.p.approveVia === "inbox" && buttons(x.m));
    if (!waiting && Date.now() - lastFullLook < 30_000) return;
    lastFullLook = Date.now();
    let html: string;
    try {
      const res = await fetchWithin(`${base}/approvals`, { headers: { cookie: o.cookie }, redirect: "manual" }, 10_000);
      if (res.status !== 200) return;
      html = res.text;
    } catch {
      return;
    }
    for (const card of html.matchAll(/<li[^>]*data-approval="(apr_[0-9a-f]+)"[^>]*>([\s\S]*?)<\/li>/g)) {
      const [, approvalId, inner] = card as unknown as [string, string, string];
      if (decided.has(approvalId)) continue;
      const i = indexOf(inner);
      if (i === null) continue;
      const p = planFor(o.seed, i);
      const seen = firstSeen.get(approvalId) ?? Date.now();
      firstSeen.set(approvalId, seen);
      // Slack's message first; if it has not come within a minute, the approver decides in the inbox instead.
      const fallback = p.approveVia === "slack" && Date.now() - seen > 60_000 && !posted.has(approvalId);
      if (p.approveVia !== "inbox" && !fallback) continue;
      if (fallback) figures.slackFallbacks++;
      await postInboxForm(base, approvalId, inner, p);
    }
  };

  const postInboxForm = async (base: string, approvalId: string, card: string, p: Plan) => {
    // The decision's own form (the card also holds "Edit before approving"'s form, which this approver never uses).
    const form = /<form([^>]*class="decide"[^>]*)>([\s\S]*?)<\/form>/.exec(card);
    if (!form) return;
    const action = /action="([^"]*)"/.exec(form[1] ?? "")?.[1] ?? "";
    const body = new FormData();
    for (const input of (form[2] ?? "").matchAll(/<input([^>]*)\/?>/g)) {
      const attrs = input[1] ?? "";
      const name = /name="([^"]*)"/.exec(attrs)?.[1];
      if (name) body.append(htmlText(name), htmlText(/value="([^"]*)"/.exec(attrs)?.[1] ?? ""));
    }
    body.append("decision", p.decision);
    figures.inboxClicks++;
    try {
      const target = action && !action.startsWith("javascript:") ? new URL(htmlText(action), `${base}/approvals`).toString() : `${base}/approvals`;
      // As a browser without JavaScript posts the form: its own origin, the session cookie, multipart.
      const res = await fetchWithin(target, { method: "POST", headers: { cookie: o.cookie, origin: base }, body, redirect: "manual" }, 10_000);
      const location = res.headers.get("location") ?? "";
      const outcome = decodeURIComponent(location.split("?")[1] ?? "");
      if (res.status >= 300 && res.status < 400 && outcome.startsWith("done=")) {
        decided.add(approvalId);
        figures.decided++;
      } else if (res.status >= 300 && res.status < 400 && /^error=(Already recorded|Not recorded: (approved|rejected) by)/.test(outcome)) {
        decided.add(approvalId);
        figures.decided++;
      } else if (res.status >= 300 && res.status < 400 && /^error=Not recorded: Holdfast is busy/.test(outcome)) {
        // Not saved while the database was away: the approver clicks again on the next round, as a person would.
      } else if (res.status >= 300 && res.status < 400 && /^error=Not recorded: Something went wrong/.test(outcome) && (failedTries.get(approvalId) ?? 0) < 3) {
        // "nothing was changed. Try again": the approver does, on the next round, up to three times; the report
        // still lists the answer (an internal error is a finding even when the next click lands).
        failedTries.set(approvalId, (failedTries.get(approvalId) ?? 0) + 1);
        figures.refusals.push(`inbox decision on ${approvalId} (tried again): ${outcome.slice(0, 200)}`);
      } else if (res.status >= 300 && res.status < 400) {
        figures.refusals.push(`inbox decision on ${approvalId}: ${outcome.slice(0, 200)}`);
        decided.add(approvalId);
      }
      // 5xx or no answer: the next round finds the card again.
    } catch {
      // No answer: tried again on the next round.
    }
  };

  // Replies: every email the plain SMTP sink got, answered once by its recipient (or not, by plan).
  let readUpTo = 0;
  const replied = new Set<number>();
  const queue: { at: number; tries: number; p: Plan; replyTo: string; messageId: string; subject: string }[] = [];
  const collectReplies = () => {
    for (; readUpTo < o.smtp.received.length; readUpTo++) {
      const m = o.smtp.received[readUpTo];
      const i = m ? indexOf(m.to.join(",")) : null;
      if (!m || i === null || replied.has(i)) continue;
      const p = planFor(o.seed, i);
      replied.add(i);
      if (p.replyVia === "none" || !m.replyTo || !m.messageId) continue;
      queue.push({ at: Date.now() + p.replyDelayMs, tries: 0, p, replyTo: m.replyTo, messageId: m.messageId, subject: m.subject ?? "" });
    }
  };
  const sendReply = async (r: (typeof queue)[number]): Promise<"done" | "again"> => {
    const messageId = `<reply-${o.seed}-${r.p.i}@mx.soak.test>`;
    if (r.p.replyVia === "smtp") {
      const data = [
        `From: ${r.p.email}`,
        `To: ${r.replyTo}`,
        `Subject: Re: ${r.subject}`,
        `Message-ID: ${messageId}`,
        `In-Reply-To: ${r.messageId}`,
        `Date: ${new Date().toUTCString()}`,
        "",
        "Thanks, that works for me.",
      ].join("\r\n");
      const outcome = await sendSmtp({ port: o.mailInPort, from: r.p.email, to: r.replyTo, data });
      if (outcome.kind === "accepted") {
        figures.repliesSmtp++;
        return "done";
      }
      if (outcome.kind === "refused") {
        figures.refusals.push(`reply of ${r.p.email} refused by mail-in: ${outcome.reply}`);
        return "done";
      }
      return "again";
    }
    try {
      const res = await fetchWithin(
        `${web()}/api/signals/email`,
        {
          method: "POST",
          headers: { authorization: `Bearer ${o.inboundToken}`, "content-type": "application/json" },
          body: JSON.stringify({ messageId, from: r.p.email, to: r.replyTo, subject: `Re: ${r.subject}`, inReplyTo: r.messageId, text: "Thanks, that works for me." }),
        },
        10_000,
      );
      const text = res.text;
      if (res.status >= 200 && res.status < 300) {
        figures.repliesApi++;
        return "done";
      }
      if (res.status < 500 && res.status !== 408 && res.status !== 429) {
        figures.refusals.push(`reply of ${r.p.email} refused by the webhook: ${res.status} ${text.slice(0, 200)}`);
        return "done";
      }
    } catch {
      // no answer
    }
    return "again";
  };
  const reply = async () => {
    collectReplies();
    const due = queue.filter((r) => r.at <= Date.now());
    await Promise.all(
      due.slice(0, 16).map(async (r) => {
        if ((await sendReply(r)) === "done") queue.splice(queue.indexOf(r), 1);
        else {
          figures.replyRetries++;
          r.tries++;
          r.at = Date.now() + backoffMs(r.tries);
        }
      }),
    );
  };

  const loops = [
    (async () => {
      while (!stopped) {
        await clickSlack().catch((e) => o.log(`slack clicker: ${(e as Error).message}`));
        await sleep(300);
      }
    })(),
    (async () => {
      while (!stopped) {
        await clickInbox().catch((e) => o.log(`inbox clicker: ${(e as Error).message}`));
        await sleep(700);
      }
    })(),
    (async () => {
      while (!stopped) {
        await reply().catch((e) => o.log(`replier: ${(e as Error).message}`));
        await sleep(200);
      }
    })(),
  ];
  return {
    figures,
    async stop() {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

/** HTML attribute text back to characters (&amp; &quot; &#x27; ...). */
function htmlText(s: string): string {
  return s
    .replace(/&quot;/g, '"')
    .replace(/&#x27;|&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}
