import type { Metadata } from "next";
import Link from "next/link";
import type { ReactNode } from "react";
import "./globals.css";

export const metadata: Metadata = { title: "Holdfast", description: "Durable automation runs" };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <header className="top">
          <Link href="/" className="brand">
            Holdfast
          </Link>
          <span className="muted">durable automation engine</span>
        </header>
        <main>{children}</main>
      </body>
    </html>
  );
}
