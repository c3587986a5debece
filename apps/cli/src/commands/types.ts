import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { EXIT } from '../exit-codes.js';
import { baseUrlFrom } from '../connect.js';
import { pretty, typesTable } from '../format.js';
import { typescriptModule } from '../typescript.js';
import type { Command } from './command.js';

/** `longrun types`: the registered job types, as a table, JSON or a TypeScript module. */
export const typeCommands = {
  async types(client, _arg, values, io) {
    const jobTypes = await client.jobTypes({ signal: io.interrupt });
    if (!values.typescript) {
      io.stdout.write(values.json ? pretty({ jobTypes }) : typesTable(jobTypes));
      return EXIT.ok;
    }
    const { code, warnings } = await typescriptModule(jobTypes, {
      source: baseUrlFrom(values, io.env).replace(/\/+$/, ''),
      generatedAt: new Date(),
    });
    for (const warning of warnings) io.stderr.write(`longrun: warning: ${warning}\n`);
    if (jobTypes.length === 0) io.stderr.write('longrun: warning: no job types are registered\n');
    if (values.out === undefined) {
      io.stdout.write(code);
      return EXIT.ok;
    }
    const out = values.out;
    // Into a folder not made yet (src/generated/…), as code generators do.
    await mkdir(dirname(out), { recursive: true })
      .then(() => writeFile(out, code))
      .catch((error: Error) => {
        throw new Error(`Cannot write ${out}: ${error.message}`);
      });
    const count = `${jobTypes.length} job type${jobTypes.length === 1 ? '' : 's'}`;
    io.stdout.write(`wrote ${count} to ${values.out}\n`);
    return EXIT.ok;
  },
} satisfies Record<string, Command>;
