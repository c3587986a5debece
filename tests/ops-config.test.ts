/**
 * The operations stack in deploy/ and docker-compose.yml, checked without Docker or Kubernetes:
 * - Prometheus: `promtool check config/rules` and `promtool test rules` (Debian's `prometheus`
 *   package; skipped when promtool is absent);
 * - docker-compose.yml: parsed, every mounted file exists, scrape targets and Grafana's datasource
 *   point at real services and ports, the API's environment passes the API's own config loader;
 * - the Grafana dashboard: structure, and the metric honesty check: every longrun/process/nodejs
 *   metric (and label) that the dashboard and the alert rules query is one the real API and a real
 *   worker export, scraped after running jobs; then a real Prometheus (when installed) scrapes
 *   them and evaluates every dashboard and alert expression;
 * - deploy/k8s: every object validated against the Kubernetes schemas (kubernetes-models), probes,
 *   grace periods and cross-references checked, and the manifests' environment starts the apps.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join, posix, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import { inject, afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { loadConfig as loadApiConfig } from '@longrun/api';
import { waitFor } from './helpers/http.js';
import { startApp, type Proc } from './helpers/processes.js';
import {
  startInProcessApi,
  startWorker,
  uniquePrefix,
  type InProcessApi,
} from './helpers/service.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed YAML/JSON documents
type Doc = any;

const root = resolve(import.meta.dirname, '..');
const at = (...parts: string[]) => resolve(root, ...parts);
const readYaml = (path: string): Doc => parse(readFileSync(path, 'utf8'), { merge: true });
const run = promisify(execFile);

/** The path of an executable on PATH (or in /usr/bin, /usr/sbin), or undefined. */
function findBinary(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/sbin'];
  for (const dir of dirs.filter(Boolean)) {
    const path = join(dir, name);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  return undefined;
}

const promtool = findBinary('promtool');
const prometheusBin = findBinary('prometheus');

// ---- PromQL and exposition-format helpers --------------------------------------------------------

const PROMQL_KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan', 'atan2']);
const LABEL_LIST = /\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g;

/**
 * Metric names an expression selects: identifiers that are not functions, aggregations or
 * keywords, once strings, label matchers, ranges and label lists are removed.
 */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(LABEL_LIST, ' ');
  const names = new Set<string>();
  for (const m of bare.matchAll(/(?<![\w:$.])([A-Za-z_:][\w:]*)(?![\w:])(?!\s*\()/g)) {
    if (!PROMQL_KEYWORDS.has(m[1]!.toLowerCase())) names.add(m[1]!);
  }
  return [...names];
}

/** `metric{label op "value", …}` selectors in an expression. */
function selectors(expr: string): { metric: string; label: string; op: string; value: string }[] {
  const out = [];
  for (const sel of expr.matchAll(/([A-Za-z_:][\w:]*)\s*\{([^}]*)\}/g)) {
    for (const m of sel[2]!.matchAll(/(\w+)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"/g)) {
      out.push({ metric: sel[1]!, label: m[1]!, op: m[2]!, value: m[3]! });
    }
  }
  return out;
}

/** Labels named in by/without/on/ignoring/group_* clauses. */
function groupingLabels(expr: string): string[] {
  return [...expr.matchAll(LABEL_LIST)].flatMap((m) =>
    m[1]!
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
}

/** Sample names in a Prometheus text exposition, with the label names and values seen on each. */
function parseExposition(text: string): Map<string, Map<string, Set<string>>> {
  const metrics = new Map<string, Map<string, Set<string>>>();
  for (const line of text.split('\n')) {
    const m = /^([A-Za-z_:][\w:]*)(?:\{(.*)\})?\s+\S+/.exec(line);
    if (!m) continue;
    const labels = metrics.get(m[1]!) ?? new Map<string, Set<string>>();
    metrics.set(m[1]!, labels);
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      const values = labels.get(l[1]!) ?? new Set<string>();
      values.add(l[2]!);
      labels.set(l[1]!, values);
    }
  }
  return metrics;
}

/** Metrics longrun's own processes must export; `up` and `redis_*` come from Prometheus and redis_exporter. */
const isOurs = (name: string) => /^(longrun|process|nodejs)_/.test(name);
/** Labels Prometheus adds at scrape time (or histogram_quantile needs), not the exporter. */
const TARGET_LABELS = new Set(['job', 'instance', 'le', 'namespace', 'pod']);

// ---- the files under test ------------------------------------------------------------------------

const dashboard: Doc = JSON.parse(
  readFileSync(at('deploy/grafana/dashboards/longrun.json'), 'utf8'),
);
const alerts: Doc = readYaml(at('deploy/prometheus/alerts.yml'));
const alertRules: Doc[] = alerts.groups.flatMap((g: Doc) => g.rules).filter((r: Doc) => r.alert);
const recordingRules: Doc[] = alerts.groups
  .flatMap((g: Doc) => g.rules)
  .filter((r: Doc) => r.record);
/** An expression with the series our recording rules make spelled out as their expressions. */
const expand = (expr: string): string =>
  recordingRules.reduce((e, r) => e.split(r.record as string).join(`(${r.expr})`), expr);
const panels: Doc[] = dashboard.panels.filter((p: Doc) => p.type !== 'row');
const dashboardTargets: { panel: string; expr: string; legend?: string }[] = panels.flatMap(
  (p: Doc) =>
    (p.targets ?? []).map((t: Doc) => ({ panel: p.title, expr: t.expr, legend: t.legendFormat })),
);
const referenced: { where: string; expr: string }[] = [
  ...dashboardTargets.map((t) => ({ where: `dashboard panel "${t.panel}"`, expr: t.expr })),
  ...alertRules.map((r: Doc) => ({ where: `alert ${r.alert}`, expr: expand(r.expr as string) })),
  ...recordingRules.map((r: Doc) => ({ where: `rule ${r.record}`, expr: r.expr as string })),
];

describe('PromQL helpers', () => {
  it('find metric names, not functions, keywords, labels, ranges or strings', () => {
    expect(
      metricNames(
        'histogram_quantile(0.99, sum by (le, type) (rate(longrun_job_duration_seconds_bucket{type=~"a|b"}[$__rate_interval])))',
      ),
    ).toEqual(['longrun_job_duration_seconds_bucket']);
    expect(
      metricNames(
        '(max by (queue) (a_total{state="waiting"}) > 0) unless on () (sum(b_gauge) > 0) or on () vector(0) offset 5m',
      ).sort(),
    ).toEqual(['a_total', 'b_gauge']);
    expect(metricNames('up{job="x"} == 0 or absent(up{job="x"})')).toEqual(['up']);
    expect(metricNames('sum(rate(x[5m])) by (le) / 1e3 > bool 2')).toEqual(['x']);
    expect(groupingLabels('sum by (type, outcome) (x) / on (type) group_left () y')).toEqual([
      'type',
      'outcome',
      'type',
    ]);
    expect(selectors('x{a="1", b=~"2|3"}')).toEqual([
      { metric: 'x', label: 'a', op: '=', value: '1' },
      { metric: 'x', label: 'b', op: '=~', value: '2|3' },
    ]);
  });
});

// ---- Prometheus ----------------------------------------------------------------------------------

describe('alert rules', () => {
  it('every alert has a severity and a summary and description', () => {
    expect(alertRules.length).toBeGreaterThanOrEqual(7);
    for (const rule of alertRules) {
      expect(['warning', 'critical'], rule.alert).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary, rule.alert).toBeTruthy();
      expect(rule.annotations?.description, rule.alert).toBeTruthy();
    }
  });

  it('cover what the issue asks for', () => {
    const exprs = alertRules.map((r: Doc) => r.expr as string).join('\n');
    // Under fair share (the default) waiting jobs are BullMQ's prioritized ones.
    expect(exprs).toMatch(/deriv\(longrun:queue_backlog:max\[10m\]\)/);
    expect(expand(exprs)).toContain('longrun_queue_jobs{state=~"waiting|prioritized"}');
    expect(exprs).toContain('longrun_worker_concurrency');
    expect(exprs).toContain('longrun_jobs_processed_total{outcome="failed"}');
    expect(exprs).toMatch(
      /histogram_quantile\(0\.99,[\s\S]*longrun_http_request_duration_seconds_bucket/,
    );
    expect(exprs).toMatch(/redis_memory_used_bytes \/ \(redis_memory_max_bytes > 0\)/);
    expect(exprs).toContain('up{job="longrun-api"} == 0');
    expect(exprs).toContain('longrun_redis_up == 0');
    expect(exprs).toMatch(/histogram_quantile\(0\.95,[\s\S]*longrun_job_queue_wait_seconds_bucket/);
  });

  it('every alert has a unit test that fires it and one that expects silence', () => {
    const tests: Doc = readYaml(at('deploy/prometheus/alerts.test.yml'));
    const cases = tests.tests.flatMap((t: Doc) => t.alert_rule_test ?? []);
    for (const rule of alertRules) {
      const mine = cases.filter((c: Doc) => c.alertname === rule.alert);
      expect(
        mine.some((c: Doc) => (c.exp_alerts ?? []).length > 0),
        `${rule.alert} fires in a test`,
      ).toBe(true);
      expect(
        mine.some((c: Doc) => (c.exp_alerts ?? []).length === 0),
        `${rule.alert} stays quiet in a test`,
      ).toBe(true);
    }
  });
});

describe.skipIf(!promtool)('promtool', () => {
  const cwd = at('deploy/prometheus');

  it('check config: prometheus.yml and the rule files it loads', async () => {
    const { stdout } = await run(promtool!, ['check', 'config', 'prometheus.yml'], { cwd });
    expect(stdout).toMatch(/SUCCESS: 1 rule files found/);
  });

  it('check rules: alerts.yml', async () => {
    const { stdout } = await run(promtool!, ['check', 'rules', 'alerts.yml'], { cwd });
    expect(stdout).toContain(`SUCCESS: ${alerts.groups.flatMap((g: Doc) => g.rules).length} rules`);
  });

  it('test rules: alerts.test.yml (input series -> expected alerts)', async () => {
    const result = await run(promtool!, ['test', 'rules', 'alerts.test.yml'], { cwd }).catch(
      (error: { stdout?: string; stderr?: string }) => error,
    );
    expect(`${result.stdout ?? ''}${result.stderr ?? ''}`).toMatch(/SUCCESS/);
    expect(`${result.stdout ?? ''}${result.stderr ?? ''}`).not.toMatch(/FAILED/);
  });
});

// ---- docker-compose.yml --------------------------------------------------------------------------

/** Compose's `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}` and `$$`. */
function interpolate(value: unknown, env: Record<string, string>): unknown {
  if (typeof value === 'string') {
    return value.replace(
      /\$\$|\$\{(\w+)(?:(:?)([-?])([^}]*))?\}/g,
      (whole, name: string | undefined, colon: string, kind: string, arg: string) => {
        if (whole === '$$') return '$';
        const set = env[name!];
        const missing = set === undefined || (colon === ':' && set === '');
        if (!missing) return set;
        if (kind === '-') return arg;
        if (kind === '?') throw new Error(`${name}: ${arg}`);
        return '';
      },
    );
  }
  if (Array.isArray(value)) return value.map((v) => interpolate(v, env));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env)]));
  }
  return value;
}

