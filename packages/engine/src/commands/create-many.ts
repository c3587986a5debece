import './bullmq-includes.js';
import { defineScript } from '../lua/script.js';
import { decodeCreate, type CreateOutcome } from './create-task.js';

/** `lua/create-many.lua`: several creates (and their BullMQ jobs) in one call, in order. */
export const createMany = defineScript({
  file: 'create-many',
  keys: ['openTenants'],
  args: ['now', 'pruneBound', 'indexTtl'],
  itemKeys: ['task', 'index', 'idem', 'open', 'usage', 'fair', 'head'],
  itemArgs: [
    'expiresAt',
    'member',
    'idemValue',
    'id',
    'maxOpenTasks',
    'maxBytes',
    'fairStep',
    'priorityOffset',
    'fields',
    'jobTag',
    'jobGroup',
    'jobArgs',
    'jobData',
    'jobOpts',
  ],
  restKeys: "the jobs' key groups: ADD_KEYS keys each, one group per add script and queue",
  decode: ([, ...replies]): CreateOutcome[] => replies.map((r) => decodeCreate(r as unknown[])),
});
