// The step timeline: a canvas with zoom (wheel, +/-, W/S), pan (drag, shift+wheel, A/D), hover
// details and click-to-select, where selecting a launch call shows the kernel it launched (and a
// kernel its launch). Exposes what it drew as window.__timelineStats for tests and for measuring.
import {h} from '../dom.js';
import {duration} from '../format.js';
import {showTooltip, hideTooltip, keyValues} from '../tooltip.js';
import {KIND} from './colors.js';
import {buildModel, relatedEvent} from './model.js';
import {drawTimeline, GUTTER, AXIS_H} from './render.js';

const MIN_SPAN_NS = 200;

export class Timeline {
  // json: the /timeline answer. onSelect({event, related}) when the selection changes.
  constructor(json, {onSelect} = {}) {
    const t0 = performance.now();
    this.m = buildModel(json);
    this.buildMs = performance.now() - t0;
    this.onSelect = onSelect || (() => {});
    this.sel = {selected: -1, related: -1, hover: -1};
    this.renders = 0;
    this.renderTimes = [];
    this.canvas = h('canvas', {class: 'timeline-canvas', tabindex: 0,
      'aria-label': 'timeline: wheel to zoom, drag to pan, click an event for details'});
    this.el = h('div', {class: 'timeline'}, this.canvas);
    this.ctx = this.canvas.getContext('2d');
    this.fit();
    this.bind();
    this.resizeObserver = new ResizeObserver(() => this.resize());
    this.resizeObserver.observe(this.el);
  }

  destroy() {
    this.resizeObserver.disconnect();
    window.removeEventListener('mouseup', this.onMouseUp);
    if (this.pending) cancelAnimationFrame(this.pending);
    hideTooltip();
  }

  // The whole step with a little margin.
  fit() {
    const pad = Math.max(1, this.m.wall * 0.01);
    this.view = {start: -pad, end: this.m.wall + pad};
    this.request();
  }

  zoomTo(start, end) {
    const [lo, hi] = this.m.extent;
    const margin = (hi - lo) * 0.1 + 1000;
    let span = Math.max(MIN_SPAN_NS, end - start);
    span = Math.min(span, hi - lo + 2 * margin);
    let s = (start + end) / 2 - span / 2;
    s = Math.min(Math.max(s, lo - margin), hi + margin - span);
    this.view = {start: s, end: s + span};
    this.request();
  }

  zoomBy(factor, atT) {
    const t = atT === undefined ? (this.view.start + this.view.end) / 2 : atT;
    this.zoomTo(t - (t - this.view.start) * factor, t + (this.view.end - t) * factor);
  }

  panBy(ns) { this.zoomTo(this.view.start + ns, this.view.end + ns); }

  // Centres an event (and keeps its neighbourhood visible) and selects it.
  reveal(i) {
    const s = this.m.start[i], e = this.m.end[i];
    const span = Math.max((e - s) * 8, MIN_SPAN_NS * 4);
    this.zoomTo((s + e) / 2 - span / 2, (s + e) / 2 + span / 2);
    this.select(i);
  }

  // The API calls made at `site` (a call site as evidence names it: the timeline's details say
  // "... at <site>"), in time order.
  callsAt(site) {
    const suffix = ' at ' + site;
    const m = this.m;
    const out = [];
    for (let i = 0; i < m.n; ++i) {
      // API calls made there, and host samples taken there (marks: a host_bound hot line).
      if ((m.kind[i] === KIND.api || m.kind[i] === KIND.mark) && m.strings[m.info[i]].endsWith(suffix)) out.push(i);
    }
    return out.sort((a, b) => m.start[a] - m.start[b]);
  }

  // The next call at `site` after the one selected (the first after the last), -1 if none.
  nextCallAt(site) {
    const calls = this.callsAt(site);
    if (!calls.length) return -1;
    const k = calls.indexOf(this.sel.selected);
    return calls[(k + 1) % calls.length];
  }

  select(i) {
    this.sel.selected = i;
    this.sel.related = i >= 0 ? relatedEvent(this.m, i) : -1;
    this.request();
    this.onSelect(i >= 0 ? {event: this.describe(i), related: this.sel.related >= 0 ? this.describe(this.sel.related) : null} : null);
  }

