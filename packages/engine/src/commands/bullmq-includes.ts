import {
  ADD_KEYS,
  BULLMQ_ADD_LUA,
  BULLMQ_PRIORITIZED_LUA,
  BULLMQ_QUICK_ADD_LUA,
  SET_FAIR_PRIORITY_LUA,
} from '../bullmq-adapter.js';
import { provideInclude } from '../lua/loader.js';

// BullMQ's own add scripts (decision 39), as includes: `bullmq/add` defines
// `bullmq_add(tag, keys, argv)` and ADD_KEYS (the keys of one add), `bullmq/set-fair-priority`
// defines `set_fair_priority(opts, priority)`, `bullmq/prioritized` the prioritized set's score
// encoding (`BULLMQ_P32`, `BULLMQ_MAX_PRIORITY`, `bullmq_reprioritize`). Registered here and
// nowhere else.
provideInclude('bullmq/add', () => `${BULLMQ_ADD_LUA}\nlocal ADD_KEYS = ${ADD_KEYS}\n`);
provideInclude('bullmq/set-fair-priority', () => SET_FAIR_PRIORITY_LUA);
provideInclude('bullmq/prioritized', () => BULLMQ_PRIORITIZED_LUA);
provideInclude('bullmq/quick-add', () => BULLMQ_QUICK_ADD_LUA);
