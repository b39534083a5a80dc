import { createServer, type Server } from 'node:http';

/** What a data source's server answers to one fetch: a status and a JSON body, or `hang` (never answers: the sync times out). */
export type JsonAnswer = { status: number; body: unknown } | 'hang';

/**
 * A JSON server on 127.0.0.1 for http_json data sources (contract 16), answering each request as `answer` says
 * (called once per request, in arrival order). The bench and the chaos run start one in their own process.
 */
export async function startJsonSource(
  answer: () => JsonAnswer,
): Promise<{ url: string; requests: () => number; stop: () => Promise<void> }> {
  let requests = 0;
  const server: Server = createServer((req, res) => {
    requests++;
    req.resume();
    const a = answer();
    if (a === 'hang') return;
    res.writeHead(a.status, { 'content-type': 'application/json' }).end(JSON.stringify(a.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/value`,
    requests: () => requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
