/**
 * Which organisation an inbound reply belongs to, from the address it was sent to: `reply+<org>@inbound.example.com`
 * or `<org>@inbound.example.com`. Null when it names no organisation (the receiver refuses that recipient).
 */
export function orgOfRecipient(address: string): string | null {
  const local = address.trim().toLowerCase().split("@")[0] ?? "";
  const tag = local.includes("+") ? local.slice(local.indexOf("+") + 1) : local;
  return /^[a-z0-9][a-z0-9-]{0,62}$/.test(tag) ? tag : null;
}
