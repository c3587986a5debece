// Finding, starting and probing a local redis-server, for `npm start` and `npm test`.
// Plain Node (no dependencies), so it runs before anything is built.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer, Socket } from 'node:net';

/** Resolves true when something at host:port answers PING with PONG within `timeoutMs`. */
export function ping(host, port, timeoutMs = 500) {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.connect(port, host, () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Path of redis-server, or null. With `install`, tries Debian's package first (as root). */
export function findRedisServer({ install = false } = {}) {
  const which = () => {
    const r = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
    return r.status === 0 ? r.stdout.trim() : null;
  };
  let path = which();
  if (!path && install && process.getuid?.() === 0) {
    console.error('redis-server is missing: installing Debian package redis-server…');
    spawnSync(
      'sh',
      [
        '-c',
        'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server',
      ],
      {
        stdio: 'inherit',
      },
    );
    path = which();
  }
  return path;
}

/**
 * Starts redis-server in the foreground as a child process and waits until it answers.
 * @returns {{ url: string, port: number, child: import('node:child_process').ChildProcess, stop: () => Promise<void> }}
 */
export async function startRedis({ bin, port, dir, appendonly = true, args = [], quiet = true }) {
  mkdirSync(dir, { recursive: true });
  const child = spawn(
    bin,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--appendonly',
      appendonly ? 'yes' : 'no',
      '--save',
      '',
      '--maxmemory-policy',
      'noeviction',
      ...args,
    ],
    // Its own process group: a Ctrl-C to the terminal must not stop Redis before the processes
    // that use it have shut down; the owner stops it explicitly.
    { stdio: quiet ? 'ignore' : 'inherit', detached: true },
  );
  child.unref();
  const exited = new Promise((resolve) => child.once('exit', resolve));
  for (let i = 0; i < 100; i++) {
    if (await ping('127.0.0.1', port)) {
      return {
        url: `redis://127.0.0.1:${port}`,
        port,
        child,
        stop: async () => {
          // Held until it has exited: the child is unref'd, and a caller with nothing else to
          // wait for (a test teardown stopping several servers) would otherwise end mid-stop.
          child.ref();
          if (child.exitCode === null) child.kill('SIGTERM');
          await exited;
        },
      };
    }
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`redis-server did not start on port ${port}`);
}
