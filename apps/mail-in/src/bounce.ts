import type { ParsedMail } from "mailparser";

/**
 * The delivery status of a notification (RFC 3464: multipart/report with a message/delivery-status part), as text
 * for core's readDeliveryStatus. mailparser hands that part over as an attachment or, as it does today, folds it into
 * the text body after the human-readable part; either way its per-recipient blocks (Action, Status) are in it.
 */
export function deliveryStatusOf(mail: ParsedMail): string {
  const part = mail.attachments.find((a) => /^message\/(global-)?delivery-status$/i.test(a.contentType));
  return (part ? part.content.toString("utf8") : (mail.text ?? "")).slice(0, 100_000);
}