describe('docker-compose.yml', () => {
  const raw: Doc = readYaml(at('docker-compose.yml'));
  const compose: Doc = interpolate(raw, { LONGRUN_API_KEYS: 'acme:0123456789abcdef0123' });
  const services: Record<string, Doc> = compose.services;

  /** Bind mounts `./host:/container[:ro]` of a service. */
  const binds = (service: string) =>
    ((services[service]!.volumes ?? []) as string[])
      .filter((v) => v.startsWith('./'))
      .map((v) => {
        const [host, container] = v.split(':');
        return { host: at(host!), container: container! };
      });
  /** The host path a container path of a service comes from, through its bind mounts. */
  const hostPath = (service: string, containerPath: string) => {
    for (const b of binds(service)) {
      if (containerPath === b.container || containerPath.startsWith(`${b.container}/`)) {
        return join(b.host, posix.relative(b.container, containerPath));
      }
    }
    throw new Error(`${containerPath} is not mounted into ${service}`);
  };

  it('starts without any variable set (no .env, no key): the api makes its own key', () => {
    expect(() => interpolate(raw, {})).not.toThrow();
  });

  it('runs prometheus, grafana and redis-exporter beside redis, api and worker', () => {
    expect(Object.keys(services).sort()).toEqual(
      ['api', 'grafana', 'prometheus', 'redis', 'redis-exporter', 'worker'].sort(),
    );
    for (const name of ['prometheus', 'grafana', 'redis-exporter']) {
      // A pinned version tag: never latest, never a bare name.
      expect(services[name]!.image, name).toMatch(/^[\w./-]+:v?\d+\.\d+\.\d+$/);
    }
    expect(services.grafana.environment.GF_AUTH_ANONYMOUS_ENABLED).toBe('true');
    expect(services.grafana.environment.GF_AUTH_ANONYMOUS_ORG_ROLE).toBe('Viewer');
  });

  it('mounts only files that exist', () => {
    let count = 0;
    for (const name of Object.keys(services)) {
      for (const b of binds(name)) {
        expect(existsSync(b.host), `${name}: ${relative(root, b.host)}`).toBe(true);
        count++;
      }
    }
    expect(count).toBeGreaterThanOrEqual(3);
    const prom = services.prometheus;
    const configFlag = (prom.command as string[]).find((c) => c.startsWith('--config.file='))!;
    const config = hostPath('prometheus', configFlag.split('=')[1]!);
    expect(config).toBe(at('deploy/prometheus/prometheus.yml'));
    for (const file of readYaml(config).rule_files as string[]) {
      expect(existsSync(resolve(config, '..', file)), file).toBe(true);
    }
  });

  it('publishes no host port twice; Prometheus and Grafana on loopback by default', () => {
    const published = Object.entries(services).flatMap(([name, s]) =>
      ((s.ports ?? []) as string[]).map((p) => ({ name, parts: p.split(':') })),
    );
    const hostPorts = published.map((p) => p.parts.at(-2));
    expect(new Set(hostPorts).size).toBe(hostPorts.length);
    const byName = Object.fromEntries(published.map((p) => [p.name, p.parts.join(':')]));
    expect(byName.prometheus).toBe('127.0.0.1:9090:9090');
    expect(byName.grafana).toBe('127.0.0.1:3001:3000');
  });

  it("Prometheus' scrape targets are compose services on the ports they listen on", () => {
    const config = readYaml(at('deploy/prometheus/prometheus.yml'));
    const listens: Record<string, number[]> = {
      api: [Number(services.api.environment.PORT)],
      worker: [Number(services.worker.environment.LONGRUN_METRICS_PORT)],
      'redis-exporter': [9121],
      prometheus: [9090],
    };
    for (const [name, ports] of Object.entries(listens)) {
      const exposed = ((services[name]?.expose ?? []) as string[]).map(Number);
      if (exposed.length) expect(exposed, name).toEqual(expect.arrayContaining(ports));
    }
    const jobs = Object.fromEntries(config.scrape_configs.map((j: Doc) => [j.job_name, j]));
    // The job names the alert rules and the dashboard select on.
    expect(Object.keys(jobs)).toEqual(expect.arrayContaining(['longrun-api', 'longrun-worker']));
    let targets = 0;
    for (const job of config.scrape_configs) {
      for (const sd of job.dns_sd_configs ?? []) {
        expect(sd.type, job.job_name).toBe('A');
        for (const name of sd.names) {
          expect(listens[name], `${job.job_name}: ${name}`).toContain(sd.port);
          targets++;
        }
      }
      for (const sc of job.static_configs ?? []) {
        for (const target of sc.targets as string[]) {
          const [host, port] = target.split(':');
          const service = host === 'localhost' ? job.job_name : host!;
          expect(listens[service], `${job.job_name}: ${target}`).toContain(Number(port));
          targets++;
        }
      }
    }
    expect(targets).toBeGreaterThanOrEqual(4);
    expect(jobs['longrun-worker'].dns_sd_configs[0]).toMatchObject({
      names: ['worker'],
      port: 9464,
    });
  });

  it("Grafana's datasource is the prometheus service; its dashboards folder is mounted", () => {
    const ds = readYaml(at('deploy/grafana/provisioning/datasources/prometheus.yml'));
    expect(ds.datasources).toHaveLength(1);
    expect(ds.datasources[0]).toMatchObject({ type: 'prometheus', url: 'http://prometheus:9090' });
    expect(hostPath('grafana', '/etc/grafana/provisioning/datasources/prometheus.yml')).toBe(
      at('deploy/grafana/provisioning/datasources/prometheus.yml'),
    );
    const provider = readYaml(at('deploy/grafana/provisioning/dashboards/longrun.yml'))
      .providers[0];
    const folder = hostPath('grafana', provider.options.path);
    expect(folder).toBe(at('deploy/grafana/dashboards'));
    expect(readdirSync(folder)).toContain('longrun.json');
    const home = services.grafana.environment.GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH;
    expect(statSync(hostPath('grafana', home)).isFile()).toBe(true);
  });

  it("the API's environment passes the API's own config loader", () => {
    const env = { ...services.api.environment, NODE_ENV: 'production' };
    const config = loadApiConfig(
      Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)])),
    );
    expect(config.PORT).toBe(3000);
  });
});

