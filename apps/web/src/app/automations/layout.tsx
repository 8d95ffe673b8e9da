import type { ReactNode } from "react";
import { TrpcProvider } from "../../server/trpc/client";

export default function AutomationsLayout({ children }: { children: ReactNode }) {
  return <TrpcProvider>{children}</TrpcProvider>;
}
