"use client";

import { type ButtonHTMLAttributes, useSyncExternalStore } from "react";

const subscribe = () => () => {};

/**
 * False in the server's HTML and until React has hydrated this page, true after. A form whose submit is handled in
 * the browser (onSubmit) must not be sendable before then: the browser would submit it natively, as a GET to the page
 * itself, so what was typed is lost and lands in the address bar and the server's logs (an email, a member's address).
 */
export function useHydrated(): boolean {
  return useSyncExternalStore(
    subscribe,
    () => true,
    () => false,
  );
}

/**
 * The submit button of a form handled in the browser: disabled until the page has hydrated (see useHydrated) and
 * while the save is under way (`pending`), so a click made too early or twice by accident sends nothing twice.
 */
export function SubmitButton({ pending = false, disabled = false, ...rest }: ButtonHTMLAttributes<HTMLButtonElement> & { pending?: boolean }) {
  const hydrated = useHydrated();
  return <button {...rest} type="submit" disabled={!hydrated || pending || disabled} aria-busy={pending || undefined} />;
}
