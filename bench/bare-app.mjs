// The ceiling for the API: a bare Express 5 app on the same routes, answering canned handles.
// Same framework settings as apps/api (no x-powered-by, no ETag, JSON body parser on the POST);
// no auth, no validation, no Redis. Prints {"msg":"bare ready","port":N} once listening.
//
//   PORT=0 HOST=127.0.0.1 node bench/bare-app.mjs
import express from 'express';

const now = new Date().toISOString();
const handle = {
  resultType: 'task',
  taskId: '8b7c2f0e-3f6a-4d6e-9a55-0c7f4f1d2b11',
  type: 'echo',
  status: 'working',
  statusMessage: 'queued',
  createdAt: now,
  lastUpdatedAt: now,
  ttlMs: 86_400_000,
  pollIntervalMs: 5000,
};

const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.post('/v1/jobs', express.json({ limit: '1mb' }), (_req, res) => {
  res.status(202).location(`/v1/jobs/${handle.taskId}`).setHeader('Retry-After', '5');
  res.json(handle);
});
app.get('/v1/jobs/:id', (req, res) => {
  res.setHeader('Retry-After', '5');
  res.json({ ...handle, taskId: req.params.id });
});

const server = app.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const address = server.address();
  console.log(JSON.stringify({ msg: 'bare ready', port: address.port }));
});
server.keepAliveTimeout = 5_000;
process.on('SIGTERM', () => server.close(() => process.exit(0)));
process.on('SIGINT', () => server.close(() => process.exit(0)));
