/** Why a result cannot be stored: not JSON, or its JSON too long. */
export interface RefusedResult {
  message: string;
  code: string;
}

/**
 * A run's `result` as the JSON to store, or why it cannot be stored: not JSON, or its JSON over
 * `maxBytes` (`LONGRUN_MAX_RESULT_BYTES`; 0: no cap). The JSON is what the completion sends, so
 * a result is encoded once.
 * @example checkResult({ big: 'x'.repeat(100) }, 50) // { refused: { code: 'result-too-large', … } }
 */
export function checkResult(
  result: unknown,
  maxBytes: number,
): { json: string; refused?: undefined } | { refused: RefusedResult } {
  let json: string;
  try {
    // A function or a symbol has no JSON: stored as null, as it always was.
    json = JSON.stringify(result ?? null) ?? 'null';
  } catch (error) {
    return {
      refused: {
        message: `The handler's result is not JSON: ${(error as Error).message}`,
        code: 'result-not-json',
      },
    };
  }
  // A UTF-8 byte count only when the length says it could be over (a byte per code unit at least).
  if (maxBytes > 0 && json.length * 3 > maxBytes) {
    const bytes = Buffer.byteLength(json);
    if (bytes > maxBytes) {
      return {
        refused: {
          message: `The handler's result is ${bytes} bytes of JSON, over the ${maxBytes}-byte limit (LONGRUN_MAX_RESULT_BYTES): store it elsewhere and return a reference`,
          code: 'result-too-large',
        },
      };
    }
  }
  return { json };
}

/**
 * Why a run's `result` cannot be stored, if it cannot (see {@link checkResult}). SDK runs and HTTP
 * workers' completions both check it here, so a result refused to one is refused to the other,
 * with the same code.
 * @example refuseResult({ big: 'x'.repeat(100) }, 50)?.code // 'result-too-large'
 */
export function refuseResult(result: unknown, maxBytes: number): RefusedResult | null {
  return checkResult(result, maxBytes).refused ?? null;
}
