#!/usr/bin/env node
// An example harness for the Harness API v5, in plain JavaScript.
//
// It depends on Node's standard library and `ws` only. hcpspec launches it as
//   node harness.js
// with NYLORUN_CORE_URL, NYLORUN_HARNESS_TOKEN, NYLORUN_GATES_URL and HARNESS_NAME set
// (or, as a pod's host, NYLORUN_SANDBOX_ID, NYLORUN_POD_UID, NYLORUN_JOIN_TOKEN and NYLORUN_HOST_RENEW_MS instead of the token)
// (docs/harness-api.md, section 1). It takes one run at a time (capacity 1).
'use strict';

const crypto = require('node:crypto');
const http = require('node:http');
const https = require('node:https');
const WebSocket = require('ws');

const VERSION = '0.1.0';
const API = 5;
const MAX_STEPS = 64; // model steps in one segment before the turn fails
const TOOL_NAME_MAX = 64;
const PREVIEW_CHARS = 512;
const CANCEL_POST_TIMEOUT_MS = 1000;
const DEBUG = /^(1|true|yes)$/i.test(process.env.HARNESS_DEBUG || '');

// Error codes of an answer that mean the run is no longer ours: stop it without a frame.
const RUN_OVER_CODES = new Set(['run_not_held', 'ownership_lost', 'turn_cancelled']);

// ---------------------------------------------------------------------------------------------
// Small helpers

const STARTED = Date.now();

function log(...parts) {
  const text = parts.map((p) => (typeof p === 'string' ? p : p instanceof Error ? p.message : safeJson(p))).join(' ');
  process.stderr.write(`[js-harness +${Date.now() - STARTED}ms] ${text}\n`);
}

function debug(...parts) {
  if (DEBUG) log(...parts);
}

function safeJson(v) {
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
}

function isObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** JSON with object keys sorted at every level: the input of every request hash. */
function canonicalJson(value) {
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return 'null';
  if (value === null || typeof value !== 'object') {
    const s = JSON.stringify(value);
    return s === undefined ? 'null' : s;
  }
  if (typeof value.toJSON === 'function') return canonicalJson(value.toJSON());
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value)
    .filter((k) => value[k] !== undefined && typeof value[k] !== 'function')
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
}

function sha256Hex(data) {
  return crypto.createHash('sha256').update(data).digest('hex');
}

function jsonBytes(value) {
  return Buffer.byteLength(JSON.stringify(value) ?? 'null', 'utf8');
}

function positiveInt(v, fallback) {
  return Number.isFinite(v) && v > 0 ? Math.floor(v) : fallback;
}

/** An effect id as a URL path segment: ':' is a legal path character and stays as it is. */
function pathSegment(key) {
  return encodeURIComponent(key).replace(/%3A/gi, ':').replace(/%40/g, '@');
}

// Gate calls go over node:http with a keep-alive agent: no client start-up cost on the first
// call, one connection reused for the rest.
const AGENTS = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };

/** POSTs a JSON body; resolves {status, text}. A kept-alive socket the server closed is retried once. */
function httpPost(urlString, headers, body, signal, retried = false) {
  return new Promise((resolve, reject) => {
    const url = new URL(urlString);
    const data = Buffer.from(body, 'utf8');
    const mod = url.protocol === 'https:' ? https : http;
    let answered = false;
    const req = mod.request(
      url,
      { method: 'POST', headers: { ...headers, 'Content-Length': data.length }, agent: AGENTS[url.protocol], signal },
      (res) => {
        answered = true;
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', (err) => {
      // A kept-alive socket the server had closed before it answered anything: the same key
      // and body again. Once an answer began, a break is a lost hop (the caller asks again).
      if (!retried && !answered && req.reusedSocket && !(signal && signal.aborted) && (err.code === 'ECONNRESET' || err.code === 'EPIPE')) {
        httpPost(urlString, headers, body, signal, true).then(resolve, reject);
      } else reject(err);
    });
    req.end(data);
  });
}

/** Sends of one tool call whose gate hop was lost, before its fate is recorded as unknown. */
const LOST_HOP_ATTEMPTS = 3;

class RpcError extends Error {
  constructor(code, message) {
    super(`${code}: ${message}`);
    this.code = code;
  }
}

/** Thrown inside a run's loop once the run is stopped: the loop unwinds and sends nothing. */
class Stopped extends Error {
  constructor() {
    super('run stopped');
  }
}

// ---------------------------------------------------------------------------------------------
// The connection to core

class CoreConnection {
  constructor(ws) {
    this.ws = ws;
    this.nextId = 1;
    this.pending = new Map(); // our request id -> {resolve, reject, m}
    this.coreInFlight = new Set(); // core's request ids we have not answered yet
    this.coreAborted = new Set(); // core's request ids whose answer core no longer wants
  }

  get open() {
    return this.ws.readyState === WebSocket.OPEN;
  }

  send(frame) {
    if (!this.open) return false;
    const text = JSON.stringify(frame);
    debug('->', text.length > 600 ? `${text.slice(0, 600)}…` : text);
    this.ws.send(text);
    return true;
  }

  request(m, p) {
    const id = String(this.nextId++);
    return new Promise((resolve, reject) => {
      if (!this.send({ t: 'req', id, m, p })) {
        reject(new RpcError('unavailable', 'the connection to core is closed'));
        return;
      }
      this.pending.set(id, { resolve, reject, m });
    });
  }

  /** Answers one of core's requests, unless core aborted it. */
  answer(id, frame) {
    this.coreInFlight.delete(id);
    if (this.coreAborted.delete(id)) return;
    this.send({ t: 'res', id, ...frame });
  }

  onResponse(frame) {
    const entry = this.pending.get(frame.id);
    if (!entry) {
      log(`an answer to no request of ours (id ${safeJson(frame.id)}), ignored`);
      return;
    }
    this.pending.delete(frame.id);
    if (frame.ok === true) entry.resolve(frame.r);
    else if (frame.ok === false) {
      const e = isObject(frame.e) ? frame.e : {};
      entry.reject(new RpcError(typeof e.code === 'string' ? e.code : 'invalid', typeof e.message === 'string' ? e.message : ''));
    } else entry.reject(new RpcError('invalid', `a malformed answer to ${entry.m}`));
  }

  failAll() {
    for (const [, entry] of this.pending) entry.reject(new RpcError('unavailable', 'connection closed'));
    this.pending.clear();
  }
}

// ---------------------------------------------------------------------------------------------
// One run

