import net from 'node:net';

/**
 * A relay to Redis on loopback that can drop the next reply (closing the client's socket) and
 * hold new connections until released.
 */
export async function cutRelay(redisUrl: string) {
  const target = new URL(redisUrl);
  /** `true`: cut the next reply on any connection; a test: on the next request it matches. */
  let cutNext: boolean | ((request: string) => boolean) = false;
  let held: Array<() => void> = [];
  let holding = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.pause();
    const open = () => {
      const upstream = net.connect(Number(target.port || 6379), target.hostname);
      sockets.add(upstream);
      let cutHere = false;
      upstream.on('data', (chunk) => {
        if (cutNext === true || cutHere) {
          cutNext = false;
          client.destroy();
          upstream.destroy();
          return;
        }
        client.write(chunk);
      });
      client.on('data', (chunk: Buffer) => {
        if (typeof cutNext === 'function' && cutNext(chunk.toString('latin1'))) {
          cutNext = false;
          cutHere = true;
        }
        upstream.write(chunk);
      });
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.resume();
    };
    if (holding) held.push(open);
    else open();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    /**
     * Drop the next reply Redis sends (with `match`: on the connection of the next request it
     * matches, from that request on), and hold the client's reconnection.
     */
    cutNextReply(match?: (request: string) => boolean) {
      cutNext = match ?? true;
      holding = true;
    },
    release() {
      holding = false;
      for (const open of held) open();
      held = [];
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
