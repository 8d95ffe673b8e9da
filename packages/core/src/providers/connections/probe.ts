import type { Db } from "@holdfast/db";
import { smtpTransport } from "./smtp-transport";
import { smtpConnectionConfig } from "../../versions/connection-kinds/smtp";
import { type EgressOptions, egressRefusalOf } from "../net/egress";
import { type ConnectionRow, connectionsMarkChecked, connectionsMarkNeedsReconnect, connectionsSmtpStale } from "../../store/sql/connections";
import { resumeConnection } from "./connect";
import { decryptSecret } from "./secrets";

export type ProbeResult = { status: "ok"; resumed: number } | { status: "needs_reconnect"; reason: string } | { status: "unreachable"; reason: string };

/**
 * The connection health probe: logs in without sending (SMTP EHLO + AUTH), so a revoked password is found before a
 * run reaches it. A refused login marks the connection (runs then park at once, without trying); a login that works
 * again clears the mark and resumes the steps parked on it. An unreachable server changes nothing: that is the
 * retry policy's business, not a person's.
 */
export async function probeConnection(db: Db, connection: ConnectionRow, egress?: EgressOptions): Promise<ProbeResult> {
  if (connection.kind !== "smtp") return { status: "ok", resumed: 0 };
  const parsed = smtpConnectionConfig.safeParse(connection.config);
  if (!parsed.success) {
    const reason = `the connection's settings are invalid: ${parsed.error.issues[0]?.message}`;
    await connectionsMarkNeedsReconnect(db, connection.orgId, connection.id, reason);
    return { status: "needs_reconnect", reason };
  }
  const config = parsed.data;
  const password = connection.secret ? decryptSecret(connection.secret, connection.orgId, connection.id) : null;
  let transport: Awaited<ReturnType<typeof smtpTransport>> | undefined;
  try {
    transport = await smtpTransport(config, password, egress);
    await transport.verify();
  } catch (error) {
    // A host the egress guard refuses is never contacted; the connection is left as it is (like an unreachable
    // one): a send through it fails with the same message, and the guard's settings belong to the operator.
    const refused = egressRefusalOf(error);
    if (refused) return { status: "unreachable", reason: refused.message };
    const e = error as Error & { code?: string };
    if (e.code === "EAUTH") {
      const reason = `the mailbox "${connection.name}" refused our login: reconnect it (${e.message})`;
      await connectionsMarkNeedsReconnect(db, connection.orgId, connection.id, reason);
      return { status: "needs_reconnect", reason };
    }
    return { status: "unreachable", reason: e.message };
  } finally {
    transport?.close();
  }
  if (connection.status === "needs_reconnect" && connection.secret) {
    // It works again (the provider restored the account): resume what parked on it, with the same secret.
    // ... unless a person reconnected with a new secret meanwhile (then their reconnect resumed the steps).
    return { status: "ok", resumed: await resumeConnection(db, connection.orgId, connection.id, connection.secret, "probe", connection.secret) };
  }
  await connectionsMarkChecked(db, connection.orgId, connection.id);
  return { status: "ok", resumed: 0 };
}

/** The sweeper's schedule: connections not checked for `staleSeconds`, oldest first, across organisations. */
export async function probeStaleConnections(db: Db, staleSeconds: number, limit: number): Promise<Record<ProbeResult["status"], number>> {
  return probeConnections(db, await connectionsSmtpStale(db, staleSeconds, limit));
}

/** Each connection logged into in turn (`probeConnection`), counted by what the login found. */
export async function probeConnections(db: Db, rows: ConnectionRow[]): Promise<Record<ProbeResult["status"], number>> {
  const counts = { ok: 0, needs_reconnect: 0, unreachable: 0 };
  for (const row of rows) counts[(await probeConnection(db, row)).status]++;
  return counts;
}
