import { invalid, type Invalid } from './outcomes.js';

/**
 * The `400` for a submit or schedule naming a type no worker registered. The usual cause is not a
 * typo but a worker that registered it elsewhere: on another Redis or under another key prefix
 * than this API's, so the detail says which settings to compare (the field error lists the types
 * this API does see).
 * @example unknownJobType('resize', ['echo']).detail // 'Unknown job type "resize": …'
 */
export function unknownJobType(type: string, known: readonly string[]): Invalid {
  return invalid(
    400,
    `Unknown job type "${type}": no worker serving it has registered on this API's Redis and ` +
      'key prefix. If one runs, check that it uses the same REDIS_URL and LONGRUN_PREFIX as the API',
    [
      {
        path: 'type',
        message: known.length
          ? `must be one of: ${known.join(', ')}`
          : 'no job type is registered yet: start a worker that serves it',
      },
    ],
  );
}
