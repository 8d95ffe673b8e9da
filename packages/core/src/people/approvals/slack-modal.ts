import type { EmailDraft } from "../../base/types/approvals";

/**
 * The Slack modal of "Edit before approving", as a pure function of the approval's draft: the recipient (not
 * editable), a subject input and a multiline body input prefilled with the draft, and Save and approve. Its
 * private_metadata is the edit token (edit-token.ts), so the submission says which approval, step and content it
 * edits. Slack's limits: a plain_text_input holds at most 3000 characters, a title 24, private_metadata 3000.
 */
export const editCallbackId = "holdfast.approval.edit";
export const subjectBlock = "subject";
export const bodyBlock = "body";
/** Slack's longest plain_text_input: longer drafts are edited in the inbox. */
export const slackInputMax = 3000;

export function editModal(draft: EmailDraft, token: string): Record<string, unknown> {
  const blocks: unknown[] = [
    { type: "context", elements: [{ type: "plain_text", text: `To: ${draft.to} (the recipient stays as it is)`.slice(0, 2000), emoji: false }] },
    {
      type: "input",
      block_id: subjectBlock,
      label: { type: "plain_text", text: "Subject" },
      element: { type: "plain_text_input", action_id: subjectBlock, initial_value: draft.subject, max_length: 300 },
    },
    {
      type: "input",
      block_id: bodyBlock,
      label: { type: "plain_text", text: "Text" },
      element: { type: "plain_text_input", action_id: bodyBlock, multiline: true, initial_value: draft.text ?? "", max_length: slackInputMax },
    },
  ];
  if (draft.html !== null) {
    blocks.push({
      type: "context",
      elements: [{ type: "mrkdwn", text: "This email also has an HTML version. If you change the text, only your text is sent: the HTML version is dropped." }],
    });
  }
  return {
    type: "modal",
    callback_id: editCallbackId,
    title: { type: "plain_text", text: "Edit before approving" },
    submit: { type: "plain_text", text: "Save and approve" },
    close: { type: "plain_text", text: "Cancel" },
    private_metadata: token,
    blocks,
  };
}

/** Whether the draft fits Slack's inputs (else the Edit button is not offered and the inbox edits it). */
export const fitsSlackModal = (draft: EmailDraft | null): draft is EmailDraft => draft !== null && (draft.text ?? "").length <= slackInputMax && draft.subject.length <= 300;
