import { createConnection, type Socket } from "node:net";

export type SmtpOutcome = { kind: "accepted" } | { kind: "temporary"; reply: string } | { kind: "refused"; reply: string };

/**
 * Hands one message to an SMTP server the way a sending mail server does: EHLO, MAIL, RCPT, DATA; a 4xx reply or a
 * dropped connection is "temporary" (the sender keeps the message and tries later), a 5xx is a refusal.
 */
export async function sendSmtp(o: { port: number; from: string; to: string; data: string; timeoutMs?: number }): Promise<SmtpOutcome> {
  let socket: Socket | undefined;
  try {
    socket = createConnection({ host: "127.0.0.1", port: o.port });
    socket.setTimeout(o.timeoutMs ?? 15_000);
    const s = socket;
    let buffer = "";
    const waiters: ((line: string) => void)[] = [];
    const failed = new Promise<never>((_, reject) => {
      s.on("error", reject);
      s.on("timeout", () => reject(new Error("timed out")));
      s.on("close", () => reject(new Error("connection closed")));
    });
    failed.catch(() => undefined);
    s.on("data", (chunk) => {
      buffer += chunk.toString();
      // A reply ends with a line whose code is followed by a space ("250 OK"), after any "250-..." lines.
      for (;;) {
        const m = /^(\d{3}) [^\r\n]*\r?\n/m.exec(buffer);
        if (!m) break;
        buffer = buffer.slice(m.index + m[0].length);
        waiters.shift()?.(m[0].trim());
      }
    });
    const reply = () => Promise.race([new Promise<string>((r) => waiters.push(r)), failed]);
    const step = async (line: string | null, ok: RegExp): Promise<SmtpOutcome | null> => {
      if (line !== null) s.write(`${line}\r\n`);
      const r = await reply();
      if (ok.test(r)) return null;
      return r.startsWith("4") ? { kind: "temporary", reply: r } : { kind: "refused", reply: r };
    };
    const body = o.data.replace(/\r?\n/g, "\r\n").replace(/^\./gm, "..");
    for (const [line, ok] of [
      [null, /^220/],
      ["EHLO mx.soak.test", /^250/],
      [`MAIL FROM:<${o.from}>`, /^250/],
      [`RCPT TO:<${o.to}>`, /^25[01]/],
      ["DATA", /^354/],
      [`${body}\r\n.`, /^250/],
    ] as const) {
      const outcome = await step(line, ok);
      if (outcome) return outcome;
    }
    s.write("QUIT\r\n");
    return { kind: "accepted" };
  } catch (error) {
    return { kind: "temporary", reply: (error as Error).message };
  } finally {
    socket?.destroy();
  }
}