class Run {
  constructor(grant, input) {
    this.grant = grant;
    this.runId = grant.runId;
    this.sessionId = grant.sessionId;
    this.turnId = grant.turnId;
    this.token = grant.token;
    this.input = input;
    this.checkpoint = isObject(input.checkpoint) ? input.checkpoint : {};
    this.segment = this.checkpoint.segment ?? 0;
    this.limits = isObject(input.limits) ? input.limits : {};
    this.recordEntryBytes = positiveInt(this.limits.recordEntryBytes, 960 * 1024);
    this.chunkBytes = positiveInt(this.limits.chunkBytes, 16 * 1024 * 1024);
    this.harnessStateBytes = positiveInt(this.limits.harnessStateBytes, 256 * 1024);
    this.modelFileBytes = positiveInt(this.limits.modelFileBytes, 8 * 1024 * 1024);
    this.traceparent = isObject(input.trace) && typeof input.trace.traceparent === 'string' ? input.trace.traceparent : undefined;
    this.tracestate = isObject(input.trace) && typeof input.trace.tracestate === 'string' ? input.trace.tracestate : undefined;
    this.done = false; // no frame about this run may be sent any more
    this.inflight = new Map(); // Idempotency-Key -> {route, key, controller}
    this.renewTimer = null;
    this.renewing = false;
    this.steps = 0; // model steps this segment
    this.baseSteps = 0; // model steps of the turn's earlier segments
  }

  check() {
    if (this.done) throw new Stopped();
  }

  /** Ends the run locally: no more frames, no renewals; optionally drops its gate calls. */
  halt({ abortCalls }) {
    this.done = true;
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = null;
    if (abortCalls) for (const call of this.inflight.values()) call.controller.abort();
  }

  state() {
    const state = { steps: this.baseSteps + this.steps };
    return jsonBytes(state) <= this.harnessStateBytes ? state : {};
  }
}

// ---------------------------------------------------------------------------------------------
// The harness

class Harness {
  constructor(env) {
    this.coreUrl = env.NYLORUN_CORE_URL;
    this.token = env.NYLORUN_HARNESS_TOKEN;
    this.gatesUrl = (env.NYLORUN_GATES_URL || '').replace(/\/+$/, '');
    this.name = env.HARNESS_NAME;
    // The pod-host mode (docs/harness-api.md § 1; spec 004 § 9): a pod's host holds no harness
    // token; it joins with its pod's join parameters and connects with the host token.
    this.pod = env.NYLORUN_JOIN_TOKEN && !env.NYLORUN_HARNESS_TOKEN
      ? { sandboxId: env.NYLORUN_SANDBOX_ID, podUid: env.NYLORUN_POD_UID, joinToken: env.NYLORUN_JOIN_TOKEN,
          renewMs: positiveInt(Number(env.NYLORUN_HOST_RENEW_MS), 5 * 60 * 1000) }
      : null;
    this.conn = null;
    this.hello = null;
    this.current = null;
    this.leaseWaiting = false;
    this.closing = false;
  }

  start() {
    const credential = this.pod ? 'NYLORUN_JOIN_TOKEN' : 'NYLORUN_HARNESS_TOKEN';
    const missing = ['NYLORUN_CORE_URL', credential, 'NYLORUN_GATES_URL', 'HARNESS_NAME'].filter((k) => !process.env[k]);
    if (missing.length) {
      log(`missing environment: ${missing.join(', ')}`);
      process.exit(2);
    }
    if (!this.pod) return this.connect();
    this.joinPod()
      .then(() => {
        this.renewing = setInterval(() => this.renewHost(), this.pod.renewMs);
        this.connect();
      })
      .catch((err) => {
        log(`the pod's join failed: ${err.message}`);
        this.exit(1);
      });
  }

  /** The host's routes beside the upgrades: http://HOST:PORT/nylorun/harness/v1/host/VERB. */
  hostUrl(verb) {
    const url = new URL(this.coreUrl);
    url.protocol = url.protocol === 'wss:' ? 'https:' : 'http:';
    url.pathname = `/nylorun/harness/v1/host/${verb}`;
    return url.toString();
  }

  /** § 9: POST …/host/join with the pod's parameters; its host token is the bearer from now on. */
  async joinPod() {
    const { sandboxId, podUid, joinToken } = this.pod;
    const res = await httpPost(this.hostUrl('join'), { 'Content-Type': 'application/json' }, JSON.stringify({ sandboxId, podUid, joinToken }));
    const answer = res.status === 200 ? JSON.parse(res.text) : null;
    if (!isObject(answer) || typeof answer.hostToken !== 'string') throw new Error(`join answered HTTP ${res.status}`);
    this.token = answer.hostToken;
  }

  /** § 9: renew with the host token; a refused renewal means that token is over: join again. */
  async renewHost() {
    try {
      const res = await httpPost(this.hostUrl('renew'), { Authorization: `Bearer ${this.token}`, 'Content-Type': 'application/json' }, '{}');
      if (res.status !== 200) {
        log(`renewal refused (HTTP ${res.status}): joining again`);
        await this.joinPod();
      }
    } catch (err) {
      log(`renewal failed: ${err.message}`);
    }
  }

  connect() {
    const ws = new WebSocket(this.coreUrl, {
      headers: { Authorization: `Bearer ${this.token}`, 'Nylorun-Harness-Api': '1' },
      maxPayload: 64 * 1024 * 1024,
      perMessageDeflate: false,
    });
    this.conn = new CoreConnection(ws);
    ws.on('open', () => {
      log(`connected to ${this.coreUrl}`);
      this.sayHello();
    });
    ws.on('unexpected-response', (_req, res) => {
      log(`core refused the upgrade: HTTP ${res.statusCode}`);
      this.exit(1);
    });
    ws.on('message', (data, isBinary) => this.onFrame(data, isBinary));
    ws.on('ping', () => debug('<- ws ping'));
    ws.on('error', (err) => log(`socket error: ${err.message}`));
    ws.on('close', (code) => {
      log(`connection closed (${code})`);
      this.conn.failAll();
      this.exit(0);
    });
  }

  exit(code) {
    if (this.exiting) return;
    this.exiting = true;
    if (this.renewing) clearInterval(this.renewing);
    if (this.current) this.current.halt({ abortCalls: true });
    // Let stderr drain.
    setImmediate(() => process.exit(code));
  }

  shutdown(signal) {
    log(`${signal}: closing`);
    this.closing = true;
    if (this.current) this.current.halt({ abortCalls: true });
    try {
      if (this.conn && this.conn.open) this.conn.ws.close(1000, 'harness stopping');
    } catch (err) {
      log(err);
    }
    setTimeout(() => this.exit(0), 150).unref();
  }

  // --- frames -------------------------------------------------------------------------------

  onFrame(data, isBinary) {
    if (isBinary) {
      log('a binary frame from core, ignored');
      return;
    }
    const text = data.toString('utf8');
    debug('<-', text.length > 600 ? `${text.slice(0, 600)}…` : text);
    let frame;
    try {
      frame = JSON.parse(text);
    } catch {
      log(`a frame that is not JSON, ignored: ${text.slice(0, 120)}`);
      return;
    }
    if (!isObject(frame) || typeof frame.t !== 'string') {
      log(`a frame without a type, ignored: ${text.slice(0, 120)}`);
      return;
    }
    try {
      switch (frame.t) {
        case 'ping':
          this.conn.send({ t: 'ping' });
          break;
        case 'res':
          this.conn.onResponse(frame);
          break;
        case 'req':
          this.onCoreRequest(frame);
          break;
        case 'msg':
          this.onMessage(frame);
          break;
        case 'abort':
          if (this.conn.coreInFlight.has(frame.id)) this.conn.coreAborted.add(frame.id);
          break;
        default:
          log(`a frame of unknown type ${safeJson(frame.t)}, ignored`);
      }
    } catch (err) {
      log(`handling a ${frame.t} frame failed: ${err && err.stack ? err.stack : err}`);
    }
  }

