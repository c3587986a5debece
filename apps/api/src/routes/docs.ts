import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Router, type Response } from 'express';
import { buildOpenApiDocument, type OpenApiOptions } from '../openapi.js';
import { mount } from '../openapi/operation.js';
import { docs, openapi } from './docs.operations.js';

/** Swagger UI's files, served from node_modules so the page works offline (no CDN). */
const SWAGGER_UI_DIR = dirname(
  createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'),
);
/** The only files of swagger-ui-dist the page loads; nothing else in that folder is served. */
const ASSETS = new Set([
  'swagger-ui.css',
  'index.css',
  'swagger-ui-bundle.js',
  'favicon-32x32.png',
  'favicon-16x16.png',
]);

/**
 * Everything comes from this origin: no inline script or style, no eval, no third party. Swagger
 * UI's stylesheet draws its icons as `data:` SVGs, hence the one exception for images.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>longrun API reference</title>
    <link rel="stylesheet" href="/docs/assets/swagger-ui.css" />
    <link rel="stylesheet" href="/docs/assets/index.css" />
    <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png" sizes="32x32" />
    <link rel="icon" type="image/png" href="/docs/assets/favicon-16x16.png" sizes="16x16" />
  </head>
  <body>
    <noscript>This page needs JavaScript. The document itself is at <a href="/openapi.json">/openapi.json</a>.</noscript>
    <div id="swagger-ui"></div>
    <script src="/docs/assets/swagger-ui-bundle.js"></script>
    <script src="/docs/init.js"></script>
  </body>
</html>
`;

// A file rather than an inline script, so the CSP needs no 'unsafe-inline'. `validatorUrl: null`
// stops Swagger UI from sending the document to its public validator.
const INIT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
  });
});
`;

/**
 * `GET /openapi.json` (the OpenAPI 3.1 document) and `GET /docs` (Swagger UI rendering it, with
 * its assets under `/docs/assets/`). No authentication: the document holds no secrets.
 * @example app.use(docsRouter({ maxTtlMs, jobTypes: () => engine.knownJobTypes }))
 */
export function docsRouter(options: {
  maxTtlMs: number;
  /** The shortest schedule period the API takes (`LONGRUN_SCHEDULE_MIN_EVERY_MS`). */
  minEveryMs?: number;
  /** The job types registered now (the document describes them as they are when served). */
  jobTypes: () => OpenApiOptions['jobTypes'];
}): Router {
  const router = Router();
  // Rebuilt only when the registered types change (by name and version).
  let built: { key: string; document: object } | undefined;
  const documentNow = () => {
    const jobTypes = options.jobTypes();
    const key = jobTypes.map((t) => `${t.name}@${t.version ?? ''}`).join();
    if (built?.key !== key) {
      const { maxTtlMs, minEveryMs } = options;
      built = { key, document: buildOpenApiDocument({ maxTtlMs, minEveryMs, jobTypes }) };
    }
    return built.document;
  };
  const page = (res: Response) => {
    res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('Cache-Control', 'no-cache');
  };

  mount(router, openapi, (_req, res) => {
    res.setHeader('Cache-Control', 'no-cache');
    res.json(documentNow());
  });

  mount(router, docs, (_req, res) => {
    page(res);
    res.type('html').send(PAGE);
  });

  router.get('/docs/init.js', (_req, res) => {
    page(res);
    res.type('js').send(INIT);
  });

  router.get('/docs/assets/:file', (req, res, next) => {
    const file = req.params.file;
    if (!ASSETS.has(file)) {
      next();
      return;
    }
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.sendFile(file, { root: SWAGGER_UI_DIR, maxAge: '1h' }, (err) => {
      if (err && !res.headersSent) next(err);
    });
  });

  return router;
}
