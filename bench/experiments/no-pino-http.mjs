// Experiment, loaded with `node --import`: replaces pino-http by the least the API needs from it
// (req.id, X-Request-Id, req.log), to price per-request logging at LOG_LEVEL=warn, where pino-http
// logs nothing but still builds a child logger and serialises the request for every request.
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../apps/api/package.json', import.meta.url));
const pinoHttp = require('pino-http');
pinoHttp.pinoHttp = (opts) => (req, res, next) => {
  req.id = opts.genReqId ? opts.genReqId(req, res) : randomUUID();
  req.log = res.log = opts.logger;
  next();
};
