// The viewer's entry point: a hash router (the daemon serves one page, so every view is a
// "#/..." address that survives reloads and can be shared), and the per-page context that stops
// a page's polling and requests when the user navigates away.
import {ApiError} from './api.js';
import {h, fill} from './dom.js';
import {setCrumbs, setLive, showError} from './layout.js';
import * as jobsPage from './jobs_page.js';
import * as jobPage from './job_page.js';
import * as stepPage from './step_page.js';
import * as exportPage from './export_page.js';
import * as diffPage from './diff_page.js';

// #/                              jobs
// #/job/<job>                     job overview
// #/job/<job>/step/<process>/<n>  step detail
// #/job/<job>/export              export
// #/diff?a=<run>&b=<run>          compare two runs, ranks or step ranges
const ROUTES = [
  {re: /^#?\/?$/, page: jobsPage, params: () => ({})},
  {re: /^#\/job\/([^/]+)\/?$/, page: jobPage, params: (m) => ({job: decodeURIComponent(m[1])})},
  {re: /^#\/job\/([^/]+)\/step\/(\d+)\/(\d+)\/?$/, page: stepPage,
    params: (m) => ({job: decodeURIComponent(m[1]), process: m[2], step: Number(m[3])})},
  {re: /^#\/job\/([^/]+)\/export\/?$/, page: exportPage, params: (m) => ({job: decodeURIComponent(m[1])})},
  {re: /^#\/diff\/?(?:\?(.*))?$/, page: diffPage, params: (m) => {
    const q = new URLSearchParams(m[1] || '');
    return {a: q.get('a') || '', b: q.get('b') || ''};
  }},
];

class PageContext {
  constructor() {
    this.controller = new AbortController();
    this.timers = [];
    this.cleanups = [];
  }
  get signal() { return this.controller.signal; }
  get closed() { return this.controller.signal.aborted; }
  // Runs `fn` every `ms` while the page is shown and the tab visible; one run at a time.
  every(ms, fn) {
    let running = false;
    const id = setInterval(async () => {
      if (running || document.hidden || this.closed) return;
      running = true;
      try { await fn(); } catch (e) { if (e.name !== 'AbortError') console.warn('poll failed', e); }
      finally { running = false; }
    }, ms);
    this.timers.push(id);
  }
  onClose(fn) { this.cleanups.push(fn); }
  close() {
    this.controller.abort();
    this.timers.forEach(clearInterval);
    this.cleanups.forEach((fn) => fn());
  }
}

let current = null;

async function route() {
  if (current) current.close();
  const ctx = (current = new PageContext());
  const root = document.getElementById('app');
  const hash = location.hash || '#/';
  const match = ROUTES.map((r) => ({r, m: hash.match(r.re)})).find((x) => x.m);
  setLive(false);
  if (!match) {
    setCrumbs({label: 'jobs', href: '#/'});
    showError(root, new ApiError(404, 'no page at ' + hash));
    return;
  }
  fill(root, h('p', {class: 'loading'}, 'Loading…'));
  try {
    await match.r.page.render(root, match.r.params(match.m), ctx);
  } catch (e) {
    if (e.name === 'AbortError' || ctx.closed) return;
    showError(root, e);
  }
}

window.addEventListener('hashchange', route);
route();
