export async function runSpike(_o: { quick: boolean; waits?: number; spreads?: number[]; orgs?: number }): Promise<boolean> {
  throw new Error("not yet");
}