  onCoreRequest(frame) {
    if (frame.id === undefined || frame.id === null) {
      log('a request from core without an id, ignored');
      return;
    }
    this.conn.coreInFlight.add(frame.id);
    // This harness declares no features, so it serves none of core's requests.
    const m = typeof frame.m === 'string' ? frame.m : safeJson(frame.m);
    this.conn.answer(frame.id, { ok: false, e: { code: 'invalid', message: `this harness does not serve ${m}` } });
  }

  onMessage(frame) {
    if (frame.m === 'cancel') {
      const p = isObject(frame.p) ? frame.p : {};
      this.onCancel(p).catch((err) => log(`cancel failed: ${err.message}`));
      return;
    }
    log(`a message ${safeJson(frame.m)} this harness does not know, ignored`);
  }

  // --- work: hello, lease, renew ------------------------------------------------------------

  async sayHello() {
    let answer;
    try {
      answer = await this.conn.request('hello', { api: API, name: this.name, version: VERSION, features: {} });
    } catch (err) {
      log(`hello refused: ${err.message}`);
      this.shutdown('hello refused');
      return;
    }
    if (!isObject(answer)) answer = {};
    if (answer.api !== undefined && answer.api !== API) log(`core answered hello with api ${safeJson(answer.api)}`);
    this.hello = answer;
    this.renewEveryMs = Math.max(10, positiveInt(answer.renewEveryMs, 30000));
    log(`hello: tenant ${safeJson(answer.tenantId)}, renew every ${this.renewEveryMs} ms`);
    this.ensureLease();
  }

  /** Keeps one lease waiting while no run is held (capacity 1). */
  ensureLease() {
    if (this.closing || this.exiting || !this.hello || this.current || this.leaseWaiting) return;
    if (!this.conn.open) return;
    this.leaseWaiting = true;
    this.conn.request('lease', {}).then(
      (answer) => {
        this.leaseWaiting = false;
        this.startRun(answer);
      },
      (err) => {
        this.leaseWaiting = false;
        if (!this.conn.open) return;
        log(`lease failed: ${err.message}; asking again`);
        setTimeout(() => this.ensureLease(), 250);
      },
    );
  }

  startRun(answer) {
    if (this.closing || this.exiting) return;
    const grant = isObject(answer) && isObject(answer.run) ? answer.run : null;
    const input = isObject(answer) && isObject(answer.input) ? answer.input : null;
    if (!grant || typeof grant.runId !== 'string' || !input) {
      log(`a lease answer without a run and its input: ${safeJson(answer).slice(0, 200)}`);
      if (grant && typeof grant.runId === 'string') {
        // Give the run back so that it is not held for nothing.
        this.conn.request('lease.release', { runId: grant.runId, reason: 'shutdown' }).catch((err) => log(err));
      }
      this.ensureLease();
      return;
    }
    const run = new Run(grant, input);
    this.current = run;
    log(`run ${run.runId}: turn ${run.turnId} segment ${run.segment}`);
    run.renewTimer = setInterval(() => this.renew(run), this.renewEveryMs);
    this.runTurn(run);
  }

  renew(run) {
    if (run.done || run.renewing) return;
    run.renewing = true;
    this.conn.request('lease.renew', { runId: run.runId }).then(
      (answer) => {
        run.renewing = false;
        if (run.done) return;
        if (isObject(answer) && answer.ok === true) {
          if (typeof answer.token === 'string' && answer.token) {
            run.token = answer.token;
            debug(`run ${run.runId}: new token`);
          }
        } else if (isObject(answer) && answer.ok === false) {
          log(`run ${run.runId}: renewal refused, stopping the run`);
          this.dropRun(run);
        } else log(`run ${run.runId}: a malformed renewal answer ${safeJson(answer)}`);
      },
      (err) => {
        run.renewing = false;
        if (run.done) return;
        if (RUN_OVER_CODES.has(err.code)) {
          log(`run ${run.runId}: renewal says ${err.code}, stopping the run`);
          this.dropRun(run);
        } else log(`run ${run.runId}: renewal failed: ${err.message}`);
      },
    );
  }

  /** The run is over without us: stop at once, no frames for it, drop its gate calls. */
  dropRun(run) {
    if (run.done) return;
    run.halt({ abortCalls: true });
    this.endRun(run);
  }

  endRun(run) {
    if (this.current === run) this.current = null;
    this.ensureLease();
  }

  // --- cancel -------------------------------------------------------------------------------

  async onCancel(p) {
    const run = this.current;
    if (!run || run.done || p.runId !== run.runId) {
      debug(`cancel for a run we do not hold (${safeJson(p.runId)}), ignored`);
      return;
    }
    const reason = p.reason;
    log(`run ${run.runId}: cancel (${safeJson(reason)})`);
    if (reason === 'cancel' || reason === 'deadline') {
      const calls = [...run.inflight.values()];
      run.halt({ abortCalls: false });
      await Promise.allSettled(calls.map((call) => this.cancelGateCall(run, call)));
      for (const call of calls) call.controller.abort();
      this.conn
        .request('output', { runId: run.runId, type: 'turn.failed', status: 'cancelled', state: run.state(), transcript: [] })
        .catch((err) => log(`run ${run.runId}: output refused: ${err.message}`));
      this.endRun(run);
      return;
    }
    // shutdown, ownership.lost (and any reason we do not know): give the run back, no output.
    run.halt({ abortCalls: true });
    const release = reason === 'ownership.lost' ? 'ownership.lost' : 'shutdown';
    this.conn
      .request('lease.release', { runId: run.runId, reason: release })
      .catch((err) => log(`run ${run.runId}: release refused: ${err.message}`));
    this.endRun(run);
  }

