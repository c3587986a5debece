import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * When a relayed connection stops passing bytes: from the first request (client to Redis) whose
 * bytes contain `match`. `inclusive`: that request is held too (it has not reached Redis);
 * otherwise it goes through and what follows is held. `replies`: Redis's answers on that
 * connection are held as well from then on (the client's first answer is "lost" until release).
 */
export interface HoldRule {
  match: string;
  /** Further strings the request must contain too (all of them). */
  also?: string[];
  inclusive: boolean;
  replies: boolean;
}

/**
 * A TCP relay on 127.0.0.1 in front of a real Redis, for a client whose Redis traffic a test must
 * stop at a chosen command: what two replicas racing each other would do by chance, made to
 * happen in a chosen order. Nothing is changed or made up: bytes are only held back, and on
 * `release` they go on in the order they came.
 */
export interface Relay {
  /** `redis://127.0.0.1:<port>`: connect the client under test here. */
  url: string;
  /** Holds the next connection whose request matches `rule` (one at a time). */
  hold(rule: HoldRule): void;
  /** Requests held so far (a test waits for one before it acts). */
  readonly heldRequests: number;
  /** Sends everything held on, in order, and stops holding. */
  release(): void;
  close(): Promise<void>;
}

interface Pair {
  client: Socket;
  server: Socket;
  holding: boolean;
  holdReplies: boolean;
  requests: Buffer[];
  replies: Buffer[];
}

export async function startRelay(target: { host: string; port: number }): Promise<Relay> {
  const pairs = new Set<Pair>();
  let rule: HoldRule | undefined;
  let held = 0;
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    const pair: Pair = {
      client,
      server: upstream,
      holding: false,
      holdReplies: false,
      requests: [],
      replies: [],
    };
    pairs.add(pair);
    client.on('data', (chunk: Buffer) => {
      if (pair.holding) {
        pair.requests.push(chunk);
        held++;
        return;
      }
      if (rule && chunk.includes(rule.match) && (rule.also ?? []).every((s) => chunk.includes(s))) {
        const { inclusive, replies } = rule;
        rule = undefined;
        pair.holding = true;
        pair.holdReplies = replies;
        if (inclusive) {
          pair.requests.push(chunk);
          held++;
          return;
        }
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (pair.holdReplies) pair.replies.push(chunk);
      else client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    hold(next) {
      rule = next;
    },
    get heldRequests() {
      return held;
    },
    release() {
      rule = undefined;
      for (const pair of pairs) {
        pair.holding = false;
        pair.holdReplies = false;
        for (const chunk of pair.requests.splice(0)) pair.server.write(chunk);
        for (const chunk of pair.replies.splice(0)) pair.client.write(chunk);
      }
    },
    async close() {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.server.destroy();
      }
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
