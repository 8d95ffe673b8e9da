import nodemailer from "nodemailer";
import type SMTPTransport from "nodemailer/lib/smtp-transport";
import { type EgressOptions, resolveEgress } from "./egress";

/**
 * A nodemailer SMTP transport through the egress guard: the host is resolved and checked first, and nodemailer is
 * given the checked address (so it resolves nothing itself) with `servername` set to the original name for SNI,
 * STARTTLS and the certificate check. Throws EgressRefusedError for a refused host.
 */
export async function egressSmtpTransport(options: SMTPTransport.Options & { host: string; port: number }, egress: EgressOptions = {}) {
  const to = await resolveEgress(options.host, options.port, egress);
  return nodemailer.createTransport({ ...options, host: to.address, ...(to.literal ? {} : { servername: to.host }) });
}

/**
 * A transport that connects to nothing: nodemailer builds the message (MIME, headers) into memory, as a send over SMTP
 * would put it on the wire. A test run's emails (run/connectors/simulate.ts) are built this way and never sent.
 */
export function inMemoryMailTransport() {
  return nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "unix" });
}
