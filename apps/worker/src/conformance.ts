import { ConfigError, createCatalog, type JobCatalog } from '@longrun/core';
import { catalog } from './jobs/index.js';
import { conformanceJobs } from './jobs/conformance.js';

/**
 * The stock worker's job types: the catalog, and the MCP conformance suite's job fixtures when
 * `LONGRUN_MCP_CONFORMANCE` is `true` (for running the suite, never in production). Any value
 * but `true`, `false` or unset is refused at start-up.
 */
export function stockCatalog(env: Readonly<Record<string, string | undefined>>): JobCatalog {
  const flag = env.LONGRUN_MCP_CONFORMANCE;
  if (flag === undefined || flag === '' || flag === 'false') return catalog;
  if (flag !== 'true') {
    throw new ConfigError(`LONGRUN_MCP_CONFORMANCE must be true or false, got "${flag}"`);
  }
  return createCatalog([...catalog.values(), ...conformanceJobs]);
}
