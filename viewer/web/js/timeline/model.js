// The timeline's data, arranged for drawing: events in typed arrays, split into rows (per host
// thread: one row per NVTX depth, one for API calls; per CUDA stream: one for GPU work, one for
// sync records), each row sorted by start with a running maximum of end times so the visible
// slice of a row is found by binary search whatever the overlaps.
import {KIND, colorOf} from './colors.js';
import {shortKernelNames} from '../format.js';

export const ROW_H = {nvtx: 18, api: 20, other: 10, idle: 14, gpu: 26, sync: 8};

class Row {
  constructor(lane, kind, label) {
    this.lane = lane;
    this.kind = kind;
    this.label = label;
    this.height = ROW_H[kind];
    this.y = 0;
    this.list = [];
  }
  // Freezes the row: events sorted by start, columns copied out for locality while drawing.
  seal(start, end, color) {
    const ids = Int32Array.from(this.list).sort((a, b) => start[a] - start[b] || end[b] - end[a]);
    this.list = null;
    const n = ids.length;
    this.ids = ids;
    this.start = new Float64Array(n);
    this.end = new Float64Array(n);
    this.maxEnd = new Float64Array(n);
    this.color = new Uint8Array(n);
    let m = -Infinity;
    for (let j = 0; j < n; ++j) {
      const i = ids[j];
      this.start[j] = start[i];
      this.end[j] = end[i];
      this.color[j] = color[i];
      m = Math.max(m, end[i]);
      this.maxEnd[j] = m;
    }
  }
  // First position whose event may end at or after t (maxEnd is non-decreasing).
  firstEndingAfter(t) {
    let lo = 0, hi = this.maxEnd.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.maxEnd[mid] < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

export function buildModel(t) {
  const ev = t.events;
  const n = ev.start.length;
  const m = {
    n, strings: t.strings, lanesJson: t.lanes, wall: Number(t.wall_ns), origin: t.origin_ns,
    truncated: !!t.truncated,
    start: Float64Array.from(ev.start), end: Float64Array.from(ev.end),
    kind: Uint8Array.from(ev.kind), lane: Int32Array.from(ev.lane),
    name: Int32Array.from(ev.name), info: Int32Array.from(ev.info),
    corr: Float64Array.from(ev.corr), depth: Int32Array.from(ev.depth),
    color: new Uint8Array(n), counts: new Array(9).fill(0),
  };
  for (let i = 0; i < n; ++i) {
    m.color[i] = colorOf(m.kind[i], t.strings[m.name[i]], m.depth[i]);
    m.counts[m.kind[i]]++;
  }
  // What a box shows: kernels by their short names, kept distinct from one another (a cut-off
  // "void at::native::vecto…" would say the same for every elementwise kernel); others as named.
  const kernelNames = new Set();
  for (let i = 0; i < n; ++i) if (m.kind[i] === KIND.kernel) kernelNames.add(m.name[i]);
  const short = shortKernelNames([...kernelNames].map((id) => t.strings[id]));
  m.labels = t.strings.map((s, id) => (kernelNames.has(id) ? short.get(s) : s));
  m.labelWidth = new Map();  // string id -> its label's width in pixels (render.js measures once)

  // Rows per lane, created on first use.
  const laneRows = t.lanes.map(() => ({}));
  const maxDepth = t.lanes.map(() => -1);
  for (let i = 0; i < n; ++i) if (m.kind[i] === KIND.nvtx) maxDepth[m.lane[i]] = Math.max(maxDepth[m.lane[i]], m.depth[i]);
  const rowFor = (i) => {
    const lane = m.lane[i], k = m.kind[i], rows = laneRows[lane];
    let key;
    if (k === KIND.nvtx) key = 'nvtx' + m.depth[i];
    else if (k === KIND.api) key = 'api';
    else if (k === KIND.mark || k === KIND.overhead) key = 'other';
    else if (k === KIND.sync) key = 'sync';
    else key = 'gpu';
    if (!rows[key]) {
      const kind = key.startsWith('nvtx') ? 'nvtx' : key;
      const label = {nvtx: key === 'nvtx0' ? 'NVTX' : '', api: 'CUDA API', other: 'marks', sync: 'syncs', gpu: ''}[kind];
      rows[key] = new Row(lane, kind, label);
    }
    return rows[key];
  };
  for (let i = 0; i < n; ++i) rowFor(i).list.push(i);

  // Order: host threads (NVTX outermost first, then API, then marks), the GPU-idle row, then
  // streams by device and stream id.
  const threadOrder = (key) => (key.startsWith('nvtx') ? Number(key.slice(4)) : key === 'api' ? 1000 : 1001);
  const rows = [];
  const laneIdx = t.lanes.map((_, i) => i);
  const threads = laneIdx.filter((i) => t.lanes[i].kind === 'thread');
  const streams = laneIdx.filter((i) => t.lanes[i].kind === 'stream')
    .sort((a, b) => t.lanes[a].device - t.lanes[b].device || t.lanes[a].stream - t.lanes[b].stream);
  const laneFirstRow = new Map();
  for (const l of threads) {
    const keys = Object.keys(laneRows[l]).sort((a, b) => threadOrder(a) - threadOrder(b));
    laneFirstRow.set(l, rows.length);
    for (const k of keys) rows.push(laneRows[l][k]);
  }
  const idleRow = new Row(-1, 'idle', 'GPU idle');
  rows.push(idleRow);
  for (const l of streams) {
    laneFirstRow.set(l, rows.length);
    for (const k of ['gpu', 'sync']) if (laneRows[l][k]) rows.push(laneRows[l][k]);
  }
  for (const r of rows) if (r !== idleRow) r.seal(m.start, m.end, m.color);
  idleRow.list = null;
  // Idle intervals are disjoint, so end times are already their running maximum.
  const idle = [...(t.idle || [])].sort((a, b) => a[0] - b[0]);
  idleRow.start = Float64Array.from(idle, (x) => x[0]);
  idleRow.end = Float64Array.from(idle, (x) => x[1]);
  idleRow.maxEnd = idleRow.end;
  idleRow.cause = Uint8Array.from(idle, (x) => x[2]);
  idleRow.causes = t.idle_causes || [];
  idleRow.ids = new Int32Array(idle.length).fill(-1);

  let y = 0;
  for (const r of rows) { r.y = y; y += r.height + (r.kind === 'sync' || r.kind === 'other' ? 1 : 3); }
  m.rows = rows;
  m.height = y;
  m.idleRow = idleRow;
  m.laneFirstRow = laneFirstRow;
  m.rowOfEvent = new Int32Array(n);
  rows.forEach((r, ri) => { if (r !== idleRow) for (const i of r.ids) m.rowOfEvent[i] = ri; });
  // GPU rows span from the idle row to the last stream row: the band idle shading covers.
  m.gpuTop = idleRow.y;
  m.gpuBottom = y;
  m.apiRowOfLane = new Map();
  for (const l of threads) if (laneRows[l].api) m.apiRowOfLane.set(l, laneRows[l].api);
  m.blocking = (t.blocking || []).map(([s, e, lane]) => ({start: s, end: e, lane}));

  // Correlation: launch call <-> the GPU work it launched.
  m.gpuByCorr = new Map();
  m.apiByCorr = new Map();
  for (let i = 0; i < n; ++i) {
    const c = m.corr[i];
    if (!c) continue;
    const k = m.kind[i];
    if (k === KIND.api) m.apiByCorr.set(c, i);
    else if (k === KIND.kernel || k === KIND.memcpy || k === KIND.memset || k === KIND.graph) {
      if (!m.gpuByCorr.has(c)) m.gpuByCorr.set(c, i);
    }
  }
  let lo = Infinity, hi = -Infinity;
  for (let i = 0; i < n; ++i) { lo = Math.min(lo, m.start[i]); hi = Math.max(hi, m.end[i]); }
  m.extent = n ? [Math.min(lo, 0), Math.max(hi, m.wall)] : [0, Math.max(1, m.wall)];
  return m;
}

// Related event across host and GPU (the kernel a launch started, the launch behind a kernel).
export function relatedEvent(m, i) {
  const c = m.corr[i];
  if (!c) return -1;
  if (m.kind[i] === KIND.api) return m.gpuByCorr.has(c) ? m.gpuByCorr.get(c) : -1;
  return m.apiByCorr.has(c) ? m.apiByCorr.get(c) : -1;
}
