import { mkdtempSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { httpClient } from './helpers/http.js';
import { runApp, startApp } from './helpers/processes.js';
import { uniquePrefix } from './helpers/service.js';

describe('process start-up', () => {
  it('the API refuses to start in production without keys, saying why', async () => {
    const { code, output } = await runApp('api', {
      NODE_ENV: 'production',
      LONGRUN_API_KEYS: '',
      PORT: '0',
    });
    expect(code).toBe(1);
    expect(output).toMatch(/LONGRUN_API_KEYS: is required when NODE_ENV=production/);
  });

  it('a bad value stops the worker with a clear message', async () => {
    const { code, output } = await runApp('worker', { LONGRUN_WORKER_CONCURRENCY: 'lots' });
    expect(code).toBe(1);
    expect(output).toMatch(/Invalid configuration:\n\s+LONGRUN_WORKER_CONCURRENCY/);
  });

  it('runs the apps on the runtime of this pass (Node, or Bun under LONGRUN_TEST_RUNTIME=bun)', async () => {
    const worker = await startApp('worker', {
      REDIS_URL: inject('redisUrl'),
      LONGRUN_PREFIX: uniquePrefix(),
      LONGRUN_METRICS_PORT: '0',
      LONGRUN_METRICS_HOST: '127.0.0.1',
    });
    try {
      const exe = readlinkSync(`/proc/${worker.child.pid}/exe`);
      if (process.env.LONGRUN_TEST_RUNTIME === 'bun') expect(exe).toMatch(/bun[^/]*$/);
      else expect(exe).toBe(realpathSync(process.execPath));
    } finally {
      await worker.stop();
    }
  });

  it('a worker whose metrics port is taken says so and how to pick another', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    try {
      const { code, output } = await runApp('worker', {
        REDIS_URL: inject('redisUrl'),
        LONGRUN_PREFIX: uniquePrefix(),
        LONGRUN_METRICS_HOST: '127.0.0.1',
        LONGRUN_METRICS_PORT: String((taken.address() as AddressInfo).port),
      });
      expect(code).toBe(1);
      expect(output).toMatch(/metrics port 127\.0\.0\.1:\d+ is taken .*LONGRUN_METRICS_PORT/);
      expect(output).not.toMatch(/at .*\.js:\d+/); // a message, not a stack trace
    } finally {
      taken.close();
    }
  });

  it('an API whose port is taken says so in one line, names PORT, and exits 1', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    try {
      const port = (taken.address() as AddressInfo).port;
      const { code, output } = await runApp('api', {
        REDIS_URL: inject('redisUrl'),
        LONGRUN_PREFIX: uniquePrefix(),
        LONGRUN_API_KEYS: 'alpha:tenant-a-key-0123456789',
        HOST: '127.0.0.1',
        PORT: String(port),
      });
      expect(code).toBe(1);
      const error = output.split('\n').filter((l) => l.includes('is taken'));
      expect(error, output).toEqual([
        `The API's port 127.0.0.1:${port} is taken (another API on this host?): set PORT to a free port, or 0 for any`,
      ]);
      expect(output).not.toMatch(/EADDRINUSE/);
      expect(output).not.toMatch(/at .*\.js:\d+/); // a message, not a stack trace
    } finally {
      taken.close();
    }
  });

  it('without keys outside production the API makes a dev key, prints it, and it works', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'longrun-startup-'));
    const api = await startApp('api', {
      LONGRUN_DATA_DIR: dataDir,
      LONGRUN_API_KEYS: '',
      NODE_ENV: 'development',
      PORT: '0',
      HOST: '127.0.0.1',
      REDIS_URL: inject('redisUrl'),
      LONGRUN_PREFIX: uniquePrefix(),
    });
    try {
      const line = api.lines.find((l) => l.includes('longrun dev API key'));
      const key = /: (dev-\S+)/.exec(line ?? '')?.[1];
      expect(key).toBeTruthy();
      const http = httpClient(`http://127.0.0.1:${api.ready.port as number}`, key);
      expect((await http('GET', '/v1/jobs')).status).toBe(200);
      expect((await http('GET', '/v1/jobs', { key: 'dev-wrong-key-xxxxxxxxxxxxxx' })).status).toBe(
        401,
      );
      expect(await api.stop()).toBe(0);
    } finally {
      await api.kill();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