  describe(i) {
    const m = this.m;
    return {
      index: i,
      kind: ['kernel', 'memcpy', 'memset', 'sync', 'api', 'nvtx', 'mark', 'overhead', 'graph'][m.kind[i]],
      name: m.strings[m.name[i]],
      info: m.strings[m.info[i]],
      start: m.start[i],
      end: m.end[i],
      correlation: m.corr[i],
      lane: m.lanesJson[m.lane[i]].label,
    };
  }

  resize() {
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(400, this.el.clientWidth);
    const hgt = this.m.height + AXIS_H + 4;
    this.width = w;
    this.height = hgt;
    this.canvas.width = Math.round(w * dpr);
    this.canvas.height = Math.round(hgt * dpr);
    this.canvas.style.width = w + 'px';
    this.canvas.style.height = hgt + 'px';
    this.ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    this.render();
  }

  request() {
    if (this.pending) return;
    this.pending = requestAnimationFrame(() => { this.pending = 0; this.render(); });
  }

  render() {
    if (!this.width) return null;
    const s = drawTimeline(this.ctx, this.m, this.view, this.width, this.height, this.sel);
    this.renders++;
    this.renderTimes.push(s.ms);
    if (this.renderTimes.length > 200) this.renderTimes.shift();
    this.lastStats = s;
    this.publish(s);
    return s;
  }

  publish(s) {
    const m = this.m;
    window.__timelineStats = {
      events: m.n,
      kernels: m.counts[0], memcpys: m.counts[1], memsets: m.counts[2], apiCalls: m.counts[4], nvtxRanges: m.counts[5],
      lanes: m.lanesJson.length, rows: m.rows.length, idleIntervals: m.idleRow.start.length,
      truncated: m.truncated,
      buildMs: this.buildMs,
      renders: this.renders, lastRenderMs: s.ms, maxRenderMs: Math.max(...this.renderTimes),
      visibleEvents: s.visible, drawnKernels: s.byKind[0], rects: s.rects, mergedColumns: s.columns, labels: s.labels,
      labelBoxes: s.labelBoxes,  // [x, y, w, h] in canvas pixels of each label drawn
      laneLabels: s.laneLabels,  // the gutter's lane names as drawn, top to bottom
      view: {...this.view},
      selected: this.sel.selected >= 0 ? this.describe(this.sel.selected) : null,
      related: this.sel.related >= 0 ? this.describe(this.sel.related) : null,
    };
  }

  // Viewport coordinates of an event's middle (for tests driving the mouse, and for tooling).
  screenPosition(i) {
    const rect = this.canvas.getBoundingClientRect();
    const r = this.m.rows[this.m.rowOfEvent[i]];
    const scale = (this.width - GUTTER) / (this.view.end - this.view.start);
    const s = Math.max(this.m.start[i], this.view.start), e = Math.min(this.m.end[i], this.view.end);
    return {x: rect.left + GUTTER + ((s + e) / 2 - this.view.start) * scale, y: rect.top + AXIS_H + r.y + r.height / 2};
  }

  timeAt(clientX) {
    const rect = this.canvas.getBoundingClientRect();
    return this.view.start + (clientX - rect.left - GUTTER) / (this.width - GUTTER) * (this.view.end - this.view.start);
  }

  // The event under the pointer: the shortest one containing it, else the nearest within 3 px.
  hit(clientX, clientY) {
    const rect = this.canvas.getBoundingClientRect();
    const x = clientX - rect.left, y = clientY - rect.top - AXIS_H;
    if (x < GUTTER || y < 0) return {index: -1};
    const t = this.timeAt(clientX);
    const tol = 3 * (this.view.end - this.view.start) / (this.width - GUTTER);
    const row = this.m.rows.find((r) => y >= r.y - 1 && y <= r.y + r.height + 1);
    if (!row) return {index: -1};
    let best = -1, bestScore = Infinity;
    for (let j = row.firstEndingAfter(t - tol); j < row.start.length && row.start[j] <= t + tol; ++j) {
      if (row.end[j] < t - tol) continue;
      const inside = row.start[j] <= t && t <= row.end[j];
      const score = inside ? row.end[j] - row.start[j] : 1e18 + Math.min(Math.abs(row.start[j] - t), Math.abs(row.end[j] - t));
      if (score < bestScore) { bestScore = score; best = j; }
    }
    if (best < 0) return {index: -1};
    if (row === this.m.idleRow) return {index: -1, idle: {start: row.start[best], end: row.end[best], cause: row.causes[row.cause[best]]}};
    return {index: row.ids[best]};
  }

