import type { EgressOptions } from "../net/egress";
import { egressSmtpTransport } from "../net/smtp";
import type { SmtpConnectionConfig } from "../../versions/connection-kinds/smtp";

/**
 * A nodemailer SMTP transport for a connection (one conversation per send or probe; closed by the caller), to the
 * address the egress guard checked. Throws EgressRefusedError for a refused host.
 */
export function smtpTransport(config: SmtpConnectionConfig, password: string | null, egress?: EgressOptions) {
  return egressSmtpTransport({
    host: config.host,
    port: config.port,
    secure: config.tls === "implicit",
    requireTLS: config.tls === "starttls",
    ignoreTLS: config.tls === "none",
    ...(config.user ? { auth: { user: config.user, pass: password ?? "" } } : {}),
    connectionTimeout: config.timeoutMs,
    greetingTimeout: config.timeoutMs,
    socketTimeout: config.timeoutMs,
  }, egress);
}
