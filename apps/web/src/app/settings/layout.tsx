import type { ReactNode } from "react";
import { TrpcProvider } from "../../server/trpc/client";

export default function SettingsLayout({ children }: { children: ReactNode }) {
  return <TrpcProvider>{children}</TrpcProvider>;
}
