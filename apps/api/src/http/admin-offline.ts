import type { NextFunction, Request, Response } from 'express';

/** A `<link>` to a stylesheet or font on another host (bull-board's page links Google Fonts). */
const REMOTE_LINK = /<link\b[^>]*\bhref="(?:https?:)?\/\/[^"]*"[^>]*>\s*/gi;

/**
 * Keeps the queue dashboard's page on this origin: bull-board renders its index with a `<link>`
 * to Google Fonts, so opening it sends the operator's browser (and address) to Google, and
 * offline it waits on a request that never answers. This strips every link to another host from
 * the rendered page (its stylesheet names system fonts after the web ones, so the page looks the
 * same but for the typeface); its own assets are relative and stay. Runs before bull-board's
 * router: the page is rendered through `res.render`, which it wraps for this response only.
 * @example router.use('/admin/queues', requireAdmin(keys), offlinePage, boardRouter)
 */
export function offlinePage(_req: Request, res: Response, next: NextFunction): void {
  const render = res.render.bind(res) as (
    view: string,
    options?: object,
    callback?: (err: Error | null, html?: string) => void,
  ) => void;
  res.render = ((view: string, options?: object, callback?: () => void) => {
    // A caller that takes the html itself gets it as it is (bull-board sends it).
    if (typeof options === 'function' || callback) return render(view, options, callback);
    render(view, options ?? {}, (err, html) => {
      if (err) return next(err);
      res.send((html ?? '').replace(REMOTE_LINK, ''));
    });
  }) as Response['render'];
  next();
}
