import { type MessageRef, issueClickToken, issueOpenToken, isTrackableTarget, maxTrackingToken } from "./tokens";

/**
 * What a real run's email gets before it goes out (issue 43): its http(s) links rewritten through the web's signed
 * redirect (clicks), a 1x1 pixel when the automation tracks opens, and a short footer with the unsubscribe link. A
 * test run's email gets none of it, so "Send to me" shows the original links.
 */
export interface Decoration {
  /** The web's public address (HOLDFAST_PUBLIC_URL). */
  base: string;
  message: MessageRef;
  trackOpens: boolean;
  /** The unsubscribe confirmation page's link; null: no footer. */
  unsubscribeUrl: string | null;
  /**
   * The hosts the step's templates write out themselves (writtenHostsOf): only a link to one of them goes through the
   * redirect. A URL that came in through a variable (a form's field, a contact's attribute) is left as it is, so
   * whoever fills a form cannot get a lasting redirect from this deployment's address to a site of their choosing.
   */
  writtenHosts: ReadonlySet<string>;
}

/** The host names of the absolute http(s) URLs written literally in templates (a host made by a variable is none). */
export function writtenHostsOf(...templates: (string | undefined)[]): Set<string> {
  const hosts = new Set<string>();
  for (const t of templates) {
    for (const m of (t ?? "").matchAll(/https?:\/\/[^\s/?#"'<>{}\\]+/gi)) {
      const host = URL.canParse(m[0]) ? new URL(m[0]).hostname : "";
      if (host !== "") hosts.add(host);
    }
  }
  return hosts;
}

const hostOf = (url: string) => (URL.canParse(url) ? new URL(url).hostname : null);

export const clickUrl = (base: string, m: MessageRef, target: string) => `${base}/api/email/click/${issueClickToken(m, target)}`;
export const openPixelUrl = (base: string, m: MessageRef) => `${base}/api/email/open/${issueOpenToken(m)}`;

const attr = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const unattr = (s: string) =>
  s.replace(/&(amp|lt|gt|quot|apos|#(\d{1,7})|#x([0-9a-f]{1,6}));/gi, (m, name: string, dec?: string, hex?: string) => {
    const code = dec ? Number(dec) : hex ? Number.parseInt(hex, 16) : null;
    if (code !== null) return code <= 0x10ffff ? String.fromCodePoint(code) : m;
    return ({ amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" } as Record<string, string>)[name.toLowerCase()] ?? m;
  });

/** Every `href` of an `<a>` or `<area>` that is an absolute http(s) URL (and `allowed`), through the redirect; others are left. */
export function trackHtmlLinks(html: string, track: (target: string) => string, allowed: (target: string) => boolean = () => true): string {
  return html.replace(/(<(?:a|area)\b[^>]*?\shref\s*=\s*)("([^"]*)"|'([^']*)')/gi, (whole, head: string, _q, dq?: string, sq?: string) => {
    const target = unattr((dq ?? sq ?? "").trim());
    return isTrackableTarget(target) && allowed(target) ? `${head}"${attr(track(target))}"` : whole;
  });
}

/** Every bare http(s) URL of a plain-text body through the redirect (a closing bracket or stop after it stays text). */
export function trackTextLinks(text: string, track: (target: string) => string, allowed: (target: string) => boolean = () => true): string {
  return text.replace(/https?:\/\/[^\s<>"']+/gi, (found) => {
    const target = found.replace(/[.,;:!?)\]}]+$/, "");
    return isTrackableTarget(target) && allowed(target) ? `${track(target)}${found.slice(target.length)}` : found;
  });
}

function beforeBodyEnd(html: string, insert: string): string {
  const at = html.search(/<\/body\s*>/i);
  return at === -1 ? `${html}${insert}` : `${html.slice(0, at)}${insert}${html.slice(at)}`;
}

export const footerText = (url: string) => `\n\n--\nTo stop these emails, unsubscribe: ${url}\n`;
export const footerHtml = (url: string) =>
  `<p style="margin-top:24px;font-size:12px;color:#666666">Don't want these emails? <a href="${attr(url)}" style="color:#666666">Unsubscribe</a>.</p>`;

/** The bodies as they go out: links tracked first (the footer's unsubscribe link is not), then footer and pixel. */
export function decorateEmail(body: { text?: string | undefined; html?: string | undefined }, d: Decoration): { text?: string; html?: string } {
  // A link whose token would be longer than the redirect takes (a long URL of non-ASCII characters: its UTF-8 bytes
  // grow in base64) goes out as it is, not as a link that answers "not valid".
  const written = (target: string) => d.writtenHosts.has(hostOf(target) ?? "") && issueClickToken(d.message, target).length <= maxTrackingToken;
  const track = (target: string) => clickUrl(d.base, d.message, target);
  const out: { text?: string; html?: string } = {};
  if (body.text !== undefined) out.text = `${trackTextLinks(body.text, track, written)}${d.unsubscribeUrl ? footerText(d.unsubscribeUrl) : ""}`;
  if (body.html !== undefined) {
    let html = trackHtmlLinks(body.html, track, written);
    if (d.unsubscribeUrl) html = beforeBodyEnd(html, footerHtml(d.unsubscribeUrl));
    if (d.trackOpens) html = beforeBodyEnd(html, `<img src="${attr(openPixelUrl(d.base, d.message))}" width="1" height="1" alt="" style="border:0;width:1px;height:1px">`);
    out.html = html;
  }
  return out;
}
