// Webhook receivers on 127.0.0.1 for the tests: a prompt one that records every delivery, and a
// hostile one that reads the request, then trickles its answer a byte at a time and never ends it.
// Times are `performance.now()`.
import { createServer as createHttpServer, type IncomingHttpHeaders } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export interface Connection {
  opened: number;
  closed?: number;
}

export interface TrickleReceiver {
  /** `http://127.0.0.1:<port>/hook` */
  url: string;
  /** Every connection so far: when it opened and when it closed. */
  connections: Connection[];
  /** Most connections open at once so far. */
  maxOpen: number;
  /** Destroys the open connections and stops listening. */
  close(): Promise<void>;
}

/** The head it never finishes: a status line, then one header whose value never ends. */
const HEAD = 'HTTP/1.1 200 OK\r\nX-Trickle: ';

/**
 * A receiver that reads the request, then sends one byte every `byteEveryMs` and never finishes
 * its response head: the socket is never idle, so an idle timeout alone never fires.
 */
export async function trickleReceiver({ byteEveryMs = 1000 } = {}): Promise<TrickleReceiver> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    const entry: Connection = { opened: performance.now() };
    receiver.connections.push(entry);
    sockets.add(socket);
    receiver.maxOpen = Math.max(receiver.maxOpen, sockets.size);
    let timer: NodeJS.Timeout | undefined;
    let sent = 0;
    socket.on('data', () => {
      timer ??= setInterval(() => {
        if (socket.writable) socket.write(HEAD[sent] ?? '.');
        sent += 1;
      }, byteEveryMs);
    });
    const closed = () => {
      clearInterval(timer);
      entry.closed ??= performance.now();
      sockets.delete(socket);
    };
    socket.on('end', closed);
    socket.on('close', closed);
    socket.on('error', () => undefined);
  });
  const receiver: TrickleReceiver = {
    url: `http://127.0.0.1:${await listen(server)}/hook`,
    connections: [],
    maxOpen: 0,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((r) => server.close(r));
    },
  };
  return receiver;
}

export interface PromptReceiver {
  url: string;
  /** Every request received in full, with when its body ended and its headers (lower case). */
  deliveries: { at: number; body: string; headers: IncomingHttpHeaders }[];
  /** Connections opened to it so far (a refused target is never connected to). */
  connections: number;
  close(): Promise<void>;
}

/**
 * A receiver that answers every delivery `204` as soon as its body is in; on `host` (default
 * 127.0.0.1: any 127.x address is loopback).
 */
export async function promptReceiver({ host = '127.0.0.1' } = {}): Promise<PromptReceiver> {
  const deliveries: PromptReceiver['deliveries'] = [];
  const server = createHttpServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      deliveries.push({ at: performance.now(), body, headers: req.headers });
      res.writeHead(204, { connection: 'close' }).end();
    });
  });
  const receiver: PromptReceiver = {
    url: `http://${host}:${await listen(server, host)}/hook`,
    deliveries,
    connections: 0,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  server.on('connection', () => (receiver.connections += 1));
  return receiver;
}

async function listen(
  server: Server | ReturnType<typeof createHttpServer>,
  host = '127.0.0.1',
): Promise<number> {
  await new Promise<void>((r) => server.listen(0, host, r));
  return (server.address() as AddressInfo).port;
}