  async cancelGateCall(run, call) {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), CANCEL_POST_TIMEOUT_MS);
    try {
      const res = await httpPost(
        `${this.gatesUrl}/nylorun/v1/${call.route}/${pathSegment(call.key)}/cancel`,
        this.gateHeaders(run, call.key),
        '{}',
        controller.signal,
      );
      debug(`cancel ${call.route} ${call.key}: HTTP ${res.status}`);
    } catch (err) {
      log(`cancel ${call.route} ${call.key} failed: ${err.message}`);
    } finally {
      clearTimeout(timer);
    }
  }

  // --- gates --------------------------------------------------------------------------------

  gateHeaders(run, key) {
    const headers = { Authorization: `Bearer ${run.token}`, 'Content-Type': 'application/json' };
    if (key) headers['Idempotency-Key'] = key;
    if (run.traceparent) headers.traceparent = run.traceparent;
    if (run.traceparent && run.tracestate) headers.tracestate = run.tracestate;
    return headers;
  }

  /** POSTs to a gate route; a call with a key is tracked so a cancel can reach it. */
  async gatePost(run, route, body, key) {
    run.check();
    // A run's connection is gone (or going): the run ended with it, so no call starts.
    if (!this.conn.open) throw new Stopped();
    const controller = new AbortController();
    const tracked = key ? { route: route === 'model-calls' ? 'model-calls' : 'tool-calls', key, controller } : null;
    if (tracked) run.inflight.set(key, tracked);
    try {
      const res = await httpPost(`${this.gatesUrl}/nylorun/v1/${route}`, this.gateHeaders(run, key), JSON.stringify(body), controller.signal);
      const text = res.text;
      run.check();
      let json;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: res.status, json, text };
    } catch (err) {
      run.check();
      throw err;
    } finally {
      if (tracked && run.inflight.get(key) === tracked) run.inflight.delete(key);
    }
  }

  /** A request about a run: never sent once the run is stopped, and its answer dropped then. */
  async runRequest(run, m, p) {
    run.check();
    const answer = await this.conn.request(m, p);
    run.check();
    return answer;
  }

  // --- the turn -----------------------------------------------------------------------------

  async runTurn(run) {
    try {
      await this.turn(run);
    } catch (err) {
      if (err instanceof Stopped || run.done) return;
      if (!this.conn.open) {
        // The connection is lost, and the run with it (connection.lost): nothing to send.
        log(`run ${run.runId}: the connection to core is gone; the run ended with it`);
        run.halt({ abortCalls: true });
        return;
      }
      if (err instanceof RpcError && RUN_OVER_CODES.has(err.code)) {
        log(`run ${run.runId}: ${err.message}; the run is over`);
        this.dropRun(run);
        return;
      }
      if (err && err.runStale) {
        log(`run ${run.runId}: the gate says run_stale; the run is over`);
        this.dropRun(run);
        return;
      }
      log(`run ${run.runId}: the turn failed: ${err && err.stack ? err.stack : err}`);
      this.finish(run, {
        type: 'turn.failed',
        status: 'failed',
        error: { code: err instanceof RpcError ? err.code : 'internal', message: String(err && err.message ? err.message : err).slice(0, 500) },
        state: run.state(),
        transcript: [],
      });
    }
  }

  /** Sends the run's one output and takes the next lease. */
  finish(run, params) {
    if (run.done) return;
    run.halt({ abortCalls: true });
    const body = { runId: run.runId, ...params };
    this.conn.request('output', body).then(
      (answer) => debug(`run ${run.runId}: output answered ${safeJson(answer)}`),
      (err) => log(`run ${run.runId}: output refused: ${err.message}`),
    );
    log(`run ${run.runId}: ${params.type}${params.status ? ` (${params.status})` : ''}`);
    this.endRun(run);
  }

  async turn(run) {
    const input = run.input;
    const manifest = isObject(input.manifest) ? input.manifest : {};
    const checkpoint = run.checkpoint;
    const message = checkpoint.input;
    const isContinue = (isObject(message) && message.kind === 'continue') || input.type === 'approval.answer';
    if (isContinue && isObject(checkpoint.state) && Number.isFinite(checkpoint.state.steps)) run.baseSteps = checkpoint.state.steps;

    // Outcomes this segment already has: replayed without asking core again.
    const outcomes = new Map();
    if (Array.isArray(input.outcomes)) {
      for (const o of input.outcomes) if (isObject(o) && typeof o.effectId === 'string') outcomes.set(o.effectId, o);
    }

    const read = await this.runRequest(run, 'transcript.read', { runId: run.runId });
    const before = isObject(read) && Array.isArray(read.entries) ? read.entries : [];

    const mcp = await this.mcpFacts(run, manifest);
    const tools = offeredTools(manifest, mcp, input);

    const ctx = { run, manifest, tools, outcomes, before, after: before.slice(), keep: before.length };
    if (!isContinue) {
      for (const m of inputMessages(message)) ctx.after.push({ kind: 'input', turnId: run.turnId, input: m });
    } else {
      // A segment after a wait: finish the step that waited first.
      const waited = await this.resumeWaitingStep(ctx);
      if (waited) return;
    }

    for (;;) {
      if (run.steps >= MAX_STEPS) {
        this.finish(run, {
          type: 'turn.failed',
          status: 'failed',
          error: { code: 'max_steps', message: `more than ${MAX_STEPS} model steps in one segment` },
          state: run.state(),
          transcript: await this.updates(ctx),
        });
        return;
      }
      const step = run.steps;
      const invocationId = `step-${run.baseSteps + step}`;
      const model = await this.modelEffect(ctx, step, invocationId);
      if (model.status === 'pending' || model.status === 'uncertain') {
        this.finish(run, {
          type: 'turn.waiting',
          state: run.state(),
          transcript: await this.updates(ctx),
          effectIds: [model.effectId],
        });
        return;
      }
      run.steps += 1;
      const outcome = isObject(model.outcome) ? model.outcome : {};
      if (outcome.kind !== 'candidate') {
        const code = typeof outcome.code === 'string' ? outcome.code : 'model.failed';
        const msg = typeof outcome.message === 'string' ? outcome.message : 'the model call failed';
        this.finish(run, {
          type: 'turn.failed',
          status: 'failed',
          error: { code, message: msg },
          state: run.state(),
          transcript: await this.updates(ctx),
        });
        return;
      }
      const output = Array.isArray(outcome.output) ? outcome.output : [];
      ctx.after.push({
        kind: 'candidate',
        stepId: invocationId,
        effectId: model.effectId,
        output,
        finishReason: outcome.finishReason,
        ...(outcome.usage !== undefined ? { usage: outcome.usage } : {}),
      });
      const calls = toolCallsOf(output, step);
      if (calls.length === 0) {
        const text = output
          .filter((b) => isObject(b) && b.type === 'text' && typeof b.text === 'string')
          .map((b) => b.text)
          .join('');
        ctx.after.push({ kind: 'final', turnId: run.turnId, text });
        this.finish(run, { type: 'turn.completed', state: run.state(), transcript: await this.updates(ctx) });
        return;
      }
      const waiting = await this.toolStep(ctx, calls, invocationId);
      if (waiting.length) {
        this.finish(run, { type: 'turn.waiting', state: run.state(), transcript: await this.updates(ctx), effectIds: waiting });
        return;
      }
    }
  }

  /**
   * In a segment that follows a turn.waiting: when the transcript ends with a step whose tool
   * results are still waiting, ask those effects again (their ids are the ones the person
   * answered) and complete the step. Returns true when the segment ended (waiting again).
   */
  async resumeWaitingStep(ctx) {
    const { run } = ctx;
    const last = ctx.after[ctx.after.length - 1];
    if (!isObject(last) || last.kind !== 'tool-results' || !Array.isArray(last.results)) return false;
    if (!last.results.some((r) => isObject(r) && r.status === 'waiting')) return false;
    let candidate = null;
    for (let i = ctx.after.length - 2; i >= 0; i--) {
      if (isObject(ctx.after[i]) && ctx.after[i].kind === 'candidate') {
        candidate = ctx.after[i];
        break;
      }
    }
    const calls = candidate ? toolCallsOf(Array.isArray(candidate.output) ? candidate.output : [], 0) : [];
    const byCall = new Map(calls.map((c) => [c.callId, c]));
    const index = ctx.after.length - 1;
    ctx.keep = Math.min(ctx.keep, index);
    const results = [];
    const waiting = [];
    for (const r of last.results) {
      if (!isObject(r) || r.status !== 'waiting') {
        results.push(r);
        continue;
      }
      const call = byCall.get(r.callId) || { callId: r.callId, name: r.toolName, input: {} };
      const res = await this.toolEffect(ctx, call, last.stepId, r.effectId);
      if (res.status === 'pending' || res.status === 'uncertain') {
        waiting.push(res.effectId);
        results.push(r);
      } else results.push({ callId: r.callId, effectId: res.effectId, toolName: r.toolName, value: res.value });
    }
    ctx.after[index] = { ...last, results };
    await this.fitToolResults(ctx, index);
    if (waiting.length) {
      this.finish(run, { type: 'turn.waiting', state: run.state(), transcript: await this.updates(ctx), effectIds: waiting });
      return true;
    }
    return false;
  }

  // --- MCP discovery --------------------------------------------------------------------------

  async mcpFacts(run, manifest) {
    if (isObject(run.input.mcp)) return run.input.mcp;
    const servers = mcpServersOf(manifest);
    if (servers.length === 0) return null;
    const snapshotServers = [];
    const diagnostics = [];
    for (const server of servers) {
      const ref = { serverName: server.name, ...(server.agentId ? { agentId: server.agentId } : {}) };
      try {
        const connected = await this.gatePost(run, 'mcp/connect', { server: ref });
        if (connected.status !== 200 || (isObject(connected.json) && connected.json.ok === false)) {
          diagnostics.push({ server: server.name, stage: 'connect', status: connected.status, error: gateErrorOf(connected) });
          continue;
        }
        const listed = await this.gatePost(run, 'mcp/list', { server: ref });
        const json = isObject(listed.json) ? listed.json : {};
        const result = isObject(json.result) ? json.result : json;
        if (listed.status !== 200 || json.ok === false || !Array.isArray(result.tools)) {
          diagnostics.push({ server: server.name, stage: 'list', status: listed.status, error: gateErrorOf(listed) });
          continue;
        }
        const entry = { name: server.name, tools: result.tools };
        if (server.agentId) entry.agentId = server.agentId;
        const connectResult = isObject(connected.json) && isObject(connected.json.result) ? connected.json.result : {};
        if (typeof connectResult.instructions === 'string') entry.instructions = connectResult.instructions;
        snapshotServers.push(entry);
      } catch (err) {
        if (err instanceof Stopped) throw err;
        diagnostics.push({ server: server.name, stage: 'connect', error: { code: 'unavailable', message: err.message } });
      }
    }
    const answer = await this.runRequest(run, 'session.mcp', {
      runId: run.runId,
      snapshot: { snapshotSchemaVersion: 2, servers: snapshotServers },
      diagnostics,
    });
    return isObject(answer) && isObject(answer.mcp) ? answer.mcp : null;
  }

  // --- effects --------------------------------------------------------------------------------

  async modelEffect(ctx, step, invocationId) {
    const { run } = ctx;
    const effectId = `${run.turnId}:${run.segment}:model:${step}`;
    await this.filesForModel(ctx);
    const call = {
      prompt: buildPrompt(ctx),
      tools: ctx.tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
      executionId: run.sessionId,
    };
    const effect = { effectId, kind: 'model', context: { invocationId } };
    const requestHash = sha256Hex(canonicalJson({ ...effect, input: call }));

    const replay = ctx.outcomes.get(effectId);
    if (replay) return { status: 'completed', effectId, outcome: replay.outcome };

    const intent = await this.runRequest(run, 'effect.intent', { runId: run.runId, effect, requestHash });
    const status = isObject(intent) ? intent.status : undefined;
    if (status === 'completed') return { status, effectId, outcome: intent.outcome };
    if (status === 'pending' || status === 'uncertain') return { status, effectId };
    if (status !== 'execute') throw new RpcError('invalid', `an intent answer this harness does not know: ${safeJson(intent)}`);

    let res;
    try {
      res = await this.gatePost(run, 'model-calls', { effectId, invocationId, call }, effectId);
    } catch (err) {
      if (err instanceof Stopped) throw err;
      return this.recordModelError(ctx, effectId, { code: 'unavailable', message: `the Model Gate could not be reached: ${err.message}` });
    }
    if (res.status === 409 && gateErrorOf(res).code === 'run_stale') throw Object.assign(new Error('run_stale'), { runStale: true });
    if (res.status !== 200 || !isObject(res.json) || !isObject(res.json.outcome)) {
      const e = gateErrorOf(res);
      return this.recordModelError(ctx, effectId, { code: e.code, message: e.message });
    }
    const recorded = await this.runRequest(run, 'effect.outcome', { runId: run.runId, effectId, value: res.json.outcome });
    if (isObject(recorded) && (recorded.status === 'pending' || recorded.status === 'uncertain')) return { status: recorded.status, effectId };
    const outcome = isObject(recorded) && recorded.outcome !== undefined ? recorded.outcome : res.json.outcome;
    return { status: 'completed', effectId, outcome };
  }

  async recordModelError(ctx, effectId, error) {
    const { run } = ctx;
    const recorded = await this.runRequest(run, 'effect.outcome', { runId: run.runId, effectId, error });
    if (isObject(recorded) && recorded.status === 'completed' && recorded.outcome !== undefined) {
      return { status: 'completed', effectId, outcome: recorded.outcome };
    }
    // A model call whose fate is unknown is uncertain: the segment waits on it.
    return { status: 'uncertain', effectId };
  }

  /** Runs one step's tool calls, in order. Returns the ids of the effects it waits on. */
  async toolStep(ctx, calls, invocationId) {
    const results = [];
    const waiting = [];
    for (const call of calls) {
      const res = await this.toolEffect(ctx, call, invocationId);
      if (res.status === 'pending' || res.status === 'uncertain') {
        waiting.push(res.effectId);
        results.push({ callId: call.callId, effectId: res.effectId, toolName: call.name, status: 'waiting' });
      } else {
        results.push({ callId: call.callId, effectId: res.effectId, toolName: call.name, value: res.value });
      }
    }
    ctx.after.push({ kind: 'tool-results', stepId: invocationId, results });
    await this.fitToolResults(ctx, ctx.after.length - 1);
    return waiting;
  }

  async toolEffect(ctx, call, invocationId, knownEffectId) {
    const { run } = ctx;
    const tool = ctx.tools.find((t) => t.name === call.name);
    const effectId = knownEffectId || `${run.turnId}:${run.segment}:tool:${call.callId}`;
    if (!tool) {
      // No tool of that name was offered: nothing runs, the model is told.
      return { status: 'completed', effectId: null, value: { ok: false, error: { code: 'tool.unknown', message: `no tool is named ${call.name}` } } };
    }
    const effect = {
      effectId,
      kind: 'tool',
      toolName: call.name,
      target: tool.target,
      input: call.input,
      context: { callId: call.callId, invocationId },
    };
    const requestHash = sha256Hex(canonicalJson(effect));

    const replay = ctx.outcomes.get(effectId);
    if (replay) return { status: 'completed', effectId, value: replay.outcome };

    const intent = await this.runRequest(run, 'effect.intent', { runId: run.runId, effect, requestHash });
    const status = isObject(intent) ? intent.status : undefined;
    if (status === 'completed') return { status, effectId, value: intent.outcome };
    if (status === 'pending' || status === 'uncertain') return { status, effectId };
    if (status !== 'execute') throw new RpcError('invalid', `an intent answer this harness does not know: ${safeJson(intent)}`);

    let route;
    let body;
    if (tool.target.kind === 'mcp') {
      route = 'tool-calls';
      const server = { serverName: tool.target.server, ...(tool.target.agentId ? { agentId: tool.target.agentId } : {}) };
      body = { server, effectId, name: tool.target.tool, arguments: call.input };
    } else if (tool.target.kind === 'http') {
      route = 'http-calls';
      body = { effectId, tool: tool.target.tool, arguments: call.input };
    } else {
      // Runtime tools are core's: an intent for one is never answered execute.
      return this.recordToolError(ctx, effectId, { code: 'tool.unavailable', message: `core asked this harness to run ${call.name}` });
    }

    let res;
    for (let attempt = 1; ; attempt++) {
      try {
        res = await this.gatePost(run, route, body, effectId);
        break;
      } catch (err) {
        if (err instanceof Stopped) throw err;
        if (attempt >= LOST_HOP_ATTEMPTS) {
          return this.recordToolError(ctx, effectId, { code: 'unavailable', message: `the Tool Gate could not be reached: ${err.message}` });
        }
        // § 4: "When a gate hop is lost, ask the same intent again." Core counts the re-send.
        const again = await this.runRequest(run, 'effect.intent', { runId: run.runId, effect, requestHash });
        const st = isObject(again) ? again.status : undefined;
        if (st === 'completed') return { status: st, effectId, value: again.outcome };
        if (st === 'pending' || st === 'uncertain') return { status: st, effectId };
        if (st !== 'execute') throw new RpcError('invalid', `an intent answer this harness does not know: ${safeJson(again)}`);
      }
    }
    if (res.status === 409 && gateErrorOf(res).code === 'run_stale') throw Object.assign(new Error('run_stale'), { runStale: true });
    if (res.status !== 200 || !isObject(res.json) || typeof res.json.ok !== 'boolean') {
      return this.recordToolError(ctx, effectId, gateErrorOf(res));
    }
    let value = await this.storeParts(ctx, effectId, res.json);
    if (jsonBytes(value) > run.recordEntryBytes) value = await this.spill(ctx, effectId, value);
    const recorded = await this.runRequest(run, 'effect.outcome', { runId: run.runId, effectId, value });
    return { status: 'completed', effectId, value: isObject(recorded) && recorded.outcome !== undefined ? recorded.outcome : value };
  }

  async recordToolError(ctx, effectId, error) {
    const { run } = ctx;
    const recorded = await this.runRequest(run, 'effect.outcome', { runId: run.runId, effectId, error });
    const value = isObject(recorded) && recorded.outcome !== undefined ? recorded.outcome : { ok: false, error };
    return { status: 'completed', effectId, value };
  }

  // --- tool results that do not fit -----------------------------------------------------------

  /** Stores a value's whole JSON as an artifact and returns the preview that replaces it. */
  async spill(ctx, effectId, value) {
    const json = JSON.stringify(value);
    const bytes = Buffer.from(json, 'utf8');
    const name = `tool-result-${effectId.split(':').pop().replace(/[^A-Za-z0-9._-]/g, '_') || 'call'}.json`;
    try {
      const { artifactId } = await this.store(ctx, effectId, name, 'application/json', bytes, effectId);
      return { truncated: true, artifactId, size: bytes.length, preview: json.slice(0, PREVIEW_CHARS) };
    } catch (err) {
      if (err instanceof Stopped || (err instanceof RpcError && RUN_OVER_CODES.has(err.code))) throw err;
      log(`run ${ctx.run.runId}: storing ${effectId} failed: ${err.message}`);
      return { truncated: true, size: bytes.length, preview: json.slice(0, PREVIEW_CHARS), dropped: err.message.slice(0, 200) };
    }
  }

  /**
   * § 5b "An MCP image, audio or blob resource part is base64 in the answer. Store it, and send an
   * image to the model as a file only when turn.start.model reads images." This harness sends the
   * model no files: each stored part becomes a note naming its artifact.
   */
  async storeParts(ctx, effectId, value) {
    const content = isObject(value) && isObject(value.result) && Array.isArray(value.result.content) ? value.result.content : null;
    if (!content) return value;
    const parts = [];
    for (const [i, part] of content.entries()) {
      const blob = isObject(part) && (part.type === 'image' || part.type === 'audio') && typeof part.data === 'string'
        ? { data: part.data, mimeType: part.mimeType }
        : isObject(part) && part.type === 'resource' && isObject(part.resource) && typeof part.resource.blob === 'string'
          ? { data: part.resource.blob, mimeType: part.resource.mimeType }
          : null;
      if (!blob) {
        parts.push(part);
        continue;
      }
      const bytes = Buffer.from(blob.data, 'base64');
      const mimeType = typeof blob.mimeType === 'string' ? blob.mimeType : 'application/octet-stream';
      // Keyed by the call and the bytes' hash: a call run again writes nothing new.
      const key = `${effectId}:${i}:${crypto.createHash('sha256').update(bytes).digest('hex')}`;
      try {
        const { artifactId, version } = await this.store(ctx, effectId, `part-${i}`, mimeType, bytes, key);
        parts.push({ type: 'text', text: `[${part.type} ${mimeType}, ${bytes.length} bytes, stored as artifact ${artifactId} version ${version}]` });
      } catch (err) {
        if (err instanceof Stopped || (err instanceof RpcError && RUN_OVER_CODES.has(err.code))) throw err;
        parts.push({ type: 'text', text: `[${part.type} ${mimeType}, ${bytes.length} bytes, not stored: ${err.message.slice(0, 200)}]` });
      }
    }
    return { ...value, result: { ...value.result, content: parts } };
  }

  /**
   * How a message's files reach the model (spec 004 § 5: the gate refuses a text file as a media
   * part and a file past limits.modelFileBytes): a text file is inlined, read chunk by chunk at the
   * version the first answer named (§ 4b); a file too large is told of in a note; any other stays
   * a media part. Each input entry is resolved once; buildPrompt reads `ctx.files`.
   */
  async filesForModel(ctx) {
    const { run } = ctx;
    ctx.files = ctx.files || new WeakMap();
    for (const entry of ctx.after) {
      if (!isObject(entry) || entry.kind !== 'input' || ctx.files.has(entry)) continue;
      const message = entry.input;
      if (!isObject(message) || !Array.isArray(message.content)) continue;
      const parts = [];
      for (const part of message.content) {
        const ref = isObject(part) && isObject(part.reference) ? part.reference : null;
        if (!ref || typeof ref.artifactId !== 'string') {
          parts.push(part);
          continue;
        }
        const ask = { runId: run.runId, artifactId: ref.artifactId, length: 0 };
        if (Number.isInteger(ref.version)) ask.version = ref.version;
        let meta;
        try {
          const read = await this.runRequest(run, 'artifact.read', ask);
          meta = isObject(read) && isObject(read.artifact) ? read.artifact : null;
        } catch (err) {
          if (err instanceof Stopped) throw err;
          meta = null;
        }
        if (!meta) {
          parts.push({ type: 'text', text: `[a file I could not read: ${ref.artifactId}]` });
        } else if (typeof meta.contentType === 'string' && meta.contentType.startsWith('text/')) {
          parts.push({ type: 'text', text: await this.readText(run, meta) });
        } else if (Number(meta.size) > run.modelFileBytes) {
          parts.push({ type: 'text', text: `[a file too large to show you: ${meta.name} (${meta.contentType}, ${meta.size} bytes)]` });
        } else {
          parts.push(part);
        }
      }
      ctx.files.set(entry, { ...message, content: parts });
    }
  }

  /** A text artifact's bytes, every chunk at the version `meta` names (§ 4b). */
  async readText(run, meta) {
    const chunks = [];
    let offset = 0;
    for (let i = 0; i < 4096; i++) {
      const read = await this.runRequest(run, 'artifact.read', {
        runId: run.runId, artifactId: meta.artifactId, version: meta.version, offset, length: run.chunkBytes,
      });
      const bytes = Buffer.from(isObject(read) && typeof read.base64 === 'string' ? read.base64 : '', 'base64');
      chunks.push(bytes);
      offset += bytes.length;
      if (!isObject(read) || read.eof !== false || bytes.length === 0) break;
    }
    return Buffer.concat(chunks).toString('utf8');
  }

  /** Writes bytes as a file artifact with the call's effectId: one begin, or chunks and a commit. */
  async store(ctx, effectId, name, contentType, bytes, key) {
    const { run } = ctx;
    const begin = { runId: run.runId, op: 'begin', name, contentType, size: bytes.length, key, effectId };
    let artifactId;
    let version;
    if (bytes.length <= run.chunkBytes) {
      const written = await this.runRequest(run, 'artifact.write', { ...begin, base64: bytes.toString('base64') });
      artifactId = artifactIdOf(written);
      version = versionOf(written);
    } else {
      const opened = await this.runRequest(run, 'artifact.write', begin);
      artifactId = artifactIdOf(opened);
      version = versionOf(opened);
      if (!artifactId) {
        const uploadId = isObject(opened) ? opened.uploadId : undefined;
        if (!uploadId) throw new RpcError('invalid', `artifact.write begin answered no uploadId: ${safeJson(opened)}`);
        for (let offset = 0; offset < bytes.length; offset += run.chunkBytes) {
          const chunk = bytes.subarray(offset, Math.min(bytes.length, offset + run.chunkBytes));
          await this.runRequest(run, 'artifact.write', { runId: run.runId, op: 'chunk', uploadId, offset, base64: chunk.toString('base64') });
        }
        const committed = await this.runRequest(run, 'artifact.write', { runId: run.runId, op: 'commit', uploadId });
        artifactId = artifactIdOf(committed);
        version = versionOf(committed);
      }
    }
    return { artifactId, version };
  }

  /** Keeps a step's tool-results entry within recordEntryBytes, spilling its largest results. */
  async fitToolResults(ctx, index) {
    const { run } = ctx;
    const limit = run.recordEntryBytes - 1024; // room for the update around the entry
    const entry = ctx.after[index];
    const spilled = new Set();
    while (jsonBytes(entry) > limit) {
      let largest = null;
      for (const r of entry.results) {
        if (!isObject(r) || r.value === undefined || !r.effectId || spilled.has(r)) continue;
        if (isObject(r.value) && r.value.truncated === true) continue;
        if (!largest || jsonBytes(r.value) > jsonBytes(largest.value)) largest = r;
      }
      if (!largest) break;
      spilled.add(largest);
      largest.value = await this.spill(ctx, largest.effectId, largest.value);
    }
  }

  // --- transcript -----------------------------------------------------------------------------

  /** The segment's edits as TranscriptUpdates, each within recordEntryBytes. */
  async updates(ctx) {
    const { run } = ctx;
    const limit = run.recordEntryBytes;
    const entries = ctx.after.slice(ctx.keep);
    const updates = [];
    let base = ctx.keep;
    let current = [];
    for (const entry of entries) {
      const next = { keep: base, entries: [...current, entry], length: base + current.length + 1 };
      if (current.length && jsonBytes(next) > limit) {
        updates.push({ keep: base, entries: current, length: base + current.length });
        base += current.length;
        current = [entry];
      } else current.push(entry);
    }
    if (current.length || updates.length === 0) updates.push({ keep: base, entries: current, length: base + current.length });
    return updates;
  }
}

