import type { Metadata } from "next";
import Link from "next/link";
import type { ReactNode } from "react";
import { currentUser } from "../server/session";
import { orUnavailable, unavailable } from "../server/unavailable";
import { BrokenConnections } from "./broken-connections";
import "./globals.css";
import { HydrationMark } from "./hydration-mark";
import { signOutAction } from "./signin/actions";
import { Unavailable } from "./unavailable";

export const metadata: Metadata = { title: "Holdfast", description: "Durable automation runs" };

export default async function RootLayout({ children }: { children: ReactNode }) {
  // Without the database no page can be shown: say so in words instead of an error page.
  const found = await orUnavailable(currentUser);
  const down = found === unavailable;
  const user = down ? null : found;
  return (
    <html lang="en">
      <body>
        <HydrationMark />
        <header className="top">
          <Link href="/" className="brand">
            Holdfast
          </Link>
          <nav className="nav">
            <Link href="/">Runs</Link>
            <Link href="/automations">Automations</Link>
            <Link href="/approvals">Approvals</Link>
            <Link href="/settings">Settings</Link>
            <span className="me">
              {user ? (
                <>
                  <span className="muted small">{user.name}</span>
                  <form action={signOutAction}>
                    <button type="submit" className="linklike">
                      Sign out
                    </button>
                  </form>
                </>
              ) : (
                <Link href="/signin">Sign in</Link>
              )}
            </span>
          </nav>
        </header>
        <main>
          {down ? (
            <Unavailable />
          ) : (
            <>
              <BrokenConnections user={user} />
              {children}
            </>
          )}
        </main>
      </body>
    </html>
  );
}
