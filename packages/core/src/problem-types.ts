/** What a problem type means and what to do about it: one entry of the catalogue at `/problems`. */
export interface ProblemTypeEntry {
  /** The problem's `title`: a short summary that does not change from one occurrence to the next. */
  title: string;
  /** The HTTP statuses it comes with. */
  status: readonly number[];
  /** When it happens. */
  means: string;
  /** What a client (or its developer) should do. */
  todo: string;
}

/**
 * Where the catalogue is served. A problem's `type` is `/problems/<code>`: a relative reference
 * (RFC 9457 §3.1.1) that resolves against the response's own URL to a page of the API itself,
 * so it works on every deployment without configuring the public URL (decision 26).
 */
export const PROBLEM_TYPES_PATH = '/problems';

/**
 * Every problem the API answers with, by code (the last segment of its `type`). `Problem` only
 * takes these codes, so a new code does not compile until it is explained here, and the
 * `/problems` page is rendered from this table. Text is Markdown-ish: `code` spans only.
 */
export const PROBLEM_TYPES = {
  'invalid-request': {
    title: 'Bad Request',
    status: [400],
    means:
      'The request envelope is wrong: an unknown field in the body (e.g. `ttl` for `ttlMs`), a value out of range, a job type no worker has registered, a callback URL that is not allowed, a schedule `cron` that does not parse, runs closer together than the API allows or has no run within the next 367 days, or a malformed query parameter or header (`Idempotency-Key`, `Last-Event-ID`, `wait`, `cursor`, …). `errors` names each field.',
    todo: 'Fix the fields `errors` lists and send the request again; sent unchanged it gets the same answer. `GET /v1/job-types` lists the registered job types, `/openapi.json` every field.',
  },
  'invalid-input': {
    title: 'Unprocessable Content',
    status: [422],
    means:
      "The envelope is fine but `input` does not match the job type's schema (submit), or an answer does not match the task's `inputRequest.schema` (`POST /v1/jobs/{id}/input`). Nothing was stored or changed.",
    todo: "Correct the fields `errors` lists. A type's input schema is in `GET /v1/job-types` and in `/openapi.json` (`JobInput.<type>`); the schema an answer must match is the handle's `inputRequest.schema`.",
  },
  'not-found': {
    title: 'Task not found',
    status: [404],
    means:
      'No task with this id for your key: it never existed, its `ttlMs` has passed, it was deleted, it belongs to another tenant, or the id is not a task id. These look the same on purpose.',
    todo: 'Check the id and the API key. A task past its ttl is gone for good: submit it again, with a longer `ttlMs` if you need its result later. Retrying does not help.',
  },
  'schedule-not-found': {
    title: 'Schedule not found',
    status: [404],
    means:
      'No schedule with this id for your key: it never existed, it was deleted, it belongs to another tenant, or the id is not a schedule id. These look the same on purpose.',
    todo: '`GET /v1/schedules` lists your schedules. Retrying does not help.',
  },
  'too-many-schedules': {
    title: 'Too many schedules',
    status: [409],
    means:
      'This tenant has as many schedules as the API allows (`LONGRUN_MAX_SCHEDULES`). Nothing was stored.',
    todo: 'Delete schedules you no longer need (`DELETE /v1/schedules/{id}`), then create this one again.',
  },
  terminal: {
    title: 'Task already finished',
    status: [409],
    means:
      'The task is `completed`, `failed` or `cancelled` (`taskStatus` says which), so it can no longer be cancelled or answered.',
    todo: 'Read its outcome with `GET /v1/jobs/{id}/result`. Retrying does not help.',
  },
  'waitpoint-completed': {
    title: 'Waitpoint already completed',
    status: [409],
    means:
      'The waitpoint (`POST /v1/waitpoints/{id}`) was completed before: its task received that data, and a waitpoint is completed once.',
    todo: 'Nothing to do: the first completion counts. Retrying does not help.',
  },
  'waitpoint-timed-out': {
    title: 'Waitpoint timed out',
    status: [409],
    means:
      "The waitpoint's `timeoutMs` passed before it was completed: its task took the timeout (its `ctx.waitFor` threw `waitpoint-timeout`, or will when it runs next), and a waitpoint has one outcome, so this data is not delivered.",
    todo: 'Nothing to post: read the task (`GET /v1/jobs/{id}`) to see how it went on. Retrying does not help.',
  },
  'not-terminal': {
    title: 'Task not finished',
    status: [409],
    means:
      'The task is still `working` or `input_required` (`taskStatus` says which): its result does not exist yet, or it cannot be deleted before it ends.',
    todo: 'For the result: ask again after `Retry-After`, long-poll with `?wait=30`, or follow `GET /v1/jobs/{id}/events`. To delete the task: cancel it first, or wait for it to finish.',
  },
  'not-awaiting-input': {
    title: 'Task is not waiting for input',
    status: [409],
    means:
      'An answer was sent to a task whose status is not `input_required` (`taskStatus` says what it is): it was already answered, has not asked yet, or has finished.',
    todo: '`GET` the task and answer only while its status is `input_required`, with an `input` matching its `inputRequest.schema`.',
  },
  'question-changed': {
    title: 'Task asks another question',
    status: [409],
    means:
      'The answer was checked against the question the task asked when the request arrived, but before it could be recorded the task moved on: another client answered that question and the task now asks the next one (its `inputRequest`), which this answer was never checked against. Nothing was recorded.',
    todo: '`GET` the task, read its current `inputRequest`, and answer that question if it is still yours to answer.',
  },
  'idempotency-key-reused': {
    title: 'Idempotency-Key reused',
    status: [422],
    means:
      'This tenant already used this `Idempotency-Key` with a different body. A key stands for one request.',
    todo: 'Send the same body to get the earlier task back, or use a new key for a new request.',
  },
  'idempotency-conflict': {
    title: 'Idempotent request in flux',
    status: [409],
    means:
      'The task for this `Idempotency-Key` is being created or removed by a concurrent request.',
    todo: 'Retry after `Retry-After` with the same key and body: you get the task back, or create it.',
  },
  'too-many-open-tasks': {
    title: 'Too many open tasks',
    status: [429],
    means:
      'This tenant has as many unfinished tasks as the API allows (`LONGRUN_MAX_OPEN_TASKS`). Nothing was stored.',
    todo: 'Wait for some tasks to finish, or cancel the ones you no longer need, then retry after `Retry-After`.',
  },
  'storage-budget': {
    title: 'Storage budget used up',
    status: [429],
    means:
      "This tenant's stored tasks (records with their inputs, results and answers) take as many bytes as the API allows one tenant (`LONGRUN_TENANT_MAX_BYTES`). Nothing was stored. Other tenants are not affected.",
    todo: 'Delete finished tasks whose results you have collected (`DELETE /v1/jobs/{id}`), or retry after `Retry-After`, when the oldest stored task expires.',
  },
  'rate-limited': {
    title: 'Too Many Requests',
    status: [429],
    means:
      'This tenant sent more requests per second than the API allows (`LONGRUN_RATE_LIMIT_RPS`).',
    todo: 'Retry after `Retry-After`. Poll no faster than `pollIntervalMs`; to wait for a task, long-poll its result (`?wait=30`) or follow its events instead.',
  },
  'too-many-streams': {
    title: 'Too many open streams',
    status: [429],
    means:
      'This tenant has as many long-lived requests open on this API process as it allows (`LONGRUN_TENANT_MAX_STREAMS`), or the process has as many as it takes from all tenants (`LONGRUN_MAX_STREAMS`): event streams (`GET /v1/jobs/{id}/events`), MCP `tasks/result` and GET streams, A2A streams, subscriptions and blocking sends. Nothing was started.',
    todo: 'Close streams you no longer read (one per task you follow is enough), or poll (`GET /v1/jobs/{id}`, `?wait=30` on the result) instead; retry after `Retry-After`.',
  },
  unauthorized: {
    title: 'Unauthorized',
    status: [401],
    means:
      'No `Authorization` header, or a key the API does not know. On `/admin/queues`: not an admin key.',
    todo: 'Send `Authorization: Bearer <key>` with a key from `LONGRUN_API_KEYS` (`/admin/queues` takes a key from `LONGRUN_ADMIN_KEYS`, as a bearer key or a Basic password). `WWW-Authenticate` names the scheme.',
  },
  'cross-site-request': {
    title: 'Forbidden',
    status: [403],
    means:
      'A write to the queue dashboard (`/admin/queues`, any method but `GET`, `HEAD` or `OPTIONS`) came from another site: the browser said so (`Sec-Fetch-Site`), or its `Origin` is not the dashboard host. A browser holding the admin password would otherwise send it with a form another site posts.',
    todo: 'Use the dashboard from its own page. A script that is not a browser sends neither header and is not refused.',
  },
  'wrong-key': {
    title: 'Forbidden',
    status: [403],
    means:
      "A known key used where its kind is not allowed: an HTTP worker's key (`LONGRUN_WORKER_KEYS`) on the task routes (`/v1/jobs`, `/v1/schedules`, the MCP and A2A doors), or a tenant's key (`LONGRUN_API_KEYS`) on the worker routes (`/v1/worker/*`).",
    todo: 'Submit and read tasks with a tenant key; lease and run jobs with a worker key.',
  },
  'job-type-owned': {
    title: 'Job type owned',
    status: [403, 409],
    means:
      'The job type belongs to another worker key (the first to register it) or to SDK workers (a type an SDK worker serves), or it names a queue such a type runs on: `PUT /v1/worker/job-types/{name}` answers `409`, a lease request naming it and `DELETE` of it `403`.',
    todo: 'Register a type of another name (or queue), or use the worker key that owns it.',
  },
  'job-type-not-allowed': {
    title: 'Job type not allowed',
    status: [403],
    means:
      'The worker key may register only the types its `LONGRUN_WORKER_KEYS` entry lists (`name:key:type1|type2`), and this is not one of them.',
    todo: 'Register a listed type, or have the operator add it to the entry.',
  },
  'too-many-job-types': {
    title: 'Too many job types',
    status: [409],
    means:
      'This worker key owns as many job types as the API allows (`LONGRUN_WORKER_MAX_TYPES`, 50 by default). Nothing was registered.',
    todo: 'Remove types it no longer runs (`DELETE /v1/worker/job-types/{name}`), or have the operator raise the cap.',
  },
  'schema-too-large': {
    title: 'Schema too large',
    status: [413],
    means: "A job type's input schema is over 64 KiB of JSON. Nothing was registered.",
    todo: 'Keep the schema to what the API must check (types, required fields, bounds); let the worker check the rest.',
  },
  'job-type-in-use': {
    title: 'Job type in use',
    status: [409],
    means: 'Tasks of the job type still wait or run: `DELETE` removes only an idle type.',
    todo: 'Run or cancel its tasks, then remove it.',
  },
  'lease-not-found': {
    title: 'Lease not found',
    status: [404],
    means:
      'The lease id is not one this service handed out to this worker key (made up, changed, or given to another key), or its task is gone (expired or forgotten).',
    todo: 'Drop the job: use the `leaseId` a `POST /v1/worker/leases` answered, as it was given.',
  },
  'lease-expired': {
    title: 'Lease expired',
    status: [409],
    means:
      "No heartbeat renewed the lease within its `leaseMs`: the job was put back and runs (or ran) again, on this or another worker, as a dead worker's job would.",
    todo: 'Stop the run and drop its result; heartbeat more often than `leaseMs` (every third of it, say).',
  },
  'lease-ended': {
    title: 'Task ended',
    status: [409],
    means:
      'The task of this lease ended while it ran: cancelled, failed, completed elsewhere, or past its run timeout (`timeoutMs`, then failed or retried as an SDK run is). `taskStatus` says which status it is in.',
    todo: 'Stop the run and drop its result; take the next lease.',
  },
  'result-too-large': {
    title: 'Result too large',
    status: [422],
    means:
      "The result's JSON is over `LONGRUN_MAX_RESULT_BYTES`: the task has failed with `result-too-large`, as on SDK workers.",
    todo: 'Store large results elsewhere and return a reference to them.',
  },
  'no-route': {
    title: 'Not Found',
    status: [404],
    means: 'No route answers this method and path.',
    todo: 'Check the method and path against `/openapi.json` (or `/docs`); task routes live under `/v1/jobs`.',
  },
  'method-not-allowed': {
    title: 'Method Not Allowed',
    status: [405],
    means:
      'The path exists but does not answer this method (e.g. `PUT /v1/jobs`). The `Allow` header, and the detail, list the methods it answers.',
    todo: 'Send the request with one of the methods in `Allow`; `/openapi.json` (or `/docs`) describes each operation.',
  },
  'bad-url': {
    title: 'Bad Request',
    status: [400],
    means: 'The path holds a malformed percent-escape (e.g. `%zz`).',
    todo: 'Percent-encode the path correctly; task ids never need escaping.',
  },
  'unsupported-media-type': {
    title: 'Unsupported Media Type',
    status: [415],
    means: 'The body is not sent as `application/json`.',
    todo: 'Send `Content-Type: application/json` and a JSON body.',
  },
  'charset-unsupported': {
    title: 'Unsupported Media Type',
    status: [415],
    means: "The body's `Content-Type` names a charset the API does not read.",
    todo: 'Send the JSON as UTF-8 (`charset=utf-8`, or no charset).',
  },
  'encoding-unsupported': {
    title: 'Unsupported Media Type',
    status: [415],
    means:
      "The body's `Content-Encoding` is not one the API decodes (`gzip`, `deflate`, `br` or none).",
    todo: 'Send the body uncompressed, or compressed with one of those.',
  },
  'entity-too-large': {
    title: 'Content Too Large',
    status: [413],
    means: 'The body is larger than 1 MiB.',
    todo: 'Keep large data elsewhere (object storage, a database) and pass a reference to it in `input`.',
  },
  'entity-parse-failed': {
    title: 'Bad Request',
    status: [400],
    means: 'The body is not valid JSON.',
    todo: 'Send one well-formed JSON object; check quoting and escaping.',
  },
  'too-deep': {
    title: 'Bad Request',
    status: [400],
    means: 'The body nests objects or arrays deeper than 64 levels.',
    todo: 'Flatten the input.',
  },
  'request-aborted': {
    title: 'Bad Request',
    status: [400],
    means: 'The connection closed before the whole body arrived.',
    todo: 'Send the request again (a submit with the same `Idempotency-Key`, so it cannot run twice).',
  },
  'request-size-invalid': {
    title: 'Bad Request',
    status: [400],
    means: "The body's length does not match its `Content-Length` header.",
    todo: 'Let your HTTP client set `Content-Length`, or send the body chunked.',
  },
  'unreadable-request': {
    title: 'Bad Request',
    status: [400],
    means:
      'The request could not be read, e.g. a body that does not decompress under its `Content-Encoding`.',
    todo: 'Check that the body matches its headers (`Content-Encoding`, `Content-Length`) and send it again.',
  },
  'store-unavailable': {
    title: 'Service Unavailable',
    status: [503],
    means:
      'The task store (Redis) did not answer in time. A submit answered so created no task that will run.',
    todo: 'Retry after `Retry-After`; send submits with an `Idempotency-Key`, so a retry can never create a second task. Operators: see `/readyz` and the API logs.',
  },
  stopping: {
    title: 'Service Unavailable',
    status: [503],
    means:
      'This API process is shutting down: it takes no new lease (HTTP workers) and its long polls end. Nothing was taken for the call.',
    todo: 'Retry after `Retry-After`, on a new connection: another replica (or this one, restarted) answers.',
  },
  'store-full': {
    title: 'Insufficient Storage',
    status: [507],
    means: 'The task store (Redis) is out of memory: nothing new can be stored.',
    todo: 'Retry later. Operators: free memory (shorter `ttlMs`, fewer retained tasks) or raise Redis `maxmemory`.',
  },
  internal: {
    title: 'Internal Server Error',
    status: [500],
    means: 'An unexpected error in the API; it is logged with the request id.',
    todo: 'Retry later. If it persists, report it with the `X-Request-Id` header of the response.',
  },
} as const satisfies Record<string, ProblemTypeEntry>;

/** A problem code: the last segment of a problem's `type`, with an entry in {@link PROBLEM_TYPES}. */
export type ProblemCode = keyof typeof PROBLEM_TYPES;

/** Every code, in catalogue order. */
export const PROBLEM_CODES = Object.keys(PROBLEM_TYPES) as ProblemCode[];

/**
 * Whether `code` names a problem type of the catalogue.
 * @example isProblemCode('not-found') // true
 */
export function isProblemCode(code: string): code is ProblemCode {
  return Object.hasOwn(PROBLEM_TYPES, code);
}

/**
 * The `type` of a problem with this code: where its explanation is served.
 * @example problemTypeUri('not-found') // '/problems/not-found'
 */
export function problemTypeUri(code: ProblemCode): string {
  return `${PROBLEM_TYPES_PATH}/${code}`;
}