// ---------------------------------------------------------------------------------------------
// Reading TurnStart

function inputMessages(message) {
  if (message === undefined || message === null) return [];
  if (isObject(message) && message.kind === 'messages' && Array.isArray(message.messages)) return message.messages;
  if (isObject(message) && message.kind === 'continue') return [];
  return [message];
}

function mcpServersOf(manifest) {
  const raw = manifest.mcpServers;
  const out = [];
  if (Array.isArray(raw)) {
    for (const s of raw) {
      if (typeof s === 'string') out.push({ name: s });
      else if (isObject(s)) {
        const name = s.name ?? s.serverName ?? s.id;
        if (typeof name === 'string' && name) out.push({ name, agentId: typeof s.agentId === 'string' ? s.agentId : undefined });
      }
    }
  } else if (isObject(raw)) {
    for (const name of Object.keys(raw)) out.push({ name });
  }
  return out;
}

function toolName(full) {
  if (full.length <= TOOL_NAME_MAX) return full;
  return `${full.slice(0, TOOL_NAME_MAX - 9)}_${sha256Hex(full).slice(0, 8)}`;
}

/** The tools offered to the model, each with the target its calls run by. */
function offeredTools(manifest, mcp, input) {
  const tools = [];
  const names = new Set();
  const add = (name, description, inputSchema, target) => {
    let n = toolName(name);
    if (names.has(n)) n = `${n.slice(0, TOOL_NAME_MAX - 9)}_${sha256Hex(`${name}\u0000${canonicalJson(target)}`).slice(0, 8)}`;
    if (names.has(n)) return; // a name two tools would share: the second is not offered
    names.add(n);
    tools.push({
      name: n,
      description: typeof description === 'string' ? description : '',
      inputSchema: isObject(inputSchema) ? inputSchema : { type: 'object', properties: {} },
      target,
    });
  };
  if (isObject(mcp) && Array.isArray(mcp.servers)) {
    for (const server of mcp.servers) {
      if (!isObject(server) || typeof server.name !== 'string' || !Array.isArray(server.tools)) continue;
      for (const tool of server.tools) {
        if (!isObject(tool) || typeof tool.name !== 'string' || tool.enabled === false) continue;
        const target = { kind: 'mcp', server: server.name, tool: tool.name };
        if (typeof server.agentId === 'string') target.agentId = server.agentId;
        add(`${server.name}__${tool.name}`, tool.description, tool.inputSchema, target);
      }
    }
  }
  if (Array.isArray(manifest.tools)) {
    for (const tool of manifest.tools) {
      if (!isObject(tool) || tool.kind !== 'http' || typeof tool.name !== 'string') continue;
      add(tool.name, tool.description, tool.inputSchema, { kind: 'http', tool: tool.name });
    }
  }
  // Core's own tools, when the session's version turns them on: their intents are answered
  // completed by core and never reach a gate.
  if (isObject(input.memory)) {
    const readOnly = input.memory.access === 'read_only';
    add(
      'memory',
      'Your memory directory /memories: view it, or keep notes in it across sessions.',
      {
        type: 'object',
        properties: {
          command: { type: 'string', enum: readOnly ? ['view'] : ['view', 'create', 'str_replace', 'insert', 'delete', 'rename'] },
          path: { type: 'string' },
          view_range: { type: 'array', items: { type: 'integer' } },
          file_text: { type: 'string' },
          old_str: { type: 'string' },
          new_str: { type: 'string' },
          insert_line: { type: 'integer' },
          insert_text: { type: 'string' },
          old_path: { type: 'string' },
          new_path: { type: 'string' },
        },
        required: ['command'],
      },
      { kind: 'runtime', operation: 'memory' },
    );
  }
  if (isObject(input.agent) && input.agent.selfWake === true) {
    add(
      'schedule_wake',
      'Wake this session later: {in} or {at} with a note, or {cancel: true}.',
      {
        type: 'object',
        properties: { in: { type: 'string' }, at: { type: 'string' }, note: { type: 'string' }, cancel: { type: 'boolean' } },
      },
      { kind: 'runtime', operation: 'schedule_wake' },
    );
  }
  return tools;
}

