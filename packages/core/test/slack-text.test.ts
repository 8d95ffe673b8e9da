import { describe, expect, it } from "vitest";
import { approvalMessage, slackNoteText } from "../src/people/approvals/slack-blocks";
import { escapeMrkdwn } from "../src/people/slack/mrkdwn";

/**
 * Slack reads `<!channel>`, `<url|label>` and `&` in every mrkdwn text, the message's top-level `text` included: what
 * came from outside (a run's input, a model's draft, a member's name) is escaped wherever Holdfast builds a Slack
 * message, while the date and link tokens Holdfast writes on purpose still work. Header blocks are plain_text and
 * shown as they are.
 */
const payload = "<!channel> <https://evil.example|click here> & co";
const escaped = "&lt;!channel&gt; &lt;https://evil.example|click here&gt; &amp; co";

const deadlineAt = new Date("2026-12-02T09:00:00Z");
const decidedAt = new Date("2026-12-01T11:40:00Z");
const pending = {
  id: "apr_1",
  runId: "run_1",
  title: `Send this email to ${payload}?`,
  content: `Hi ${payload},\nwelcome`,
  deadlineAt,
  status: "pending" as const,
  decidedByName: null,
  decidedAt: null,
  decidedVia: null,
  stage: 1,
};
const links = { runUrl: "https://holdfast.example/runs/run_1" };

/** Every text Slack reads as mrkdwn: the top-level text, sections and mrkdwn context elements (not plain_text). */
function mrkdwnTexts(body: { text: string; blocks: unknown[] }): string[] {
  const out = [body.text];
  for (const b of body.blocks as { type: string; text?: { type: string; text: string }; elements?: { type: string; text?: string }[] }[]) {
    if (b.text?.type === "mrkdwn") out.push(b.text.text);
    for (const e of b.elements ?? []) if (e.type === "mrkdwn" && e.text) out.push(e.text);
  }
  return out;
}

describe("Slack text built from outside data", () => {
  it("escapes only &, < and >", () => {
    expect(escapeMrkdwn(payload)).toBe(escaped);
    expect(escapeMrkdwn("plain words, *bold* and _it_")).toBe("plain words, *bold* and _it_");
  });

  it("a pending approval's notification text and sections escape the run's data; our date and run link still work", () => {
    const body = approvalMessage(pending, { approve: "a", reject: "r" }, links);
    expect(body.text).toBe(`Approval needed: Send this email to ${escaped}?`);
    for (const text of mrkdwnTexts(body)) {
      expect(text).not.toContain("<!channel>");
      expect(text).not.toContain("<https://evil.example");
    }
    expect(JSON.stringify(body.blocks)).toContain(`>Hi ${escaped},\\n>welcome`);
    const context = mrkdwnTexts(body)[2];
    expect(context).toContain(`<!date^${deadlineAt.getTime() / 1000}^{date_short_pretty} at {time}|2026-12-02T09:00:00.000Z>`);
    expect(context).toContain("<https://holdfast.example/runs/run_1|run run_1>");
    // The header is plain_text: Slack shows it as typed, so it is not escaped (it would show "&lt;").
    expect(body.blocks[0]).toEqual({ type: "header", text: { type: "plain_text", text: pending.title, emoji: false } });
  });

  it("a decided approval's text and outcome escape the title and the decider's name; the decision time is Slack's date token", () => {
    const body = approvalMessage({ ...pending, status: "approved", decidedByName: payload, decidedVia: "slack", decidedAt }, null, links);
    const date = `<!date^${decidedAt.getTime() / 1000}^{date_short_pretty} at {time}|2026-12-01T11:40:00.000Z>`;
    expect(body.text).toBe(`Send this email to ${escaped}?: Approved by ${escaped} (slack) ${date}`);
    expect(mrkdwnTexts(body).at(-1)).toBe(`*Approved by ${escaped} (slack) ${date}*`);
    for (const text of mrkdwnTexts(body)) expect(text).not.toContain("<!channel>");
  });

  it("the ephemeral note to whoever pressed a button escapes the names it reads back", () => {
    const refusal = { reason: "already_decided" as const, message: `approved by ${payload} (inbox)`, status: "approved" as const, by: payload, at: decidedAt, via: "inbox" as const, mine: false };
    const approval = { id: "apr_1", runId: "run_1", stepId: "stp_1" };
    expect(slackNoteText({ message: refusal.message, decision: { ok: false, refusal, approval } })).toBe(`Not recorded: approved by ${escaped} (inbox)`);
    expect(slackNoteText({ message: "this button has expired" })).toBe("Not recorded: this button has expired");
  });
});
