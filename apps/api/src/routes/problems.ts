import { Router, type Response } from 'express';
import {
  isProblemCode,
  PROBLEM_CODES,
  PROBLEM_TYPES,
  PROBLEM_TYPES_PATH,
  problemTypeUri,
  type ProblemCode,
} from '@longrun/core';
import { mount } from '../openapi/operation.js';
import { getProblemType, listProblemTypes } from './problems.operations.js';

/** A page of text and links: nothing to run, nothing to load. */
const CONTENT_SECURITY_POLICY =
  "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * `GET /problems` (every problem type, one section per code, `id` = the code) and
 * `GET /problems/<code>` (one of them): what each problem `type` the API sends resolves to. No
 * authentication: they hold nothing but documentation. An unknown code falls through to `404`.
 * @example app.use(problemsRouter()) // then GET /problems/not-found
 */
export function problemsRouter(): Router {
  const router = Router();
  // Rendered once: the catalogue only changes with a deploy.
  const catalogue = page('longrun problem types', PROBLEM_CODES, [
    'Every error of the longrun API is an RFC 9457 <code>application/problem+json</code> body whose <code>type</code> is one of these pages, relative to the URL of the response.',
  ]);
  const single = new Map(
    PROBLEM_CODES.map((code) => [
      code,
      page(
        `${code}: ${PROBLEM_TYPES[code].title}`,
        [code],
        [`One of the <a href="${PROBLEM_TYPES_PATH}">longrun problem types</a>.`],
      ),
    ]),
  );

  mount(router, listProblemTypes, (_req, res) => {
    send(res, catalogue);
  });
  mount<{ code: string }>(router, getProblemType, (req, res, next) => {
    const { code } = req.params;
    if (!isProblemCode(code)) {
      next();
      return;
    }
    send(res, single.get(code) as string);
  });
  return router;
}

function send(res: Response, html: string): void {
  res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', 'no-cache');
  res.type('html').send(html);
}

function page(title: string, codes: readonly ProblemCode[], intro: string[]): string {
  const sections = codes.map((code) => {
    const entry = PROBLEM_TYPES[code];
    return [
      `<section id="${code}">`,
      `<h2><a href="${problemTypeUri(code)}"><code>${code}</code></a>: ${escape(entry.title)}</h2>`,
      `<p>HTTP ${entry.status.join(', ')}. ${prose(entry.means)}</p>`,
      `<p><strong>What to do:</strong> ${prose(entry.todo)}</p>`,
      '</section>',
    ].join('\n');
  });
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8" />
<meta name="viewport" content="width=device-width, initial-scale=1" />
<title>${escape(title)}</title>
</head>
<body>
<h1>${escape(title)}</h1>
${intro.map((p) => `<p>${p}</p>`).join('\n')}
${sections.join('\n')}
<p>The API itself: <a href="/docs">/docs</a>, <a href="/openapi.json">/openapi.json</a>.</p>
</body>
</html>
`;
}

/** The catalogue's Markdown-ish text as HTML: escaped, with `code` spans. */
function prose(text: string): string {
  return escape(text).replace(/`([^`]+)`/g, '<code>$1</code>');
}

function escape(text: string): string {
  return text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')
    .replaceAll('"', '&quot;');
}