function toolCallsOf(output, step) {
  const calls = [];
  output.forEach((block, i) => {
    if (!isObject(block) || block.type !== 'tool-call') return;
    const callId = typeof block.callId === 'string' && block.callId ? block.callId : `call-${step}-${i}`;
    const input = block.input !== undefined ? block.input : block.arguments !== undefined ? block.arguments : {};
    calls.push({ callId, name: typeof block.name === 'string' ? block.name : '', input });
  });
  return calls;
}

function gateErrorOf(res) {
  const e = isObject(res.json) && isObject(res.json.error) ? res.json.error : {};
  return {
    code: typeof e.code === 'string' ? e.code : `http_${res.status}`,
    message: typeof e.message === 'string' ? e.message : (res.text || '').slice(0, 200),
  };
}

function versionOf(answer) {
  if (!isObject(answer)) return undefined;
  if (Number.isInteger(answer.version)) return answer.version;
  if (isObject(answer.artifact) && Number.isInteger(answer.artifact.version)) return answer.artifact.version;
  return undefined;
}

function artifactIdOf(answer) {
  if (!isObject(answer)) return undefined;
  if (typeof answer.artifactId === 'string') return answer.artifactId;
  if (isObject(answer.artifact) && typeof answer.artifact.artifactId === 'string') return answer.artifact.artifactId;
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// The prompt: the system text, then the transcript as messages. It is built only from the
// manifest and the transcript, so a run that starts over asks the same model call.

function buildPrompt(ctx) {
  const { manifest, run } = ctx;
  const input = run.input;
  const system = [];
  if (typeof manifest.instructions === 'string' && manifest.instructions) system.push(manifest.instructions);
  else if (Array.isArray(manifest.instructions)) system.push(manifest.instructions.filter((s) => typeof s === 'string').join('\n'));
  if (Array.isArray(manifest.skills) && manifest.skills.length) {
    const lines = manifest.skills
      .filter((s) => isObject(s) && typeof s.name === 'string')
      .map((s) => `- ${s.name}${typeof s.description === 'string' ? `: ${s.description}` : ''}`);
    if (lines.length) system.push(`Skills:\n${lines.join('\n')}`);
  }
  if (isObject(input.memory) && typeof input.memory.instructions === 'string') system.push(input.memory.instructions);
  if (isObject(input.mcp) || ctx.tools.some((t) => t.target.kind === 'mcp')) {
    const servers = isObject(input.mcp) && Array.isArray(input.mcp.servers) ? input.mcp.servers : [];
    for (const s of servers) {
      if (isObject(s) && typeof s.instructions === 'string' && s.instructions) system.push(`MCP server ${s.name}:\n${s.instructions}`);
    }
  }
  const prompt = [];
  if (system.length) prompt.push({ role: 'system', content: system.join('\n\n') });
  if (isObject(input.memory) && typeof input.memory.index === 'string' && input.memory.index) {
    prompt.push({ role: 'user', content: `Your memory index:\n${input.memory.index}` });
  }
  for (const entry of ctx.after) {
    if (!isObject(entry)) continue;
    switch (entry.kind) {
      case 'compaction':
        prompt.push({ role: 'user', content: typeof entry.summary === 'string' ? entry.summary : canonicalJson(entry) });
        break;
      case 'input':
        prompt.push({ role: 'user', content: messageContent((ctx.files && ctx.files.get(entry)) || entry.input) });
        break;
      case 'candidate':
        prompt.push({ role: 'assistant', content: Array.isArray(entry.output) ? entry.output : [] });
        break;
      case 'tool-results':
        prompt.push({
          role: 'tool',
          content: (Array.isArray(entry.results) ? entry.results : []).map((r) => ({
            type: 'tool-result',
            callId: r.callId,
            name: r.toolName,
            output: r.status === 'waiting' ? { ok: false, error: { code: 'waiting', message: 'no result yet' } } : r.value,
          })),
        });
        break;
      default:
        break; // final: the candidate before it already holds its text
    }
  }
  return prompt;
}

function messageContent(message) {
  if (typeof message === 'string') return message;
  if (isObject(message)) {
    if (typeof message.text === 'string') return message.text;
    if (message.content !== undefined) return message.content;
  }
  return canonicalJson(message);
}

// ---------------------------------------------------------------------------------------------

if (require.main === module) {
  const harness = new Harness(process.env);
  process.on('SIGTERM', () => harness.shutdown('SIGTERM'));
  process.on('SIGINT', () => harness.shutdown('SIGINT'));
  process.on('uncaughtException', (err) => log(`uncaught: ${err && err.stack ? err.stack : err}`));
  process.on('unhandledRejection', (err) => log(`unhandled: ${err && err.stack ? err.stack : err}`));
  harness.start();
}

module.exports = { canonicalJson, offeredTools, toolName, Harness };