// ---- Grafana dashboard ---------------------------------------------------------------------------

describe('Grafana dashboard', () => {
  it('is a provisionable dashboard with unique panel ids on a 24-column grid', () => {
    expect(dashboard.uid).toBe('longrun-overview');
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    const ids = dashboard.panels.map((p: Doc) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const p of dashboard.panels) {
      expect(p.gridPos.x + p.gridPos.w, p.title).toBeLessThanOrEqual(24);
    }
    for (const p of panels) {
      expect(['timeseries', 'stat'], p.title).toContain(p.type);
      expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(p.targets?.length, p.title).toBeGreaterThan(0);
    }
    const vars = dashboard.templating.list.map((v: Doc) => v.name);
    expect(vars).toEqual(['datasource', 'queue']);
  });

  it('shows what the issue asks for', () => {
    const exprs = dashboardTargets.map((t) => t.expr);
    const has = (re: RegExp) =>
      expect(
        exprs.some((e) => re.test(e)),
        String(re),
      ).toBe(true);
    // Queue depth by state: each replica's shards summed, then one replica's view.
    has(/max by \(queue, state\) \(sum by \(queue, state, instance\) \(longrun_queue_jobs/);
    has(/max by \(shard\) \(sum by \(shard, instance\) \(longrun_queue_jobs/); // per shard
    has(/sum by \(type, outcome\) \(rate\(longrun_jobs_processed_total/); // throughput
    for (const q of ['0.5', '0.95', '0.99']) {
      has(new RegExp(`histogram_quantile\\(${q}, .*longrun_job_duration_seconds_bucket`));
      has(new RegExp(`histogram_quantile\\(${q}, .*longrun_job_queue_wait_seconds_bucket`));
    }
    has(/histogram_quantile\(0\.99, .*longrun_http_request_duration_seconds_bucket/); // API p99
    has(/histogram_quantile\(0\.5, .*longrun_http_request_duration_seconds_bucket/); // API p50
    has(/status=~"5\.\."\}.*\/ sum\(rate\(longrun_http_request_duration_seconds_count/); // 5xx ratio
    has(/max by \(state\) \(sum by \(state, instance\) \(longrun_queue_jobs/); // task statuses
    has(/^count\(up\{job="longrun-worker"\} == 1\)$/); // worker count
    has(/^sum\(longrun_worker_active_jobs\) \/ sum\(longrun_worker_concurrency\)$/); // saturation
    has(/redis_memory_used_bytes/);
    has(/redis_memory_max_bytes/);
  });
});

// ---- metric honesty ------------------------------------------------------------------------------

describe('metric honesty: what the dashboard and alerts query, the apps export', () => {
  let api: InProcessApi;
  let worker: Proc;
  let exported: Map<string, Map<string, Set<string>>>;

  beforeAll(async () => {
    api = await startInProcessApi();
    worker = await startWorker(api.prefix);
    // One run of each outcome the rules select on, so the labelled series exist.
    for (const [type, input, status] of [
      ['echo', { hello: 'metrics' }, 'completed'],
      ['fail', { message: 'on purpose' }, 'failed'],
    ] as const) {
      const res = await api.http('POST', '/v1/jobs', { body: { type, input } });
      expect(res.status, res.text).toBe(202);
      await waitFor(
        async () => (await api.http('GET', `/v1/jobs/${res.body.taskId}`)).body?.status === status,
        { what: `${type} ${status}` },
      );
    }
    const apiText = (await api.http('GET', '/metrics')).text;
    const port = worker.ready.metricsPort as number;
    // The worker counts a run just after it records the task's status: wait for the counts (the
    // failed one briefly: if it never comes, the label check below says which rule it breaks).
    const scrape = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    const counted = (outcome: string) => async () => {
      const text = await scrape();
      return new RegExp(`longrun_jobs_processed_total\\{[^}]*outcome="${outcome}"`).test(text);
    };
    await waitFor(counted('completed'), { what: 'the worker to count the echo run' });
    await waitFor(counted('failed'), { timeoutMs: 2000 }).catch(() => undefined);
    const workerText = await scrape();
    exported = parseExposition(`${apiText}\n${workerText}`);
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
  });

  it('every longrun/process/nodejs metric referenced is exported (histograms by _bucket/_sum/_count)', () => {
    const checked = new Set<string>();
    const missing: string[] = [];
    for (const { where, expr } of referenced) {
      for (const name of metricNames(expr)) {
        if (name === 'up' || name.startsWith('redis_')) continue;
        expect(isOurs(name), `${where}: ${name} is neither ours nor a known exporter's`).toBe(true);
        checked.add(name);
        if (!exported.has(name)) missing.push(`${where}: ${name}`);
      }
    }
    expect(missing).toEqual([]);
    // The check saw the metrics it exists for (a tokenizer that finds nothing proves nothing).
    expect([...checked]).toEqual(
      expect.arrayContaining([
        'longrun_queue_jobs',
        'longrun_jobs_processed_total',
        'longrun_job_duration_seconds_bucket',
        'longrun_http_request_duration_seconds_bucket',
        'longrun_http_request_duration_seconds_count',
        'longrun_worker_active_jobs',
        'longrun_worker_concurrency',
        'longrun_redis_up',
        'process_cpu_seconds_total',
        'nodejs_eventloop_lag_p99_seconds',
      ]),
    );
    // ...and the exporter side really lacks what it does not export.
    expect(exported.has('longrun_job_duration_seconds')).toBe(false);
  });

  it('every label they match or group by exists, and every exact label value too', () => {
    const problems: string[] = [];
    for (const { where, expr } of referenced) {
      const ours = metricNames(expr).filter(isOurs);
      for (const s of selectors(expr).filter((s) => isOurs(s.metric))) {
        if (TARGET_LABELS.has(s.label)) continue;
        const values = exported.get(s.metric)?.get(s.label);
        if (!values) problems.push(`${where}: ${s.metric} has no label ${s.label}`);
        else if (s.op === '=' && !s.value.includes('$') && !values.has(s.value)) {
          problems.push(`${where}: ${s.metric}{${s.label}="${s.value}"} is never exported`);
        }
      }
      if (!ours.length) continue;
      for (const label of groupingLabels(expr)) {
        if (TARGET_LABELS.has(label)) continue;
        if (!ours.some((m) => exported.get(m)?.has(label))) {
          problems.push(`${where}: groups by ${label}, which none of ${ours.join(', ')} has`);
        }
      }
    }
    expect(problems).toEqual([]);
    // The queue variable reads a label that exists.
    const queueVar = dashboard.templating.list.find((v: Doc) => v.name === 'queue');
    expect(queueVar.definition).toBe('label_values(longrun_queue_jobs, queue)');
    expect(exported.get('longrun_queue_jobs')?.has('queue')).toBe(true);
  });

  describe.skipIf(!prometheusBin)('a real Prometheus scraping them', () => {
    let prom: ChildProcess | undefined;
    let dir: string;
    let promUrl: string;

    /** An instant query; resolves with Prometheus' JSON answer whatever its status. */
    async function query(expr: string): Promise<Doc> {
      const res = await fetch(`${promUrl}/api/v1/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ query: expr }),
      });
      return res.json();
    }

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'longrun-prometheus-'));
      const port = await new Promise<number>((resolvePort) => {
        const s = createServer().listen(0, '127.0.0.1', () => {
          const p = (s.address() as { port: number }).port;
          s.close(() => resolvePort(p));
        });
      });
      promUrl = `http://127.0.0.1:${port}`;
      const apiHost = new URL(api.url).host;
      const config = {
        global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
        scrape_configs: [
          { job_name: 'longrun-api', static_configs: [{ targets: [apiHost] }] },
          {
            job_name: 'longrun-worker',
            static_configs: [{ targets: [`127.0.0.1:${worker.ready.metricsPort as number}`] }],
          },
        ],
      };
      await writeFile(join(dir, 'prometheus.yml'), JSON.stringify(config));
      prom = spawn(
        prometheusBin!,
        [
          `--config.file=${join(dir, 'prometheus.yml')}`,
          `--storage.tsdb.path=${join(dir, 'data')}`,
          `--web.listen-address=127.0.0.1:${port}`,
        ],
        { stdio: 'ignore' },
      );
      // Enough scrapes of both targets for rate() over a 1m window.
      await waitFor(
        async () => {
          const r = await query('count_over_time(up[1m]) >= 3 and up == 1');
          return r.status === 'success' && r.data.result.length === 2;
        },
        { timeoutMs: 25_000, intervalMs: 250, what: 'Prometheus scraping the API and the worker' },
      );
    }, 30_000);
    afterAll(async () => {
      if (prom && prom.exitCode === null) {
        const exited = new Promise((r) => prom!.once('exit', r));
        prom.kill('SIGTERM');
        await exited;
      }
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('evaluates every dashboard query; ours return series carrying their legend labels', async () => {
      const problems: string[] = [];
      for (const t of dashboardTargets) {
        const expr = t.expr.replaceAll('$__rate_interval', '1m').replaceAll('$queue', '.*');
        const r = await query(expr);
        if (r.status !== 'success') {
          problems.push(`"${t.panel}": ${r.error}`);
          continue;
        }
        const names = metricNames(t.expr);
        // 5xx-only series exist once the API answered a 5xx, which a healthy run never does.
        const mayBeEmpty = !names.some(isOurs) || t.expr.includes('status=~"5.."');
        if (!mayBeEmpty && r.data.result.length === 0) {
          problems.push(`"${t.panel}": no data for ${t.expr}`);
        }
        for (const label of [...(t.legend ?? '').matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map(
          (m) => m[1]!,
        )) {
          for (const series of r.data.result) {
            if (!(label in series.metric)) problems.push(`"${t.panel}": legend {{${label}}} unset`);
          }
        }
      }
      expect(problems).toEqual([]);
    });

    it('evaluates every alert expression', async () => {
      for (const rule of alertRules) {
        const r = await query(rule.expr);
        expect(r.status, `${rule.alert}: ${r.error}`).toBe('success');
      }
    });
  });
});

// ---- Kubernetes example --------------------------------------------------------------------------

describe('deploy/k8s', () => {
  const files = readdirSync(at('deploy/k8s')).filter((f) => f.endsWith('.yaml'));
  const objects: Doc[] = files.flatMap((f) =>
    parseAllDocuments(readFileSync(at('deploy/k8s', f), 'utf8')).map((d) => {
      if (d.errors.length) throw new Error(`deploy/k8s/${f}: ${d.errors.join('; ')}`);
      return { ...d.toJS(), __file: f };
    }),
  );
  const find = (kind: string, name: string): Doc => {
    const found = objects.find((o) => o.kind === kind && o.metadata?.name === name);
    if (!found) throw new Error(`no ${kind} ${name} in deploy/k8s`);
    return found;
  };
  const api = find('Deployment', 'longrun-api');
  const worker = find('Deployment', 'longrun-worker');
  const config = find('ConfigMap', 'longrun-config');
  const secret = find('Secret', 'longrun-secrets');

  /** A Kubernetes model class for apiVersion/kind, from kubernetes-models. */
  async function model(apiVersion: string, kind: string): Promise<Doc> {
    const mod = await import(`kubernetes-models/${apiVersion}`);
    return mod[kind];
  }
  const withoutFile = ({ __file: _file, ...o }: Doc) => o;

  it('is marked as an example, with the Redis note', () => {
    const readme = readFileSync(at('deploy/k8s/README.md'), 'utf8');
    expect(readme).toMatch(/^# .*example/im);
    expect(readme).toMatch(/noeviction/);
    expect(readme).toMatch(/appendonly|AOF/i);
    for (const f of files) {
      expect(readFileSync(at('deploy/k8s', f), 'utf8'), f).toMatch(/^# EXAMPLE ONLY/);
    }
  });

  it('every object passes the Kubernetes schema of its apiVersion/kind', async () => {
    expect(objects.map((o) => `${o.apiVersion}/${o.kind}`).sort()).toEqual(
      expect.arrayContaining([
        'apps/v1/Deployment',
        'apps/v1/Deployment',
        'autoscaling/v2/HorizontalPodAutoscaler',
        'policy/v1/PodDisruptionBudget',
        'v1/ConfigMap',
        'v1/Secret',
        'v1/Service',
      ]),
    );
    for (const o of objects) {
      const Model = await model(o.apiVersion, o.kind);
      expect(Model, `${o.__file}: ${o.apiVersion} ${o.kind}`).toBeDefined();
      expect(() => new Model(withoutFile(o)).validate(), `${o.__file}: ${o.kind}`).not.toThrow();
    }
  });

  it('the schema check bites: a wrong type or a missing required field fails', async () => {
    const Deployment = await model('apps/v1', 'Deployment');
    const wrongType = structuredClone(withoutFile(api));
    wrongType.spec.template.spec.containers[0].ports[0].containerPort = '3000';
    expect(() => new Deployment(wrongType).validate()).toThrow(/containerPort/);
    const noSelector = structuredClone(withoutFile(api));
    delete noSelector.spec.selector;
    expect(() => new Deployment(noSelector).validate()).toThrow(/selector/);
  });

  it('probes: API liveness /healthz and readiness /readyz, worker liveness /healthz on 9464', () => {
    const apiC = api.spec.template.spec.containers[0];
    const portOf = (c: Doc, p: number | string) =>
      typeof p === 'number' ? p : c.ports.find((x: Doc) => x.name === p).containerPort;
    expect(apiC.livenessProbe.httpGet.path).toBe('/healthz');
    expect(apiC.readinessProbe.httpGet.path).toBe('/readyz');
    expect(portOf(apiC, apiC.livenessProbe.httpGet.port)).toBe(3000);
    const workerC = worker.spec.template.spec.containers[0];
    expect(workerC.livenessProbe.httpGet.path).toBe('/healthz');
    expect(portOf(workerC, workerC.livenessProbe.httpGet.port)).toBe(9464);
  });

  it('terminationGracePeriodSeconds outlasts LONGRUN_SHUTDOWN_GRACE_MS (+ preStop)', () => {
    for (const d of [api, worker]) {
      const spec = d.spec.template.spec;
      const c = spec.containers[0];
      const grace = Number(c.env.find((e: Doc) => e.name === 'LONGRUN_SHUTDOWN_GRACE_MS').value);
      const preStop = c.lifecycle?.preStop?.exec?.command;
      const preStopMs = preStop?.[0] === 'sleep' ? Number(preStop[1]) * 1000 : 0;
      expect(spec.terminationGracePeriodSeconds * 1000, d.metadata.name).toBeGreaterThan(
        grace + preStopMs,
      );
    }
  });

  it('selectors, Service, PDBs and HPA point at what exists', () => {
    for (const d of [api, worker]) {
      expect(d.spec.template.metadata.labels).toMatchObject(d.spec.selector.matchLabels);
    }
    const service = find('Service', 'longrun-api');
    expect(api.spec.template.metadata.labels).toMatchObject(service.spec.selector);
    const apiPorts = api.spec.template.spec.containers[0].ports.map((p: Doc) => p.name);
    expect(apiPorts).toContain(service.spec.ports[0].targetPort);
    for (const pdb of objects.filter((o) => o.kind === 'PodDisruptionBudget')) {
      const target = [api, worker].find((d) =>
        Object.entries(pdb.spec.selector.matchLabels).every(
          ([k, v]) => d.spec.template.metadata.labels[k] === v,
        ),
      );
      expect(target, pdb.metadata.name).toBeDefined();
    }
    const hpa = find('HorizontalPodAutoscaler', 'longrun-worker');
    expect(hpa.spec.scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'longrun-worker',
    });
    const metric = hpa.spec.metrics[0].external.metric;
    expect(metric.name).toBe('longrun_queue_jobs');
    expect(metric.selector.matchExpressions[0]).toEqual({
      key: 'state',
      operator: 'In',
      values: ['waiting', 'prioritized', 'active'],
    });
    // One pod per LONGRUN_WORKER_CONCURRENCY jobs.
    const concurrency = worker.spec.template.spec.containers[0].env.find(
      (e: Doc) => e.name === 'LONGRUN_WORKER_CONCURRENCY',
    ).value;
    expect(hpa.spec.metrics[0].external.target.averageValue).toBe(concurrency);
    for (const o of objects.filter(
      (x) => x.kind !== 'Namespace' && x.__file !== 'prometheus-adapter.yaml',
    )) {
      expect(o.metadata.namespace, `${o.kind} ${o.metadata.name}`).toBe('longrun');
    }
  });

  it('secrets come from the Secret, settings from the ConfigMap, and every key exists', () => {
    expect(Object.keys(secret.stringData).sort()).toEqual(['LONGRUN_API_KEYS', 'REDIS_URL']);
    expect(Object.keys(config.data)).not.toContain('REDIS_URL');
    for (const d of [api, worker]) {
      const c = d.spec.template.spec.containers[0];
      expect(c.envFrom).toEqual([{ configMapRef: { name: 'longrun-config' } }]);
      for (const e of c.env.filter((x: Doc) => x.valueFrom)) {
        const ref = e.valueFrom.secretKeyRef;
        expect(ref.name).toBe('longrun-secrets');
        expect(secret.stringData, e.name).toHaveProperty(ref.key);
      }
    }
  });

  /** The environment a container would get: ConfigMap, then its env (secrets resolved). */
  function podEnv(d: Doc): Record<string, string> {
    const env: Record<string, string> = { ...config.data };
    for (const e of d.spec.template.spec.containers[0].env) {
      env[e.name] = e.value ?? secret.stringData[e.valueFrom.secretKeyRef.key];
    }
    return env;
  }

  it("the API's environment passes the API's own config loader", () => {
    const cfg = loadApiConfig(podEnv(api));
    expect(cfg.PORT).toBe(3000);
    expect(cfg.REDIS_URL).toMatch(/^rediss:\/\//);
    expect(cfg.LONGRUN_SHUTDOWN_GRACE_MS).toBe(10_000);
  });

  it("the worker's environment starts a real worker (Redis and prefix swapped for the test's)", async () => {
    const env = {
      ...podEnv(worker),
      REDIS_URL: inject('redisUrl'),
      LONGRUN_PREFIX: uniquePrefix(),
      LONGRUN_METRICS_PORT: '0',
      LONGRUN_METRICS_HOST: '127.0.0.1',
    };
    const proc = await startApp('worker', env);
    try {
      expect(proc.ready.concurrency).toBe(8);
      const port = proc.ready.metricsPort as number;
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      expect(res.status).toBe(200);
    } finally {
      expect(await proc.stop()).toBe(0);
    }
  });
});
