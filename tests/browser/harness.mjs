// What the browser tests run against: a real gpuspyd on loopback (ports picked by the kernel and
// read from --port-file/--http-port-file, so parallel runs never clash), jobs streamed in by the
// real gpuspy-replay, and Debian's Chromium driven by playwright-core.
import {spawn, execFile} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {promisify} from 'node:util';

const run = promisify(execFile);

export function requireEnv(name) {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set (ctest sets it; see tests/browser/CMakeLists.txt)`);
  return v;
}

async function waitForFile(file, timeoutMs, isAlive) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : '';
    if (/^\d+$/.test(text) && Number(text) > 0) return Number(text);
    if (!isAlive()) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return 0;
}

export class Collector {
  static async start(gpuspyd) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gpuspy-browser-'));
    const log = fs.openSync(path.join(dir, 'gpuspyd.log'), 'w');
    const child = spawn(gpuspyd, [
      '--listen', '127.0.0.1:0', '--unix', '', '--port-file', path.join(dir, 'port'),
      '--http', '127.0.0.1:0', '--http-port-file', path.join(dir, 'http'),
      '--data-dir', path.join(dir, 'store'), '--log-level', 'warn',
    ], {stdio: ['ignore', log, log]});
    let exited = false;
    child.on('exit', () => { exited = true; });
    const c = new Collector(dir, child);
    c.grpcPort = await waitForFile(path.join(dir, 'port'), 15000, () => !exited);
    c.httpPort = await waitForFile(path.join(dir, 'http'), 15000, () => !exited);
    if (!c.grpcPort || !c.httpPort) {
      await c.stop();
      throw new Error('gpuspyd did not start: ' + fs.readFileSync(path.join(dir, 'gpuspyd.log'), 'utf8'));
    }
    return c;
  }

  constructor(dir, child) {
    this.dir = dir;
    this.child = child;
  }

  get url() { return `http://127.0.0.1:${this.httpPort}`; }

  async replay(replayBin, args) {
    const {stdout} = await run(replayBin, ['--collector', `127.0.0.1:${this.grpcPort}`, ...args], {timeout: 60000});
    return stdout;
  }

  // `gpuspy import` of trace files into job `job`.
  async importTraces(gpuspyBin, job, files) {
    const {stdout} = await run(gpuspyBin, ['--collector', `127.0.0.1:${this.grpcPort}`, 'import', '--job', job, ...files],
      {timeout: 60000});
    return stdout;
  }

  async json(apiPath) {
    const res = await fetch(this.url + apiPath);
    if (!res.ok) throw new Error(`${apiPath}: ${res.status} ${await res.text()}`);
    return res.json();
  }

  async stop() {
    if (this.child.exitCode === null) {
      const done = new Promise((r) => this.child.once('exit', r));
      this.child.kill('SIGTERM');
      await Promise.race([done, new Promise((r) => setTimeout(r, 10000))]);
      if (this.child.exitCode === null) this.child.kill('SIGKILL');
    }
    fs.rmSync(this.dir, {recursive: true, force: true});
  }
}

// Chromium as this machine allows it: root needs --no-sandbox, there is no GPU, and the network
// is closed, so everything that phones home is switched off (otherwise each start waits on
// refused connections).
export async function launchChromium() {
  // A missing playwright-core is a broken setup, not a reason to skip: let the import throw.
  const {chromium} = await import('playwright-core');
  const executablePath = process.env.CHROMIUM || '/usr/bin/chromium';
  if (!fs.existsSync(executablePath)) return {error: `no Chromium at ${executablePath} (apt-get install chromium)`};
  try {
    const browser = await chromium.launch({
      executablePath,
      timeout: 60000,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
        '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
    });
    return {browser};
  } catch (e) {
    return {error: `Chromium at ${executablePath} cannot start: ${e.message.split('\n')[0]}`};
  }
}
