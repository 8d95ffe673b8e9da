/**
 * fetch with a deadline that also covers reading the body: a frozen (SIGSTOPped) server can hold a connection open
 * without answering, and the sender must give up on it like a provider's HTTP client would.
 */
export async function fetchWithin(url: string, init: RequestInit, timeoutMs: number): Promise<{ status: number; headers: Headers; text: string }> {
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      abort.abort();
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([
      (async () => {
        const res = await fetch(url, { ...init, signal: abort.signal });
        return { status: res.status, headers: res.headers, text: await res.text() };
      })(),
      deadline,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