  bind() {
    const c = this.canvas;
    let drag = null;
    c.addEventListener('wheel', (e) => {
      e.preventDefault();
      if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) {
        const d = e.shiftKey ? e.deltaY : e.deltaX;
        this.panBy(d / (this.width - GUTTER) * (this.view.end - this.view.start));
      } else {
        this.zoomBy(Math.exp(e.deltaY * 0.0025), this.timeAt(e.clientX));
      }
    }, {passive: false});
    c.addEventListener('mousedown', (e) => {
      drag = {x: e.clientX, start: this.view.start, end: this.view.end, moved: false};
    });
    // On window, so a drag released outside the canvas still ends.
    this.onMouseUp = (e) => {
      if (!drag) return;
      const wasClick = !drag.moved;
      drag = null;
      if (wasClick && e.target === c) {
        const hit = this.hit(e.clientX, e.clientY);
        this.select(hit.index);
      }
    };
    window.addEventListener('mouseup', this.onMouseUp);
    c.addEventListener('mousemove', (e) => {
      if (drag) {
        const dx = e.clientX - drag.x;
        if (Math.abs(dx) > 3) drag.moved = true;
        if (drag.moved) {
          const ns = -dx / (this.width - GUTTER) * (drag.end - drag.start);
          this.zoomTo(drag.start + ns, drag.end + ns);
        }
        hideTooltip();
        return;
      }
      const hit = this.hit(e.clientX, e.clientY);
      if (hit.index !== this.sel.hover) { this.sel.hover = hit.index; this.request(); }
      if (hit.index >= 0) this.tooltip(e, hit.index);
      else if (hit.idle) {
        showTooltip(e.clientX, e.clientY, h('strong', {}, 'GPU idle: ' + hit.idle.cause.replace('_', ' ')),
          keyValues([['duration', duration(hit.idle.end - hit.idle.start)], ['at', duration(hit.idle.start)]]));
      } else hideTooltip();
    });
    c.addEventListener('mouseleave', () => { this.sel.hover = -1; hideTooltip(); this.request(); });
    c.addEventListener('dblclick', () => this.fit());
    c.addEventListener('keydown', (e) => {
      const span = this.view.end - this.view.start;
      const keys = {
        w: () => this.zoomBy(0.7), '+': () => this.zoomBy(0.7), '=': () => this.zoomBy(0.7),
        s: () => this.zoomBy(1 / 0.7), '-': () => this.zoomBy(1 / 0.7),
        a: () => this.panBy(-span * 0.2), ArrowLeft: () => this.panBy(-span * 0.2),
        d: () => this.panBy(span * 0.2), ArrowRight: () => this.panBy(span * 0.2),
        0: () => this.fit(), Escape: () => this.select(-1),
      };
      if (keys[e.key]) { e.preventDefault(); keys[e.key](); }
    });
  }

  tooltip(e, i) {
    const d = this.describe(i);
    const rel = relatedEvent(this.m, i);
    showTooltip(e.clientX, e.clientY, h('strong', {class: 'tip-name'}, d.name),
      keyValues([
        ['kind', d.kind], ['duration', duration(d.end - d.start)], ['start', duration(d.start) + ' into the step'],
        ['details', d.info], ['lane', d.lane], ['correlation', d.correlation || ''],
        [d.kind === 'api' ? 'launched' : 'launched by', rel >= 0 ? this.m.strings[this.m.name[rel]] : ''],
      ]),
      h('div', {class: 'muted'}, 'click to select'));
  }

  toolbar() {
    const b = (label, title, fn) => h('button', {type: 'button', class: 'tool', title, onclick: fn}, label);
    return h('div', {class: 'timeline-tools'},
      b('−', 'zoom out (S)', () => this.zoomBy(1 / 0.6)),
      b('+', 'zoom in (W)', () => this.zoomBy(0.6)),
      b('fit step', 'whole step (0, double-click)', () => this.fit()),
      h('span', {class: 'muted hint'}, 'wheel: zoom · drag: pan · click: details · click a launch: its kernel'));
  }
}
