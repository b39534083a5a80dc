import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createServer } from 'node:net';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ListTablesCommand,
  ResourceInUseException,
  UpdateTableCommand,
} from '@aws-sdk/client-dynamodb';
import { createTableInput, TABLE_DEFINITION } from '#shared/db/table.ts';

/** DynamoDB Local, the official emulator, whose jar ships in the npm package amplify-dynamodb-simulator. */
export function emulatorDir(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve('amplify-dynamodb-simulator/package.json')), 'emulator');
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

export interface DynamoLocal {
  endpoint: string;
  stop(): Promise<void>;
}

/** `heapMb`: the JVM's heap (default 512 MB; the full bench's in-memory table of millions of items needs more). */
export async function startDynamoLocal(opts: {
  port?: number;
  dbPath?: string;
  heapMb?: number;
  log?: (line: string) => void;
}): Promise<DynamoLocal> {
  // A free port found here can be taken by another process before the JVM binds it (two stacks starting at once):
  // DynamoDB Local then fails to bind but its JVM stays up, and the port answers for another process. Such a
  // start is ended and made again on another port; a port the caller named is tried once.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts, opts.port || (await freePort()));
    } catch (err) {
      if (!(err instanceof PortTakenError) || opts.port || attempt >= 5) throw err;
      opts.log?.(`DynamoDB Local: port ${err.port} was taken before it bound; starting on another`);
    }
  }
}

class PortTakenError extends Error {
  constructor(readonly port: number) {
    super(`DynamoDB Local could not bind port ${port}`);
  }
}

async function startOnce(opts: { dbPath?: string; heapMb?: number; log?: (line: string) => void }, port: number): Promise<DynamoLocal> {
  const dir = emulatorDir();
  // -disableTelemetry: nothing leaves the machine. DynamoDB Local has no bind option and listens on every
  // interface: the local stack is for a developer's own machine (README, "The two commands").
  const args = [
    `-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`,
    `-Xmx${opts.heapMb ?? 512}m`,
    '-jar',
    join(dir, 'DynamoDBLocal.jar'),
    '-port',
    String(port),
    '-disableTelemetry',
  ];
  if (opts.dbPath) {
    mkdirSync(opts.dbPath, { recursive: true });
    args.push('-sharedDb', '-dbPath', opts.dbPath);
  } else args.push('-sharedDb', '-inMemory'); // shared: one database whatever region/credentials a client uses
  const child: ChildProcess = spawn('java', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let exited = false;
  let output = '';
  child.stdout?.on('data', (d) => (output += d));
  child.stderr?.on('data', (d) => (output += d));
  child.on('exit', () => (exited = true));
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (/Failed to bind|Address already in use/.test(output)) {
      process.removeListener('exit', killOnExit);
      client.destroy();
      child.kill('SIGKILL');
      throw new PortTakenError(port);
    }
    if (exited) throw new Error(`DynamoDB Local exited during start (is Java 17 installed?):\n${output}`);
    try {
      await client.send(new ListTablesCommand({}));
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`DynamoDB Local did not start within 60s:\n${output}`);
      await new Promise((r) => setTimeout(r, 150));
    }
  }
  client.destroy();
  opts.log?.(`DynamoDB Local listening on ${endpoint} (${opts.dbPath ? `data in ${opts.dbPath}` : 'in memory'})`);
  return {
    endpoint,
    stop: () =>
      new Promise((resolve) => {
        process.removeListener('exit', killOnExit);
        if (exited) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 3000).unref();
      }),
  };
}

/**
 * Creates the table from the shared definition unless it exists (a persisted DATA_DIR keeps it), and turns its
 * change stream on when a DATA_DIR from before the stream has the table without one. Returns the stream's ARN.
 */
export async function ensureTable(endpoint: string, tableName: string): Promise<string> {
  const client = new DynamoDBClient({ endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    let table = await client.send(new DescribeTableCommand({ TableName: tableName })).then(
      (o) => o.Table,
      () => undefined,
    );
    if (!table) {
      try {
        table = (await client.send(new CreateTableCommand(createTableInput(tableName)))).TableDescription;
      } catch (err) {
        if (!(err instanceof ResourceInUseException)) throw err;
        table = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
      }
    }
    if (!table?.StreamSpecification?.StreamEnabled) {
      await client.send(
        new UpdateTableCommand({
          TableName: tableName,
          StreamSpecification: { StreamEnabled: true, StreamViewType: TABLE_DEFINITION.stream.viewType },
        }),
      );
      table = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
    }
    return table!.LatestStreamArn!;
  } finally {
    client.destroy();
  }
}
