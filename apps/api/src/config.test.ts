import { describe, expect, it } from 'vitest';
import { ConfigError } from '@longrun/core';
import { loadConfig } from './config.js';

describe('api config', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      REDIS_URL: 'redis://127.0.0.1:6379',
      PORT: 3000,
      LONGRUN_PREFIX: 'longrun',
      LONGRUN_POLL_INTERVAL_MS: 5000,
      LONGRUN_DEFAULT_TTL_MS: 86_400_000,
      LONGRUN_MAX_TTL_MS: 604_800_000,
    });
    expect(c.LONGRUN_API_KEYS).toBeUndefined();
    expect(c.HOST).toBeUndefined(); // all interfaces
  });

  it('parses worker name:key pairs; a lease lasts 30 s by default', () => {
    const c = loadConfig({ LONGRUN_WORKER_KEYS: 'py:pppppppppppppppp1,go:gggggggggggggggg2' });
    expect([...c.LONGRUN_WORKER_KEYS!]).toEqual([
      ['pppppppppppppppp1', 'py'],
      ['gggggggggggggggg2', 'go'],
    ]);
    expect(c.LONGRUN_WORKER_LEASE_MS).toBe(30_000);
    expect(loadConfig({}).LONGRUN_WORKER_KEYS).toBeUndefined();
  });

  it('parses the job types a worker key may register: name:key:type1|type2 (issue 41)', () => {
    const c = loadConfig({
      LONGRUN_WORKER_KEYS: 'py:pppppppppppppppp1:py-wordcount|py-resize,go:gggggggggggggggg2',
    });
    expect([...c.LONGRUN_WORKER_KEYS!]).toEqual([
      ['pppppppppppppppp1', 'py'],
      ['gggggggggggggggg2', 'go'],
    ]);
    expect(c.LONGRUN_WORKER_KEYS!.types.get('py')).toEqual(new Set(['py-wordcount', 'py-resize']));
    expect(c.LONGRUN_WORKER_KEYS!.types.has('go')).toBe(false); // any type
  });

  it('parses tenant:key pairs', () => {
    const c = loadConfig({ LONGRUN_API_KEYS: 'acme:aaaaaaaaaaaaaaaa1, beta:bbbbbbbbbbbbbbbb:2' });
    expect([...c.LONGRUN_API_KEYS!]).toEqual([
      ['aaaaaaaaaaaaaaaa1', 'acme'],
      ['bbbbbbbbbbbbbbbb:2', 'beta'],
    ]);
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ REDIS_URL: 'http://x' }, 'REDIS_URL'],
    [{ LONGRUN_API_KEYS: 'nokey' }, 'LONGRUN_API_KEYS'],
    [{ LONGRUN_API_KEYS: 'acme:short' }, 'LONGRUN_API_KEYS'],
    [{ LONGRUN_POLL_INTERVAL_MS: '-5' }, 'LONGRUN_POLL_INTERVAL_MS'],
    [{ LONGRUN_DEFAULT_TTL_MS: '900000000', LONGRUN_MAX_TTL_MS: '1000' }, 'LONGRUN_DEFAULT_TTL_MS'],
    [{ LONGRUN_PREFIX: 'a b' }, 'LONGRUN_PREFIX'],
    [{ NODE_ENV: 'production' }, 'LONGRUN_API_KEYS'],
    [{ LONGRUN_TENANT_MAX_STREAMS: '-1' }, 'LONGRUN_TENANT_MAX_STREAMS'],
    [{ LONGRUN_MAX_STREAMS: 'many' }, 'LONGRUN_MAX_STREAMS'],
    [{ LONGRUN_WORKER_KEYS: 'py:short' }, 'LONGRUN_WORKER_KEYS'],
    [{ LONGRUN_WORKER_KEYS: 'no-name-key-0123456789' }, 'LONGRUN_WORKER_KEYS'],
    [{ LONGRUN_WORKER_KEYS: 'py:pppppppppppppppp1:bad type' }, 'LONGRUN_WORKER_KEYS'],
    [{ LONGRUN_WORKER_KEYS: 'py:pppppppppppppppp1:a:b' }, 'LONGRUN_WORKER_KEYS'],
    [
      { LONGRUN_WORKER_KEYS: 'py:pppppppppppppppp1:a,py:qqqqqqqqqqqqqqqq2:b' },
      'LONGRUN_WORKER_KEYS',
    ],
    [
      {
        LONGRUN_API_KEYS: 'acme:same-key-0123456789',
        LONGRUN_WORKER_KEYS: 'py:same-key-0123456789',
      },
      'LONGRUN_WORKER_KEYS',
    ],
    [{ LONGRUN_WORKER_LEASE_MS: '999' }, 'LONGRUN_WORKER_LEASE_MS'],
  ])('rejects %o naming %s', (env, name) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(new RegExp(name));
  });

  it('says which LONGRUN_API_KEYS entry is malformed and why, never the whole key', () => {
    const secret = 'k3y-without-a-tenant-0123456789';
    const message = (raw: string) => {
      try {
        loadConfig({ LONGRUN_API_KEYS: raw });
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error(`${raw} was accepted`);
    };
    const noTenant = message(`acme:aaaaaaaaaaaaaaaa1,${secret}`);
    expect(noTenant).toMatch(/entry 2 of 2/);
    expect(noTenant).toMatch(/no tenant/);
    expect(noTenant).toMatch(/tenant:key/);
    expect(noTenant).not.toContain(secret);
    expect(noTenant).not.toContain('":…"');
    const emptyTenant = message(`:${secret}`);
    expect(emptyTenant).toMatch(/entry 1 of 1.*no tenant/);
    expect(emptyTenant).not.toContain(secret);
    expect(message('acme:short')).toMatch(/entry 1 of 1.*"acme".*key.*5 characters.*16/);
    expect(message('ac me:aaaaaaaaaaaaaaaa1')).toMatch(/entry 1 of 1.*tenant "ac me"/);
  });

  it('LONGRUN_MCP_CONFORMANCE is off unless exactly true, and refuses anything else', () => {
    expect(loadConfig({}).LONGRUN_MCP_CONFORMANCE).toBe(false);
    expect(loadConfig({ LONGRUN_MCP_CONFORMANCE: 'true' }).LONGRUN_MCP_CONFORMANCE).toBe(true);
    expect(loadConfig({ LONGRUN_MCP_CONFORMANCE: 'false' }).LONGRUN_MCP_CONFORMANCE).toBe(false);
    expect(() => loadConfig({ LONGRUN_MCP_CONFORMANCE: 'yes' })).toThrow(/LONGRUN_MCP_CONFORMANCE/);
  });

  it('treats empty strings as unset', () => {
    expect(loadConfig({ PORT: '', LONGRUN_API_KEYS: '' }).PORT).toBe(3000);
  });
});
