/**
 * Slack reads `<!channel>`, `<url|label>` and `&entities;` in every mrkdwn text, a message's top-level `text`
 * included (the notification people see). Text from outside Holdfast (a run's input, a model's draft, a member's
 * name) goes through this before it is put into one; Slack asks for exactly these three
 * (api.slack.com/reference/surfaces/formatting#escaping). The tokens Holdfast adds on purpose (`<!date^…>`, links
 * to its own pages) are written around the escaped text, never through it. plain_text (a header) is shown as typed
 * and is not escaped.
 */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
