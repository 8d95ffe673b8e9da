import { createHash } from "node:crypto";

/**
 * The small public pages a person reaches from an email (unsubscribe, a tracked link that is not valid): plain HTML
 * with one inline style sheet, allowed by its hash, and nothing else (no scripts, no outside requests, no framing).
 */
const style = `body{margin:0;background:#f6f6f4;color:#1d1d1b;font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif}
main{max-width:32rem;margin:12vh auto;padding:2rem;background:#fff;border:1px solid #deded9;border-radius:8px}
h1{font-size:1.3rem;line-height:1.3;margin:0 0 1rem}p,form{margin:0 0 1rem}p{color:#4a4a46}main>:last-child{margin-bottom:0}
button{font:inherit;padding:.55rem 1.2rem;border:0;border-radius:6px;background:#1d1d1b;color:#fff;cursor:pointer}
button:focus-visible{outline:3px solid #6b8cff;outline-offset:2px}`;
const styleHash = createHash("sha256").update(style).digest("base64");

export function plainPage(status: number, title: string, body: string): Response {
  const doc = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title><style>${style}</style></head><body><main>${body}</main></body></html>`;
  return new Response(doc, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "referrer-policy": "no-referrer",
      "content-security-policy": `default-src 'none'; style-src 'sha256-${styleHash}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
      "x-robots-tag": "noindex",
    },
  });
}

export const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
