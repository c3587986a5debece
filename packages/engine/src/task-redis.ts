import type { Redis } from 'ioredis';
import {
  COMPLETE_MANY,
  CREATE_MANY,
  CREATE_TASK,
  DISCARD_TASK,
  FORGET_TASK,
  SET_PUSH,
  START_TASK,
  TRANSITION_TASK,
} from './scripts.js';

/** A connection with longrun's scripts defined on it (ioredis sends each by hash, EVALSHA). */
export interface TaskRedis extends Redis {
  longrunCreate(...args: (string | number)[]): Promise<string>;
  longrunCreateMany(numberOfKeys: number, ...args: (string | Buffer)[]): Promise<string[]>;
  longrunTransition(...args: (string | number)[]): Promise<string[]>;
  longrunCompleteMany(numberOfKeys: number, ...args: (string | number)[]): Promise<string>;
  longrunForget(...args: (string | number)[]): Promise<string[]>;
  longrunDiscard(...args: (string | number)[]): Promise<'kept' | 'discarded' | 'absent'>;
  longrunStart(...args: (string | number)[]): Promise<[string, string[] | string | undefined]>;
  longrunSetPush(...args: (string | number)[]): Promise<string[]>;
}

/** Defines the scripts on `redis` once (several stores may share a connection). */
export function defineTaskScripts(redis: Redis): TaskRedis {
  if (!('longrunCreate' in redis)) {
    redis.defineCommand('longrunCreate', { numberOfKeys: 8, lua: CREATE_TASK });
    // The number of keys varies with the batch: passed first on each call.
    redis.defineCommand('longrunCreateMany', { lua: CREATE_MANY });
    redis.defineCommand('longrunTransition', { numberOfKeys: 3, lua: TRANSITION_TASK });
    redis.defineCommand('longrunCompleteMany', { lua: COMPLETE_MANY });
    redis.defineCommand('longrunForget', { numberOfKeys: 5, lua: FORGET_TASK });
    redis.defineCommand('longrunDiscard', { numberOfKeys: 6, lua: DISCARD_TASK });
    redis.defineCommand('longrunStart', { numberOfKeys: 3, lua: START_TASK });
    redis.defineCommand('longrunSetPush', { numberOfKeys: 2, lua: SET_PUSH });
  }
  return redis as TaskRedis;
}
