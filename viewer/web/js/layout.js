// The page frame shared by every view: breadcrumbs, the live indicator, errors.
import {ApiError} from './api.js';
import {h, fill} from './dom.js';

// How often live pages ask for news: the injected library flushes every 100 ms, so 2 s keeps a
// capture visibly moving without loading a collector that serves many viewers.
export const POLL_MS = 2000;

export function setCrumbs(...items) {
  const nav = document.getElementById('crumbs');
  fill(nav, items.map((it, i) => [
    i ? h('span', {class: 'sep'}, '›') : null,
    it.href ? h('a', {href: it.href}, it.label) : h('span', {}, it.label),
  ]));
}

export function setLive(on, text) {
  const el = document.getElementById('live');
  el.className = on ? 'live on' : 'live';
  el.textContent = text || (on ? 'live' : '');
}

export function showError(root, err) {
  const status = err instanceof ApiError ? err.status : 0;
  fill(root, h('div', {class: 'error-box'},
    h('h2', {}, status === 404 ? 'Not found' : 'Something went wrong'),
    h('p', {}, err.message || String(err)),
    h('p', {}, h('a', {href: '#/'}, 'Back to jobs'))));
}

