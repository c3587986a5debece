/**
 * Typed client for longrun's task-handle API.
 * @example
 * const lr = createClient({ baseUrl: 'http://localhost:3000', apiKey: process.env.LONGRUN_API_KEY! });
 * const { taskId } = await lr.submit('echo', { x: 1 });
 * const out = await lr.wait(taskId); // out.status === 'completed', out.result
 */
export {
  createClient,
  type BatchSubmitItem,
  type BatchSubmitResult,
  type ClientOptions,
  type CreateScheduleOptions,
  type ListOptions,
  type LongrunClient,
  type RequestOptions,
  type ResultOptions,
  type SubmitOptions,
} from './client.js';
export { LongrunError, LongrunNetworkError, type LongrunFieldError } from './errors.js';
export type { EventsOptions, TaskUpdate } from './events.js';
export type { RetryPolicy } from './retry.js';
export { SseParser, type SseMessage } from './sse.js';
export type { FetchLike } from './transport.js';
export type { JobTypeInfo, JobTypeVersionInfo } from './job-types.js';
export type { JobInput, JobResult, JobTypeMap, JobTypeName, JobTypeShape } from './types.js';
export type { WaitOptions } from './wait.js';
export {
  verifyWebhook,
  WebhookVerificationError,
  type VerifyWebhookOptions,
  type WebhookFailure,
} from './webhook.js';
export type {
  Callback,
  Schedule,
  TaskHandle,
  TaskList,
  TaskResult,
  TaskStatus,
  WebhookPayload,
} from '@longrun/core';
export { isTerminal, TASK_STATUSES } from '@longrun/core';
