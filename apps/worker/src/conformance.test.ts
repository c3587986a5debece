import { describe, expect, it } from 'vitest';
import { ConfigError } from '@longrun/core';
import { stockCatalog } from './conformance.js';
import { catalog } from './jobs/index.js';

describe('the stock worker’s catalog', () => {
  it('has the conformance fixtures only with LONGRUN_MCP_CONFORMANCE=true, and refuses other values', () => {
    expect(stockCatalog({})).toBe(catalog);
    expect(stockCatalog({ LONGRUN_MCP_CONFORMANCE: 'false' }).has('test_simple_text')).toBe(false);
    const on = stockCatalog({ LONGRUN_MCP_CONFORMANCE: 'true' });
    expect([...on.keys()]).toEqual(
      expect.arrayContaining([
        ...catalog.keys(),
        'test_simple_text',
        'test_error_handling',
        'test_tool_with_progress',
      ]),
    );
    expect(() => stockCatalog({ LONGRUN_MCP_CONFORMANCE: '1' })).toThrow(ConfigError);
  });
});
