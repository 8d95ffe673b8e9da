/** The palette: every node kind the engine runs, with the config a new node starts from and its labelled outputs. */
export interface KindInfo {
  kind: string;
  label: string;
  outputs: string[] | null;
  config: Record<string, unknown>;
}

export const palette: KindInfo[] = [
  { kind: "trigger", label: "Trigger (webhook)", outputs: null, config: { eventIdField: "id" } },
  { kind: "wait", label: "Wait", outputs: null, config: { rule: { kind: "duration", seconds: 3600 } } },
  { kind: "branch", label: "Branch", outputs: ["true", "false"], config: { condition: { path: "input.plan", op: "eq", value: "pro" } } },
  { kind: "http_request", label: "HTTP request", outputs: null, config: { url: "https://example.com/hook", method: "POST" } },
  {
    kind: "model_draft",
    label: "Model draft",
    outputs: null,
    config: { connection: "model", prompt: "Write a short follow-up email to {{contact.email}}." },
  },
  { kind: "crm_upsert", label: "CRM upsert", outputs: null, config: { connection: "crm", object: "contact", fields: { email: "{{contact.email}}" } } },
  { kind: "send_email", label: "Send email", outputs: null, config: { connection: "mail", subject: "Following up", text: "Hello!" } },
  {
    kind: "approval",
    label: "Approval",
    outputs: ["approved", "rejected"],
    config: { approvers: { role: "approver" }, title: "Send this email?", content: "{{input.draft}}", deadlineSeconds: 86400, onDeadline: { action: "stop" } },
  },
  { kind: "wait_for_reply", label: "Wait for reply", outputs: ["reply", "timeout"], config: { replyTo: "send_email", timeoutSeconds: 259200 } },
  { kind: "end", label: "End", outputs: null, config: {} },
];

export const kindInfo = (kind: string): KindInfo | undefined => palette.find((k) => k.kind === kind);

/** A new, unused slug id for a node of this kind (ids are never regenerated after this). */
export function newNodeId(kind: string, taken: Set<string>): string {
  if (!taken.has(kind)) return kind;
  for (let i = 2; ; i++) if (!taken.has(`${kind}_${i}`)) return `${kind}_${i}`;
}
