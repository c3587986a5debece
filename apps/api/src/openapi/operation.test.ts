import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { OPERATIONS } from '../routes/operations.js';
import { mount, pathItems, routePath, type Operation } from './operation.js';

const context = { jobTypes: '`echo`', minEveryMs: 1000 };
const op = (over: Partial<Operation>): Operation => ({
  method: 'get',
  path: '/things/{id}',
  operationId: 'getThing',
  summary: 'A thing',
  responses: { '200': { description: 'It.' } },
  ...over,
});
const ID = { $ref: '#/components/parameters/ThingId' };

describe('pathItems', () => {
  it('puts the operations of one path on one item, its path parameters on the item', () => {
    const paths = pathItems(
      [
        op({ pathParameters: [ID] }),
        op({ method: 'delete', operationId: 'deleteThing', pathParameters: [ID] }),
      ],
      context,
    );
    expect(Object.keys(paths)).toEqual(['/things/{id}']);
    const item = paths['/things/{id}'] as Record<string, Record<string, unknown>>;
    expect(Object.keys(item)).toEqual(['parameters', 'get', 'delete']);
    expect(item.parameters).toEqual([ID]);
    expect(item.get).not.toHaveProperty('parameters');
    expect(item.delete?.operationId).toBe('deleteThing');
  });

  it('writes a description that depends on the document as of when it is built', () => {
    const paths = pathItems(
      [op({ description: ({ jobTypes, minEveryMs }) => `${jobTypes} ${minEveryMs}` })],
      context,
    );
    expect(paths['/things/{id}']).toMatchObject({ get: { description: '`echo` 1000' } });
  });

  it('refuses an operation declared twice, by method and path or by id', () => {
    expect(() => pathItems([op({}), op({ operationId: 'other' })], context)).toThrow(
      'GET /things/{id} is declared twice',
    );
    expect(() => pathItems([op({}), op({ path: '/other' })], context)).toThrow(
      'operationId getThing is declared twice',
    );
    expect(() =>
      pathItems([op({ pathParameters: [ID] }), op({ method: 'post', operationId: 'x' })], context),
    ).toThrow('x declares other path parameters');
  });

  it('the API declares no operation twice', () => {
    expect(() => pathItems(OPERATIONS, context)).not.toThrow();
  });
});

describe('mount', () => {
  it("serves the operation's method at its path as Express spells it", async () => {
    expect(routePath(op({}))).toBe('/things/:id');
    expect(routePath(op({ path: '/things', route: '/things/' }))).toBe('/things/');

    const app = express();
    mount<{ id: string }>(app, op({ method: 'delete' }), (req, res) => {
      res.json({ deleted: req.params.id });
    });
    const server = createServer(app).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const deleted = await fetch(`${base}/things/7`, { method: 'DELETE' });
      expect(await deleted.json()).toEqual({ deleted: '7' });
      expect((await fetch(`${base}/things/7`)).status).toBe(404);
    } finally {
      server.close();
    }
  });
});
