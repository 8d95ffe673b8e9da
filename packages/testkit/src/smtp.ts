import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";

export interface ReceivedEmail {
  messageId: string | null;
  effectKey: string | null;
  to: string[];
  subject: string | null;
  /** The Reply-To header (a routing address when inbound email is configured). */
  replyTo: string | null;
  /** The envelope sender (MAIL FROM), where bounces go; null for the null sender. */
  mailFrom: string | null;
  raw: string;
  at: number;
}

/**
 * A real SMTP server on 127.0.0.1 (the smtp-server package) that records every message it accepts. Options: a
 * required login (`credentials`, to test revoked passwords), dropping a second message with a Message-ID it has
 * already accepted (`dedupeMessageId`, a provider that honours it), and the highest number of concurrent sessions.
 */
export interface SmtpTarget {
  port: number;
  received: ReceivedEmail[];
  /** Messages per effect key. */
  byKey(): Map<string, number>;
  maxConcurrent(): number;
  setCredentials(c: { user: string; pass: string } | null): void;
  close(): Promise<void>;
}

export async function startSmtpTarget(
  options: { credentials?: { user: string; pass: string }; dedupeMessageId?: boolean; /** Before the final 250, after the message is kept. */ replyDelayMs?: number } = {},
): Promise<SmtpTarget> {
  let credentials = options.credentials ?? null;
  const received: ReceivedEmail[] = [];
  const seen = new Set<string>();
  let open = 0;
  let maxOpen = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onConnect(_session, cb) {
      open++;
      maxOpen = Math.max(maxOpen, open);
      cb();
    },
    onClose() {
      open--;
    },
    onAuth(auth, _session, cb) {
      if (credentials && auth.username === credentials.user && auth.password === credentials.pass) return cb(null, { user: auth.username });
      const error = new Error("Invalid username or password") as Error & { responseCode: number };
      error.responseCode = 535;
      return cb(error);
    },
    onMailFrom(_address, session, cb) {
      if (credentials && !session.user) {
        const error = new Error("Authentication required") as Error & { responseCode: number };
        error.responseCode = 530;
        return cb(error);
      }
      cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        const head = raw.split(/\r?\n\r?\n/)[0] ?? "";
        const header = (name: string) => new RegExp(`^${name}:\\s*(.+)$`, "im").exec(head)?.[1]?.trim() ?? null;
        const messageId = header("Message-ID");
        const reply = () => (options.replyDelayMs ? setTimeout(() => cb(null), options.replyDelayMs) : cb(null));
        if (options.dedupeMessageId && messageId && seen.has(messageId)) return reply(); // accepted again, not delivered twice
        if (messageId) seen.add(messageId);
        received.push({
          messageId,
          effectKey: header("X-Holdfast-Effect-Key"),
          to: session.envelope.rcptTo.map((r) => r.address),
          subject: header("Subject"),
          replyTo: header("Reply-To"),
          mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address || null : null,
          raw,
          at: Date.now(),
        });
        // Kept (delivered) before the answer: a client that dies while waiting for it cannot tell.
        reply();
      });
    },
  });
  // A client killed mid-session (the crash tests) resets its socket: expected, not a test failure.
  server.on("error", () => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    received,
    byKey() {
      const m = new Map<string, number>();
      for (const r of received) if (r.effectKey) m.set(r.effectKey, (m.get(r.effectKey) ?? 0) + 1);
      return m;
    },
    maxConcurrent: () => maxOpen,
    setCredentials(c) {
      credentials = c;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A received message's parts (MIME, as nodemailer writes it): the text/plain body decoded, and whether it has HTML. */
export function emailBody(m: Pick<ReceivedEmail, "raw">): { text: string | null; html: string | null } {
  const parts: { type: string; body: string }[] = [];
  const walk = (entity: string) => {
    const [head = "", ...rest] = entity.split(/\r?\n\r?\n/);
    const unfolded = head.replace(/\r?\n[ \t]+/g, " ");
    const header = (name: string) => new RegExp(`^${name}:\\s*(.+)$`, "im").exec(unfolded)?.[1]?.trim() ?? "";
    const type = header("Content-Type").toLowerCase();
    const body = rest.join("\n\n");
    const boundary = /boundary="?([^";]+)"?/i.exec(header("Content-Type"))?.[1];
    if (type.startsWith("multipart/") && boundary) {
      for (const part of body.split(`--${boundary}`).slice(1)) if (!part.startsWith("--")) walk(part.replace(/^\r?\n/, ""));
      return;
    }
    parts.push({ type: type.split(";")[0] ?? "", body: decode(body, header("Content-Transfer-Encoding").toLowerCase()) });
  };
  walk(m.raw);
  return { text: parts.find((p) => p.type === "text/plain")?.body ?? null, html: parts.find((p) => p.type === "text/html")?.body ?? null };
}

function decode(body: string, encoding: string): string {
  const trimmed = body.replace(/\r\n/g, "\n").replace(/\n+$/, "");
  if (encoding === "base64") return Buffer.from(trimmed.replace(/\s+/g, ""), "base64").toString("utf8");
  if (encoding !== "quoted-printable") return trimmed;
  const bytes: number[] = [];
  const soft = trimmed.replace(/=\n/g, "");
  for (let i = 0; i < soft.length; i++) {
    const hex = soft[i] === "=" ? /^[0-9A-F]{2}/i.exec(soft.slice(i + 1, i + 3)) : null;
    if (hex) {
      bytes.push(Number.parseInt(hex[0], 16));
      i += 2;
    } else bytes.push(...Buffer.from(soft[i] as string, "utf8"));
  }
  return Buffer.from(bytes).toString("utf8");
}
