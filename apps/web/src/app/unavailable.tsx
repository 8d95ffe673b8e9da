import { AutoRefresh } from "./auto-refresh";

/**
 * Shown instead of a page while the database cannot be reached (the web's pages load everything from it). It says
 * what is going on and what happens next, and reloads by itself every 15 seconds until the page can be shown.
 */
export function Unavailable() {
  return (
    <section className="unavailable" role="alert" data-testid="service-unavailable">
      <h1>Holdfast is unavailable right now</h1>
      <p>
        It cannot reach its database, so this page cannot be shown. Nothing is lost: runs carry on from where they were once the database is
        back, and webhook senders are asked to send their deliveries again later.
      </p>
      <p className="muted">This page reloads by itself. If it stays like this for more than a few minutes, tell whoever runs Holdfast that its database is not answering.</p>
      <AutoRefresh ms={15_000} />
    </section>
  );
}
